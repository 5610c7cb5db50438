; softcall.s: the program's side of the software SSNAIL core (softcall.inc): the trampoline that
; maps the core's window, calls one of its entries and unmaps it, and the mailbox symbols for C.
; The trampoline is in RESIDENT, which crt0 copies to LOWRAM (linker/mega65.cfg): it keeps
; running while the window hides the program at $2000-$BFFF.

        .p4510
        .include        "softcall.inc"
        .export         _soft_call, _sc_magic, _sc_phys
        ; the mailbox, as C sees it (absolute addresses in page 0)
        .export         _sc_job : absolute = SC_JOB
        .export         _sc_memend : absolute = SC_MEMEND
        .export         _sc_budget : absolute = SC_BUDGET
        .export         _sc_result : absolute = SC_RESULT
        .export         _sc_error : absolute = SC_ERROR
        .export         _sc_faultpc : absolute = SC_FAULTPC

        .rodata
_sc_magic:      .byte   SC_MAGIC, SC_ABI        ; the core file must start with these
_sc_phys:       .dword  SC_PHYS                 ; where it is loaded
_sc_size:       .dword  SC_WIN_END - SC_WIN_START  ; and its largest size
_sc_tab:        .dword  SC_TAB                  ; where its tables go (after the window part)
_sc_tab_size:   .word   SC_TAB_SIZE             ; their length
_sc_hdr_len:    .byte   SC_HDR_LEN - SC_WIN_START  ; offset of the window part's length
        .export _sc_size, _sc_tab, _sc_tab_size, _sc_hdr_len

        .segment        "RESIDENT"

; void __fastcall__ soft_call(uint8_t entry): entry 0 = init, 1 = go, 2 = run (softcall.inc).
; MAP is all off outside this call (crt0), so mapping and unmapping need no saved state. Both
; halves' megabyte registers are set to 0 first: BASIC may leave other values, and they matter
; once a block is mapped.
_soft_call:
        sta     @entry
        asl     a                       ; 3 bytes per JMP
        clc
        adc     @entry
        adc     #<SC_ENTRY_INIT
        sta     @jsr+1
        lda     #>SC_ENTRY_INIT
        adc     #0
        sta     @jsr+2
        lda     #0                      ; megabytes of both halves = 0
        ldx     #$0F
        ldy     #0
        ldz     #$0F
        map
        lda     #SC_MAP_A               ; the window on
        ldx     #SC_MAP_X
        ldy     #SC_MAP_Y
        ldz     #SC_MAP_Z
        map
        eom
@jsr:   jsr     SC_ENTRY_INIT
        lda     #0                      ; the window off: nothing mapped, as crt0 left it
        tax
        tay
        taz
        map
        eom
        rts
@entry: .byte   0
