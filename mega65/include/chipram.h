/* chipram.h: the program's use of chip RAM banks 4 and 5, which the MEGA65 Book gives to programs
 * that do not use BASIC's bitmap graphics (memory.tex, "How Programs Use Chip RAM"); reached by
 * DMA. Bank 5's last 16 KB hold BASIC's memory for /quit (crt0.s, SAVE_BANK). */
#ifndef CHIPRAM_H
#define CHIPRAM_H
/* 0.D000-0.DFFF (4 KB, bank 0 under the I/O page, where the program's CPU view has I/O): the
 * software core's exp and SiLU tables, SC_TAB in softcore_abi.inc (sc_tab in C; device.c loads them
 * from the end of ssnail.core, the core reads them by flat accesses) */
/* $40000-$49FFF (40 KB): the software core, SC_PHYS in softcore_window.inc (sc_phys in C) */
#define CHARSET       0x4A000UL   /* 2 KB: the character set (screen.c) */
#define TEXT_ADDR     0x4A800UL   /* 16 x 256: the stored lines' text (chat.c, encoders) */
#define FONT_STAGE    0x4A800UL   /* at start-up, before any line is stored: the font (font.c), which
                                     crt0.s copies here before BSS, overlapping it, is cleared */
#define STORE_ADDR    0x4B800UL   /* 16 x 2 KB: their embeddings */
#define MODELS_ADDR   0x4A800UL   /* MAX_MODELS x sizeof(model_t) (33,800 bytes): the model list
                                     (models.c), over the stored lines and embeddings: the list is
                                     made anew each time the browser starts, the lines are cleared
                                     each time a conversation starts */
/* $53800-$5B7FF (32 KB): the overlays' copies, the browser's then the chat's (overlay.h;
 * __OVL_CHIP__ and __OVL_CHIP_END__ in linker/mega65.cfg, which ld65 checks them against) */
/* $5B800-$5BFFF (2 KB): the software core's GELU table, SC_TAB2 in softcore_abi.inc (device.c loads it
 * from the end of ssnail.core after the exp and SiLU tables) */
#define SAVED_ADDR    0x5C000UL   /* 16 KB: BASIC's memory, saved by crt0.s */
#endif
