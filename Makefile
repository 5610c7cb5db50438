# SSNAIL tools: the workflow of the user's README.
#
#   make demo                 the whole system on real models (first run downloads and builds)
#   make test                 every test of the project
#   make bench [ROUNDS=n]     core emulator vs llama.cpp (built natively), side by side
#   make foo.ssnail           convert foo.gguf (architecture detected); foo.8mb/.64mb/.72mb.ssnail
#                             (rebuilt when WTYPE, CONTEXT_WINDOW, ATTICRAM, FALLBACK or TYPE change)
#   make foo.ssnail CORE=soft for the MEGA65 program's software core (a stock board); CORE=fpga default
#   make foo.all              every board size that fits; says which, fails if none
#   make foo.run PROMPT=… TOKENS=…   convert if needed, then emulate (also foo.64mb.run …)
#   make foo.chat [TEMP=0] [HW=1]    interactive session (also foo.64mb.chat …)
#   make foo.info             what the GGUF holds and what the converter would do
#   make foo.tokcheck [TEXT=file]    image tokenizer vs the GGUF's (also foo.64mb.tokcheck …)
#   make findmodels [QUERY=…] [MEM=8|64|72]
#   make fetch URL=…
#   make disk [IMAGES=…]      build/ssnail.d81 and build/sdcard/
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS=…]   fuzz every reader of hostile files
#   make xemu [XEMU_SRC=DIR]  build/xemu/xmega65: xemu with the SSNAIL core (docs/xemu.md)
#   make xemu-stock           stock xemu (xmega65) into cache/xemu/stock/ (XEMU_SRC=DIR or the shared tarball)
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
# (.foo.ssnail.flags beside it), rewritten only when they change: changing
# WTYPE, CONTEXT_WINDOW, ATTICRAM, FALLBACK, TYPE or CORE rebuilds the image.
# The memory size of foo.64mb.ssnail is 64 (8, 72 likewise), else ATTICRAM.
# The stamp is checked when make expands the image's prerequisites
# (secondary expansion), so an unchanged image is still "up to date".
mem_of = $(or $(patsubst .%mb,%,$(filter .8mb .64mb .72mb,$(suffix $(1)))),$(ATTICRAM))
image_flags = $(CONVERT_FLAGS) --mem-mb $(call mem_of,$(1))
stamp_of = $(dir $(1)).$(notdir $(1)).ssnail.flags
flags_stamp = $(shell f='$(call stamp_of,$(1))'; new='$(strip $(call image_flags,$(1)))'; \
	[ "$$(cat "$$f" 2>/dev/null)" = "$$new" ] || printf '%s\n' "$$new" > "$$f"; echo "$$f")
.SECONDEXPANSION:
# (Make may not see a stamp created during this run: an empty rule makes it.)
.%.ssnail.flags: ;

%.ssnail: %.gguf $$(call flags_stamp,$$*) $(SSNAIL)
	$(CONVERT) $< -o $@ $(call image_flags,$*)
%.8mb.ssnail: %.gguf $$(call flags_stamp,$$*.8mb) $(SSNAIL)
	$(CONVERT) $< -o $@ $(call image_flags,$*.8mb)
%.64mb.ssnail: %.gguf $$(call flags_stamp,$$*.64mb) $(SSNAIL)
	$(CONVERT) $< -o $@ $(call image_flags,$*.64mb)
%.72mb.ssnail: %.gguf $$(call flags_stamp,$$*.72mb) $(SSNAIL)
	$(CONVERT) $< -o $@ $(call image_flags,$*.72mb)

# A missing GGUF, said in words (make's own "No rule to make target" names
# the image, not the file that is missing).
%.gguf:
	@echo "$@: no such file: make $(basename $@).ssnail (and .run, .chat, .all ...) converts $@;" \
	  "put the GGUF there, or download one: make findmodels, make fetch URL=..." >&2; exit 1

# Every board size that fits: says what was built, fails when none fits.
# For a size that does not fit, the converter's first two lines (what it
# needs); when none fits, its whole advice for 72 MB.
%.all: %.gguf $(SSNAIL)
	@built=""; skipped=""; rm -f $*.all.log; \
	for s in 8 64 72; do \
	  if $(MAKE) -s --no-print-directory -f $(firstword $(MAKEFILE_LIST)) $*.$${s}mb.ssnail \
	      2>$*.all.err; then \
	    built="$$built $*.$${s}mb.ssnail"; \
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
	echo "$*.all: built (or up to date):$$built$${skipped:+; does not fit:$${skipped%,}}"

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
# `make disk` puts the demo's encoder image on the disk / SD folder unless told otherwise.
IMAGES ?= $(DEMO_ENCODER)
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
	@$(SSNAIL_TOOLS)tools/demo.sh $(DEMO_DECODER) $(SSNAIL_BUILD)

clean:
	rm -f *.ssnail .*.ssnail.flags

# The MEGA65 program and `make disk`.
include $(SSNAIL_TOOLS)mega65/build.mk
# xemu: the loader for the unchanged program, stock and patched xmega65.
include $(SSNAIL_TOOLS)xemu/build.mk
