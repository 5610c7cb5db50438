# The MEGA65 program and its disk. Included by the top-level Makefile (or mega65/Makefile).
#
#   make mega65-prg          build/mega65/ssnail.prg and its chat overlay ssnail.ovl (+ map file,
#                            size report)
#   make mega65-core         build/mega65/ssnail.core: the software SSNAIL core (mega65/softcore/,
#                            linked on its own by linker/softcore.cfg, its check sums patched into
#                            its header by host/coresum.c; + map file, size report)
#   make disk [IMAGES=…]     build/ssnail.d81 (program, AUTOBOOT.C65, ssnail.ovl, ssnail.core, the
#                            images that fit);
#                            images that do not fit go to build/sdcard/SSNAIL/ with a note; that
#                            folder holds exactly the images asked for (earlier ones are removed);
#                            an image no board can run (needs more than 72 MB) is refused
#   make mega65-hosttest     the MEGA65 tokenizer and ASCII folder built for the PC (build/mega65/tokhost)
#   make mega65-softcore-test, mega65-softfloat-test, mega65-coshost, mega65-softhost,
#        mega65-softfloat-host   the test PRGs and PC builds the tests ask for (at the end of this file)
#   make mega65-bench        cycles per loaded sector, per tokenized line, per generated token in the
#                            headless MEGA65 (M65BENCH_ARGS=--smollm2 adds SmolLM2's vocabulary)
#   make mega65-clean

