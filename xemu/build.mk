# xemu, the independent MEGA65 emulator, for running the MEGA65 program outside the headless
# MEGA65 (docs/xemu.md). Included by the top-level Makefile.
#
#   make xemu-onboard     build/xemu/onboard.prg: the loader that starts ssnail.prg in xemu
#                         without the MEGA65 ROM (xemu/onboard.s)
#   make xemu-stock       stock xmega65 into cache/xemu/stock/ (XEMU_SRC=DIR, else the shared
#                         xemu-40dfef0d tarball beside the repository, else commit 40dfef0d
#                         fetched from xemu's git repository: tools/build-xemu.sh says how)
#   make xemu [XEMU_SRC=DIR]  build/xemu/xmega65: xemu with the SSNAIL core (ssnail-capi + the patch)

SSNAIL_TOOLS ?= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)/
SSNAIL_BUILD ?= $(SSNAIL_TOOLS)build
SSNAIL_CACHE ?= $(SSNAIL_TOOLS)cache
CARGO ?= cargo
XEMU_OUT := $(SSNAIL_BUILD)/xemu
XEMU_ONBOARD := $(XEMU_OUT)/onboard.prg

.PHONY: xemu-onboard xemu-stock

xemu-onboard: $(XEMU_ONBOARD)

$(XEMU_ONBOARD): $(SSNAIL_TOOLS)xemu/onboard.s $(SSNAIL_TOOLS)xemu/onboard.cfg
	@mkdir -p $(XEMU_OUT)
	ca65 -o $(XEMU_OUT)/onboard.o $<
	ld65 -C $(SSNAIL_TOOLS)xemu/onboard.cfg -o $@.tmp $(XEMU_OUT)/onboard.o
	@mv $@.tmp $@

xemu-stock:
	$(SSNAIL_TOOLS)tools/build-xemu.sh $(SSNAIL_CACHE)/xemu/stock

# Patched xemu with the SSNAIL core (xemu/ssnail-xemu-40dfef0d.patch, GPL-2 like xemu) linked in
# from the ssnail-capi static library: build/xemu/xmega65. XEMU_SRC=DIR: the user's xemu checkout
# (commit 40dfef0d); without it, the source tools/build-xemu.sh finds (shared tarball or fetch).
XEMU_PATCH := $(SSNAIL_TOOLS)xemu/ssnail-xemu-40dfef0d.patch
SSNAIL_CAPI_LIB := $(SSNAIL_TOOLS)target/release/libssnail_capi.a

.PHONY: xemu
xemu:
	cd $(SSNAIL_TOOLS) && $(CARGO) build --release -q -p ssnail-capi
	XEMU_SRC="$(XEMU_SRC)" SSNAIL_CAPI_LIB=$(SSNAIL_CAPI_LIB) \
		SSNAIL_CAPI_INCLUDE=$(SSNAIL_TOOLS)emu/capi/include \
		$(SSNAIL_TOOLS)tools/build-xemu.sh $(XEMU_OUT) $(XEMU_PATCH)
	@echo "xemu with SSNAIL: $(XEMU_OUT)/xmega65 -ssnailmib 72 (docs/xemu.md)"
