# xemu, the independent MEGA65 emulator, for running the MEGA65 program outside the headless
# MEGA65 (docs/xemu.md). Included by the top-level Makefile.
#
#   make xemu-onboard     build/xemu/onboard.prg: the loader that starts ssnail.prg in xemu
#                         without the MEGA65 ROM (xemu/onboard.s)
#   make xemu-stock       stock xmega65 into cache/xemu/stock/ (XEMU_SRC=DIR, else the shared
#                         xemu-40dfef0d tarball beside the repository)

SSNAIL_TOOLS ?= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)/
SSNAIL_BUILD ?= $(SSNAIL_TOOLS)build
SSNAIL_CACHE ?= $(SSNAIL_TOOLS)cache
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
