# scm65.mk: the scm65 test PRG — the whole software SSNAIL core (softcore/, with the program's
# softmem_m65.s over attic RAM) and a small driver (host/scm65.c, host/sfm65_crt0.s,
# host/scm65.cfg; host/scm65_inc/softcall.inc: no MAP window) — for the headless-MEGA65
# test of the interpreter and the softbench example. Objects go to OUT, so builds with other
# DEFS (e.g. -DSC_C_GEMV) can sit side by side:
#     make -s -C mega65 -f host/scm65.mk OUT=/tmp/scm65 [DEFS=...]
OUT ?= scm65-build
DEFS ?=
CORE_C := softcore softvec fntab softgemv softattn softfloat exactsum
# The ca65 hot paths (softgemv65.s: the Q8_0/Q4_0 block loop; softquant65.s: the input
# quantiser; softvec65.s: single multiply/add and the vector kernels; exactsum65.s: the float
# GEMV's exact sum) replace their C unless DEFS has -DSC_C_GEMV, which builds the C definition
# alone
CORE_S := $(if $(findstring SC_C_GEMV,$(DEFS)),,softgemv65 softquant65 softvec65 exactsum65)
HEADERS := $(wildcard softcore/*.h) include/ssnail_regs.h include/mega65_io.h
CC65FLAGS := -t none --cpu 6502 -Oirs -g -I softcore -I include

# lmul65.s (cc65's 32-bit multiply on the hardware multiplier) is the runtime, in both builds
OBJS := $(OUT)/crt0.o $(OUT)/scm65.o $(OUT)/softmem_m65_s.o $(OUT)/lmul65_s.o \
	$(CORE_C:%=$(OUT)/%.o) $(CORE_S:%=$(OUT)/%_s.o)

$(OUT)/scm65.prg: $(OBJS) host/scm65.cfg
	ld65 -C host/scm65.cfg -m $(OUT)/scm65.map -Ln $(OUT)/scm65.lbl --dbgfile $(OUT)/scm65.dbg -o $@ $(OBJS) none.lib

$(OUT)/%.s: softcore/%.c $(HEADERS) | $(OUT)
	cc65 $(CC65FLAGS) $(DEFS) -o $@ $<
$(OUT)/scm65.s: host/scm65.c $(HEADERS) | $(OUT)
	cc65 $(CC65FLAGS) $(DEFS) -o $@ $<
$(OUT)/%.o: $(OUT)/%.s
	ca65 -t none -g -o $@ $<
$(OUT)/%_s.o: softcore/%.s softcore/quad.inc softcore/fn_tables.inc include/mega65_io.inc host/scm65_inc/softcall.inc | $(OUT)
	ca65 -t none -g -I softcore -I host/scm65_inc -I include $(DEFS) -o $@ $<
$(OUT)/softmem_m65_s.o: softcore/softmem_m65.s softcore/quad.inc host/scm65_inc/softcall.inc | $(OUT)
	ca65 -t none -g -I host/scm65_inc -I include -o $@ $<
$(OUT)/crt0.o: host/sfm65_crt0.s | $(OUT)
	ca65 -t none -g -o $@ $<
$(OUT):
	mkdir -p $@

.PHONY: clean
clean:
	rm -rf $(OUT)
