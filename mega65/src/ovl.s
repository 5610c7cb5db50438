; ovl.s: the overlays' link numbers for C (overlay.h, linker/mega65.cfg) and the place for the
; chat overlay file's check sums, which build.mk writes into the PRG after the link
; (host/ovlsum.c, at ovl_sums from ld65's label file).

        .export         _ovl_region, _ovl_chip, _ovl_size, _ovl_sums
        .import         __OVL_START__, __OVL_CHIP__, __OVL_CHIP_END__
        .import         __OVBROWSE_SIZE__, __OVCHAT_SIZE__

        .rodata
_ovl_sums:      .word   0, 0                    ; s1, s2 of ssnail.ovl (host/ovlsum.c)
_ovl_region:    .word   __OVL_START__
_ovl_size:      .word   __OVBROWSE_SIZE__, __OVCHAT_SIZE__
_ovl_chip:      .dword  __OVL_CHIP__, __OVL_CHIP__ + __OVBROWSE_SIZE__

        .assert __OVL_CHIP__ + __OVBROWSE_SIZE__ + __OVCHAT_SIZE__ <= __OVL_CHIP_END__, lderror, "the overlays do not fit their chip RAM (linker/mega65.cfg __OVL_CHIP__)"
        .assert __OVBROWSE_SIZE__ > 0 .and __OVCHAT_SIZE__ > 0, lderror, "a DMA count of 0 copies 64 KB"
