; ovl.s: the overlays' link numbers for C (overlay.h, linker/mega65.cfg) and the place for the
; chat overlay file's check sums, which build.mk writes into the PRG after the link
; (host/ovlsum.c, at ovl_sums from ld65's label file). Each overlay is its code segment and,
; right after it in the same memory, its read-only data segment.

        .include        "mega65_io.inc"         ; OVL_MAGIC, OVL_VERSION, OVL_LEN, OVL_HEADER_LEN
        .export         _ovl_region, _ovl_chip, _ovl_size, _ovl_sums
        .export         OVL_BROWSE_LEN, OVL_CHAT_LEN
        .import         __OVL_START__, __OVL_CHIP__, __OVL_CHIP_END__
        .import         __OVBROWSE_SIZE__, __OVBRO_SIZE__, __OVCHAT_SIZE__, __OVCHATRO_SIZE__

OVL_BROWSE_LEN  = __OVBROWSE_SIZE__ + __OVBRO_SIZE__
OVL_CHAT_LEN    = __OVCHAT_SIZE__ + __OVCHATRO_SIZE__

        .rodata
_ovl_sums:      .word   0, 0                    ; s1, s2 of ssnail.ovl (host/ovlsum.c)
_ovl_region:    .word   __OVL_START__
_ovl_size:      .word   OVL_BROWSE_LEN, OVL_CHAT_LEN
_ovl_chip:      .dword  __OVL_CHIP__, __OVL_CHIP__ + OVL_BROWSE_LEN

        .segment        "OVLHDR"
; the header of ssnail.ovl (ld65 writes OVLHDR to the file before the overlay), as
; ssnail_format::mega65::overlay defines it (mega65_io.inc): the magic, the version, a zero, the
; length of what follows
hdr:    .dword          OVL_MAGIC
        .byte           OVL_VERSION, 0
        .assert         * - hdr = OVL_LEN, error, "ovl.s: the length is not at OVL_LEN"
        .word           OVL_CHAT_LEN
        .assert         * - hdr = OVL_HEADER_LEN, error, "ovl.s: the header is not OVL_HEADER_LEN bytes"

        .assert __OVL_CHIP__ + OVL_BROWSE_LEN + OVL_CHAT_LEN <= __OVL_CHIP_END__, lderror, "the overlays do not fit their chip RAM (linker/mega65.cfg __OVL_CHIP__)"
        .assert OVL_BROWSE_LEN > 0 .and OVL_CHAT_LEN > 0, lderror, "a DMA count of 0 copies 64 KB"