SSNAIL_TOOLS ?= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)/
SSNAIL_BUILD ?= $(SSNAIL_TOOLS)build
CARGO ?= cargo
CL65 ?= cl65
CC65 ?= cc65
CA65 ?= ca65
M65_DIR := $(SSNAIL_TOOLS)mega65
M65_OUT := $(SSNAIL_BUILD)/mega65
M65_PRG := $(M65_OUT)/ssnail.prg
M65_C := $(wildcard $(M65_DIR)/src/*.c)
M65_S := $(wildcard $(M65_DIR)/src/*.s)
M65_H := $(wildcard $(M65_DIR)/include/*.h)
M65_CFG := $(SSNAIL_TOOLS)linker/mega65.cfg
M65_CRT0 := $(SSNAIL_TOOLS)linker/crt0.s
# The program's and the core's shared view of the core: its window, header and mailbox.
M65_SOFTCORE_INC := $(M65_DIR)/include/softcore_abi.inc $(M65_DIR)/include/softcore_window.inc
D81_TOOL := $(SSNAIL_TOOLS)target/release/ssnail-d81

.PHONY: mega65-prg mega65-core mega65-hosttest mega65-bench mega65-clean disk

mega65-prg: $(M65_PRG)

M65_OBJ := $(M65_OUT)/obj
M65_OBJS := $(M65_OBJ)/crt0.o $(patsubst $(M65_DIR)/src/%,$(M65_OBJ)/%.o,$(M65_S) $(M65_C))
M65_CFLAGS := -t none --cpu 6502 -O -I $(M65_DIR)/include -I $(M65_DIR)/softcore

# The overlays (linker/mega65.cfg, docs/mega65-program.md "Overlays"): these files' code and
# read-only data run in the overlay region, one overlay at a time. The browser's (with the
# start-up checks and the loader) is carried by the PRG; the chat's is the file ssnail.ovl.
# Everything else, and every file's data and BSS, is resident. Code and read-only data get
# segments of their own (ld65 puts them one after the other): in one segment a function's local
# tables would lie between its label and its first instruction.
M65_OVL_BROWSE := main models loader hyppo fdc ovlload
M65_OVL_CHAT := chat sampler cosine
$(patsubst %,$(M65_OBJ)/%.c.s,$(M65_OVL_BROWSE)): M65_SEG := --code-name OVBROWSE --rodata-name OVBRO
$(patsubst %,$(M65_OBJ)/%.c.s,$(M65_OVL_CHAT)): M65_SEG := --code-name OVCHAT --rodata-name OVCHATRO

# cc65 has no MEGA65 target: -t none, our start-up code and linker config, none.lib's runtime.
# C is compiled for the 6502 (runs unchanged on the 45GS02); 45GS02 parts are ca65 .p4510.
# C goes through cc65 and then ca65 with the assembler file in the build folder: cl65 -c would
# write it next to the source, where builds running at the same time (the tests' own, in
# folders of their own) would overwrite and delete each other's.
$(M65_OBJ)/%.c.s: $(M65_DIR)/src/%.c $(M65_H) $(M65_DIR)/softcore/softcore.h $(M65_DIR)/build.mk
	@mkdir -p $(M65_OBJ)
	$(CC65) $(M65_CFLAGS) $(M65_SEG) -o $@ $<
$(M65_OBJ)/%.c.o: $(M65_OBJ)/%.c.s
	$(CA65) -t none -o $@ $<
$(M65_OBJ)/%.s.o: $(M65_DIR)/src/%.s $(M65_SOFTCORE_INC) $(M65_DIR)/include/ssnail_regs.inc \
		$(M65_DIR)/include/mega65_io.inc
	@mkdir -p $(M65_OBJ)
	$(CL65) -t none --asm-include-dir $(M65_DIR)/include -c -o $@ $<
$(M65_OBJ)/crt0.o: $(M65_CRT0) $(M65_DIR)/include/mega65_io.inc
	@mkdir -p $(M65_OBJ)
	$(CL65) -t none --asm-include-dir $(M65_DIR)/include -c -o $@ $<

# One link writes the PRG and the chat overlay (ld65 writes OVLHDR and OVLCHAT to %O.ovl); then
# the overlay file's check sums go into the PRG at ovl_sums (ovl.s; ld65's label file has it), so
# the program knows its own overlay from a damaged one or another build's.
M65_OVL := $(M65_OUT)/ssnail.ovl
M65_OVLSUM := $(M65_OUT)/ovlsum
$(M65_OVLSUM): $(M65_DIR)/host/ovlsum.c
	@mkdir -p $(M65_OUT)
	$(CC) -O2 -Wall -o $@ $<

$(M65_PRG): $(M65_OBJS) $(M65_CFG) $(M65_OVLSUM)
	$(CL65) -t none -C $(M65_CFG) -m $(M65_OUT)/ssnail.map -Ln $(M65_OUT)/ssnail.lbl \
		-o $@.tmp $(M65_OBJS) none.lib
	$(M65_OVLSUM) $@.tmp.ovl $@.tmp 0x$$(awk '$$3 == "._ovl_sums" { print $$2 }' $(M65_OUT)/ssnail.lbl)
	@mv $@.tmp.ovl $(M65_OVL)
	@mv $@.tmp $@
	@awk -v prg=$$(stat -c %s $@) -v ovl=$$(stat -c %s $(M65_OVL)) -f $(M65_DIR)/size-report.awk $(M65_OUT)/ssnail.map

$(M65_OVL): $(M65_PRG)

# The software core: its own link (own zero page, cc65 runtime, C stack), loaded by the program into
# chip RAM and called through a MAP window (mega65/include/softcore_abi.inc, softcore_window.inc).
M65_CORE := $(M65_OUT)/ssnail.core
M65_CORE_DIR := $(M65_DIR)/softcore
M65_CORE_OBJ := $(M65_OUT)/coreobj
# (exactadd.c: products added in C, which the core adds in exactsum65.s)
M65_CORE_OBJS := $(patsubst $(M65_CORE_DIR)/%,$(M65_CORE_OBJ)/%.o,\
	$(wildcard $(M65_CORE_DIR)/*.s) $(filter-out %/exactadd.c,$(wildcard $(M65_CORE_DIR)/*.c)))
M65_CORE_CFLAGS := -t none --cpu 6502 -Oirs -I $(M65_CORE_DIR) -I $(M65_DIR)/include
M65_CORE_CFG := $(SSNAIL_TOOLS)linker/softcore.cfg

mega65-core: $(M65_CORE)

$(M65_CORE_OBJ)/%.c.s: $(M65_CORE_DIR)/%.c $(wildcard $(M65_CORE_DIR)/*.h) $(M65_DIR)/include/mega65_io.h
	@mkdir -p $(M65_CORE_OBJ)
	$(CC65) $(M65_CORE_CFLAGS) -o $@ $<
$(M65_CORE_OBJ)/%.c.o: $(M65_CORE_OBJ)/%.c.s
	$(CA65) -t none -o $@ $<
$(M65_CORE_OBJ)/%.s.o: $(M65_CORE_DIR)/%.s $(M65_SOFTCORE_INC) $(M65_CORE_DIR)/quad.inc $(M65_CORE_DIR)/dmajob.inc \
		$(M65_CORE_DIR)/fn_tables.inc $(M65_DIR)/include/mega65_io.inc
	@mkdir -p $(M65_CORE_OBJ)
	$(CL65) -t none --asm-include-dir $(M65_DIR)/include --asm-include-dir $(M65_CORE_DIR) -c -o $@ $<

# After the link the check sums go into the core's header at SC_SUM_OFFSET (entry_m65.s exports
# it; ld65's label file lists it), so the program can tell a damaged core from a good one.
M65_CORESUM := $(M65_OUT)/coresum
$(M65_CORESUM): $(M65_DIR)/host/coresum.c
	@mkdir -p $(M65_OUT)
	$(CC) -O2 -Wall -o $@ $<

$(M65_CORE): $(M65_CORE_OBJS) $(M65_CORE_CFG) $(M65_CORESUM)
	$(CL65) -t none -C $(M65_CORE_CFG) -m $(M65_OUT)/ssnail-core.map -Ln $(M65_OUT)/ssnail-core.lbl \
		-o $@.tmp $(M65_CORE_OBJS) none.lib
	$(M65_CORESUM) $@.tmp 0x$$(awk '$$3 == ".SC_SUM_OFFSET" { print $$2 }' $(M65_OUT)/ssnail-core.lbl)
	@mv $@.tmp $@
	@awk -v file=$$(stat -c %s $@) -f $(M65_DIR)/core-size-report.awk $(M65_OUT)/ssnail-core.map

$(D81_TOOL): $(wildcard $(SSNAIL_TOOLS)disk/src/*.rs $(SSNAIL_TOOLS)disk/src/bin/*.rs) $(SSNAIL_TOOLS)disk/Cargo.toml
	cd $(SSNAIL_TOOLS) && $(CARGO) build --release -q -p ssnail-disk --bin ssnail-d81
	@touch $@

disk: $(M65_PRG) $(M65_CORE) $(D81_TOOL)
	$(D81_TOOL) build --out $(SSNAIL_BUILD)/ssnail.d81 --program $(M65_PRG) --overlay $(M65_OVL) --core $(M65_CORE) \
		--sdcard $(SSNAIL_BUILD)/sdcard $(IMAGES)

mega65-bench:
	cd $(SSNAIL_TOOLS) && $(CARGO) run --release -q -p ssnail-mega65-program --example m65bench -- $(M65BENCH_ARGS)

mega65-clean:
	rm -rf $(M65_OUT) $(SSNAIL_BUILD)/ssnail.d81 $(SSNAIL_BUILD)/sdcard

# ---- The C the tests build: every artefact here, once, with one flag set and one source list ----
#
#   make -C mega65 SSNAIL_BUILD=DIR [DEFS=…] TARGET    builds into DIR/mega65/; TARGET is one of
#     mega65-hosttest (tokhost), mega65-coshost, mega65-softhost, mega65-softfloat-host:
#         the program's and the software core's C built for the PC (M65_HOST_CFLAGS)
#     mega65-softcore-test: softcore_test.prg (+ .hi, .map, .lbl, .dbg), the whole software core as a
#         test PRG (testprg/softcore_test.c; the core's M65_CORE_CFLAGS)
#     mega65-softfloat-test: softfloat_test.prg, the core's arithmetic as a test PRG
#         (testprg/softfloat_test.c; the core's M65_CORE_CFLAGS)
#   DEFS: -D flags for the C and the ca65 sources (e.g. -DSC_C_GEMV, -DSF_PORTABLE_MUL); a build
#   with other DEFS goes to another SSNAIL_BUILD.
DEFS ?=
M65_HOST_CFLAGS := -O2 -Wall -Wextra -Werror -I $(M65_DIR)/include -I $(M65_CORE_DIR) -I $(M65_DIR)/host
M65_HOST_DEPS := $(M65_H) $(wildcard $(M65_CORE_DIR)/*.h) $(wildcard $(M65_DIR)/host/*.h)
M65_SOFTCORE_C := softcore.c softvec.c softgemv.c softattn.c softfloat.c exactsum.c exactadd.c
M65_TOKHOST_SRC := host/tokhost.c host/far_host.c host/imgmem_host.c src/tokenizer.c src/fold.c
M65_COSHOST_SRC := host/coshost.c src/cosine.c
M65_SOFTHOST_SRC := host/softhost.c host/softmem_host.c $(addprefix softcore/,$(M65_SOFTCORE_C))
M65_SOFTFLOAT_HOST_SRC := host/softfloat_host.c host/softfloat_ops.c softcore/softfloat.c softcore/exactsum.c \
	softcore/exactadd.c

.PHONY: mega65-coshost mega65-softhost mega65-softfloat-host mega65-softcore-test mega65-softfloat-test
mega65-hosttest: $(M65_OUT)/tokhost
mega65-coshost: $(M65_OUT)/coshost
mega65-softhost: $(M65_OUT)/softhost
mega65-softfloat-host: $(M65_OUT)/softfloat_host

# $(call m65_host,NAME,SOURCES): the PC build NAME of SOURCES (relative to mega65/).
define m65_host
$(M65_OUT)/$(1): $(addprefix $(M65_DIR)/,$(2)) $(M65_HOST_DEPS)
	@mkdir -p $(M65_OUT)
	$(CC) $(M65_HOST_CFLAGS) $(DEFS) -o $$@ $(addprefix $(M65_DIR)/,$(2))
endef
$(eval $(call m65_host,tokhost,$(M65_TOKHOST_SRC)))
$(eval $(call m65_host,coshost,$(M65_COSHOST_SRC)))
$(eval $(call m65_host,softhost,$(M65_SOFTHOST_SRC)))
$(eval $(call m65_host,softfloat_host,$(M65_SOFTFLOAT_HOST_SRC)))

# The test PRGs: cc65 then ca65 with every file in the build folder, as the program's and the
# core's C above.
M65_TEST_OBJ := $(M65_OUT)/testobj
M65_TESTPRG := $(M65_DIR)/testprg
$(M65_TEST_OBJ)/%.c.s: $(M65_CORE_DIR)/%.c $(wildcard $(M65_CORE_DIR)/*.h) $(M65_DIR)/include/ssnail_regs.h \
		$(M65_DIR)/include/mega65_io.h
	@mkdir -p $(M65_TEST_OBJ)
	cc65 $(M65_CORE_CFLAGS) -g $(DEFS) -o $@ $<
$(M65_TEST_OBJ)/%.c.s: $(M65_TESTPRG)/%.c $(wildcard $(M65_CORE_DIR)/*.h) $(M65_DIR)/include/ssnail_regs.h \
		$(M65_DIR)/include/mega65_io.h
	@mkdir -p $(M65_TEST_OBJ)
	cc65 $(M65_CORE_CFLAGS) -g -I $(M65_DIR)/host $(DEFS) -o $@ $<
$(M65_TEST_OBJ)/%.c.s: $(M65_DIR)/host/%.c $(wildcard $(M65_DIR)/host/*.h) $(wildcard $(M65_CORE_DIR)/*.h) \
		$(M65_DIR)/include/mega65_io.h
	@mkdir -p $(M65_TEST_OBJ)
	cc65 $(M65_CORE_CFLAGS) -g -I $(M65_DIR)/host $(DEFS) -o $@ $<
$(M65_TEST_OBJ)/%.c.o: $(M65_TEST_OBJ)/%.c.s
	ca65 -t none -g -o $@ $<
# The core's ca65 sources for the test PRGs, which hold the core in bank 0 with no MAP window
# (SC_UNMAPPED: softcore_window.inc).
$(M65_TEST_OBJ)/%.s.o: $(M65_CORE_DIR)/%.s $(M65_CORE_DIR)/quad.inc $(M65_CORE_DIR)/dmajob.inc $(M65_CORE_DIR)/fn_tables.inc \
		$(M65_SOFTCORE_INC) $(M65_DIR)/include/mega65_io.inc
	@mkdir -p $(M65_TEST_OBJ)
	ca65 -t none -g -I $(M65_CORE_DIR) -I $(M65_DIR)/include -D SC_UNMAPPED $(DEFS) -o $@ $<
$(M65_TEST_OBJ)/crt0.o: $(M65_TESTPRG)/crt0.s $(M65_DIR)/include/mega65_io.inc
	@mkdir -p $(M65_TEST_OBJ)
	ca65 -t none -g -I $(M65_DIR)/include -o $@ $<

# softcore_test.prg: the core's C, its ca65 hot paths (softgemv65.s: the Q8_0/Q4_0 block loop;
# softquant65.s: the input quantiser; softvec65.s: single multiply/add and the vector kernels;
# exactsum65.s, exactround65.s: the float GEMV's exact sum and the start of its rounding; unless
# DEFS has -DSC_C_GEMV, which builds the C
# definition alone), the program's softmem_m65.s over attic RAM, lmul65.s (cc65's 32-bit multiply
# on the hardware multiplier, the runtime in both builds) and the driver.
M65_SCT_C := softcore softvec fntab softgemv softattn softfloat exactsum \
	$(if $(findstring SC_C_GEMV,$(DEFS)),exactadd)
M65_SCT_S := $(if $(findstring SC_C_GEMV,$(DEFS)),,softgemv65 softquant65 softvec65 exactsum65 exactround65 softstep65)
M65_SCT_OBJS := $(M65_TEST_OBJ)/crt0.o $(M65_TEST_OBJ)/softcore_test.c.o \
	$(M65_TEST_OBJ)/softmem_m65.s.o $(M65_TEST_OBJ)/lmul65.s.o \
	$(M65_SCT_C:%=$(M65_TEST_OBJ)/%.c.o) $(M65_SCT_S:%=$(M65_TEST_OBJ)/%.s.o)
M65_SCT := $(M65_OUT)/softcore_test
mega65-softcore-test: $(M65_SCT).prg
$(M65_SCT).prg: $(M65_SCT_OBJS) $(M65_TESTPRG)/softcore_test.cfg
	ld65 -C $(M65_TESTPRG)/softcore_test.cfg -m $(M65_SCT).map -Ln $(M65_SCT).lbl --dbgfile $(M65_SCT).dbg \
		-o $@ $(M65_SCT_OBJS) none.lib

# softfloat_test.prg: softfloat.c and exactsum.c with the record driver (and exactround65.s, the
# start of exactsum.c's rounding in cc65 builds, unless DEFS has -DSC_C_GEMV).
M65_SFT_OBJS := $(M65_TEST_OBJ)/crt0.o $(addprefix $(M65_TEST_OBJ)/,softfloat.c.o exactsum.c.o exactadd.c.o \
	softfloat_ops.c.o softfloat_test.c.o $(if $(findstring SC_C_GEMV,$(DEFS)),,exactround65.s.o))
mega65-softfloat-test: $(M65_OUT)/softfloat_test.prg
$(M65_OUT)/softfloat_test.prg: $(M65_SFT_OBJS) $(M65_TESTPRG)/softfloat_test.cfg
	ld65 -C $(M65_TESTPRG)/softfloat_test.cfg -o $@ $(M65_SFT_OBJS) none.lib
