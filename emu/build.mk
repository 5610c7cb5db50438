# What the emulators' tests build with make, so that no test calls a compiler or cargo itself.
# Included by the top-level Makefile; a test runs make -f emu/build.mk SSNAIL_BUILD=DIR TARGET.
#
#   make emu-asm-NAME        build/emu/asm/NAME.prg: the headless MEGA65's test program
#                            emu/mega65/tests/asm/NAME.s (ca65 for the 4510, linked by prg.cfg)
#   make capi-header-check   build/capi/header_check: emu/capi/tests/c/header_check.c compiled
#                            against include/ssnail.h and linked with the ssnail-capi library

SSNAIL_TOOLS ?= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)/
SSNAIL_BUILD ?= $(SSNAIL_TOOLS)build
CARGO ?= cargo
CARGO_TARGET_DIR ?= $(SSNAIL_TOOLS)target

EMU_ASM_DIR := $(SSNAIL_TOOLS)emu/mega65/tests/asm
EMU_ASM_OUT := $(SSNAIL_BUILD)/emu/asm

# (the PRG is the target's product, not an intermediate file make may remove)
.PRECIOUS: $(EMU_ASM_OUT)/%.prg
emu-asm-%: $(EMU_ASM_OUT)/%.prg ;

$(EMU_ASM_OUT)/%.prg: $(EMU_ASM_DIR)/%.s $(wildcard $(EMU_ASM_DIR)/*.inc) $(EMU_ASM_DIR)/prg.cfg
	@mkdir -p $(EMU_ASM_OUT)
	ca65 --cpu 4510 -I $(EMU_ASM_DIR) -o $(EMU_ASM_OUT)/$*.o $<
	ld65 -C $(EMU_ASM_DIR)/prg.cfg -o $@ $(EMU_ASM_OUT)/$*.o

# The C interface as a C host uses it. The library is cargo's (its own dependency tracking);
# CARGO_TARGET_DIR as cargo has it.
CAPI_DIR := $(SSNAIL_TOOLS)emu/capi
CAPI_OUT := $(SSNAIL_BUILD)/capi

.PHONY: capi-header-check
capi-header-check:
	cd $(SSNAIL_TOOLS) && $(CARGO) build --release -q -p ssnail-capi
	@mkdir -p $(CAPI_OUT)
	$(CC) -Wall -Werror -I $(CAPI_DIR)/include -o $(CAPI_OUT)/header_check $(CAPI_DIR)/tests/c/header_check.c \
		$(CARGO_TARGET_DIR)/release/libssnail_capi.a -lpthread -ldl -lm
