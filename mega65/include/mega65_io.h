/* mega65_io.h: MEGA65 I/O registers, Hyppo calls and the readdir record the program and
 * the headless MEGA65 share (docs/spec/mega65.md).
 * GENERATED from the ssnail-format crate (format/src/mega65.rs); do not edit. Regenerate:
 *   cargo run -q -p ssnail-format --example mega65_io > mega65/include/mega65_io.h */
#ifndef MEGA65_IO_H
#define MEGA65_IO_H

/* spec §M5.1-§M5.3; Hyppo dos.asm dispatch table */
#define HYPPO_TRAP_DOS               0xD640       /* $D640: trap 0, the DOS, function in A */
#define HYPPO_TRAP_SERIAL            0xD643       /* $D643: trap 3, A to the serial monitor */
#define HYPPO_TRAP_LAST              0xD67F       /* $D67F: the last trap register */
#define HYPPO_GETVERSION             0x00         /* A.X Hyppo, Y.Z HDOS version */
#define HYPPO_GETDEFAULTDRIVE        0x02         /* A = the default drive */
#define HYPPO_GETCURRENTDRIVE        0x04         /* A = the current drive */
#define HYPPO_SELECTDRIVE            0x06         /* X = drive */
#define HYPPO_CHDIR                  0x0C         /* into the last found directory */
#define HYPPO_OPENDIR                0x12         /* A = directory descriptor */
#define HYPPO_READDIR                0x14         /* X = descriptor, Y = page of the record */
#define HYPPO_CLOSEDIR               0x16         /* X = descriptor */
#define HYPPO_OPENFILE               0x18         /* the last found file; A = descriptor */
#define HYPPO_READFILE               0x1A         /* next 512 bytes into the SD buffer, Y:X = count */
#define HYPPO_CLOSEFILE              0x20         /* X = descriptor */
#define HYPPO_CLOSEALL               0x22         /* every file and directory */
#define HYPPO_SETNAME                0x2E         /* Y = page of an ASCIIZ name */
#define HYPPO_FINDFIRST              0x30         /* first match of the name */
#define HYPPO_FINDNEXT               0x32         /* next match */
#define HYPPO_FINDFILE               0x34         /* the name, in the current directory */
#define HYPPO_LOADFILE               0x36         /* the named file to Z:Y:X */
#define HYPPO_GETERRORCODE           0x38         /* A = the last error code */
#define HYPPO_SETUP_TRANSFER_AREA    0x3A         /* Y = transfer page */
#define HYPPO_CDROOTDIR              0x3C         /* X = drive */
#define HYPPO_D81ATTACH0             0x40         /* the named D81 as drive 0 */
#define HYPPO_D81DETACH              0x42         /* detach the D81s */
#define HYPPO_D81ATTACH1             0x46         /* the named D81 as drive 1 */
#define HYPPO_ATTACH                 0x4A         /* the named D81, X bit 0 = drive, bit 7 = detach */
#define HYPPO_GET_MAPPING            0x74         /* the MAP state, 6 bytes to page Y */
#define HYPPO_SERIAL_MONITOR_WRITE   0x7C         /* Y to the serial monitor */
#define HYPPO_FUNCTION_MASK          0x7E         /* the function bits that count: bits 1-6 (spec §M5.1) */
#define HYPPO_PAGE_LIMIT             0x7F         /* the first page a call may not be given in Y: pages $00-$7E only (spec §M5.2) */
#define HYPPO_ERR_INVALID_ADDRESS    0x10         /* error: a page in Y at or above HYPPO_PAGE_LIMIT */
#define HYPPO_ERR_READ_ERROR         0x20         /* error: reading the file failed */
#define HYPPO_ERR_NO_SUCH_DRIVE      0x80         /* error: no such drive */
#define HYPPO_ERR_NAME_TOO_LONG      0x81         /* error: the name is longer than 63 bytes */
#define HYPPO_ERR_NOT_IMPLEMENTED    0x82         /* error: a function Hyppo does not have */
#define HYPPO_ERR_TOO_MANY_OPEN      0x84         /* error: too many open files */
#define HYPPO_ERR_IS_DIRECTORY       0x86         /* error: a directory where a file was wanted */
#define HYPPO_ERR_NOT_DIRECTORY      0x87         /* error: not a directory */
#define HYPPO_ERR_NOT_FOUND          0x88         /* error: no such file */
#define HYPPO_ERR_INVALID_FD         0x89         /* error: a bad file descriptor */
#define HYPPO_ERR_IMAGE_WRONG_LENGTH 0x8A         /* error: the D81 image has the wrong length */
#define HYPPO_ERR_EOF                0xFF         /* error: end of file */

/* spec §M5.3 */
#define DIRENT_NAME                  0x00         /* long name, ASCIIZ */
#define DIRENT_NAME_LEN              0x40         /* length of the long name */
#define DIRENT_NAME_MAX              0x3F         /* most bytes of the long name the record holds (a longer one is cut) */
#define DIRENT_SHORT_NAME            0x41         /* 8.3 name, 11 bytes, space padded */
#define DIRENT_CLUSTER               0x4E         /* first cluster, 4 bytes LE */
#define DIRENT_SIZE                  0x52         /* size in bytes, 4 bytes LE */
#define DIRENT_ATTR                  0x56         /* FAT attributes */
#define DIRENT_LEN                   0x57         /* bytes in the record */
#define DIRENT_ATTR_DIR              0x10         /* DIRENT_ATTR bit: a directory */
#define DIRENT_ATTR_ARCHIVE          0x20         /* DIRENT_ATTR bit: a file (archive) */

/* iomap.txt lines 1411-1417; gs4510.vhdl lines 3616-3625 */
#define D7FE_ADDRESS                 0xD7FE       /* the register */
#define D7FE_PREFETCH                0x01         /* bit 0: reads of the next address come from the slow-device prefetch */
#define D7FE_SLOWCACHE               0x04         /* bit 2: reads within the current 8-byte line come from the line cache */
#define D7FE_SLOWCACHE_ADV           0x08         /* bit 3: reading a line's last byte loads the next line ahead */
#define D7FE_SELSDRAM                0x10         /* bit 4: the attic window shows SDRAM, not HyperRAM */
#define D7FE_RESET                   0x04         /* after reset: only the line cache on (gs4510.vhdl lines 291, 578-580) */

/* spec §M14, §M4.2; iomap.txt lines 300-339 */
#define F011_CONTROL                 0xD080       /* $D080: drive, side, motor */
#define F011_COMMAND                 0xD081       /* $D081: read, step, buffer reset */
#define F011_STATUS_A                0xD082       /* $D082: BUSY, RNF, TK0... */
#define F011_STATUS_B                0xD083       /* $D083: DISKIN... */
#define F011_TRACK                   0xD084       /* $D084: track */
#define F011_SECTOR                  0xD085       /* $D085: sector */
#define F011_SIDE                    0xD086       /* $D086: side */
#define F011_LAST                    0xD08F       /* $D08F: the last F011 register */
#define F011_BUFFER                  0x0FFD6C00UL /* the F011's 512-byte sector buffer */
#define F011_CONTROL_SIDE            0x08         /* F011_CONTROL bit 3: the head's side (iomap.txt line 301) */
#define F011_CONTROL_MOTOR           0x20         /* F011_CONTROL bit 5: drive motor and LED on (iomap.txt line 303) */
#define F011_CONTROL_LED             0x40         /* F011_CONTROL bit 6: the drive LED blinks (iomap.txt line 304) */
#define F011_COMMAND_RESET_BUFFER    0x01         /* F011_COMMAND: reset the sector buffer's pointers (NOBUF, iomap.txt line 307) */
#define F011_COMMAND_STEP_OUT        0x10         /* F011_COMMAND: step the head out, towards track 0 (STEP, DIR clear; sdcardio.vhdl) */
#define F011_COMMAND_STEP_IN         0x18         /* F011_COMMAND: step the head in (STEP with DIR set) */
#define F011_COMMAND_READ            0x40         /* F011_COMMAND: read the sector at F011_TRACK/SECTOR/SIDE (RDCMD, iomap.txt line 313) */
#define F011_COMMAND_WRITE           0x80         /* F011_COMMAND: write the sector (WRCMD, iomap.txt line 314) */
#define F011_STATUS_A_TK0            0x01         /* F011_STATUS_A bit 0: the head is over track 0 (TK0) */
#define F011_STATUS_A_PROT           0x02         /* F011_STATUS_A bit 1: the disk is write protected (PROT) */
#define F011_STATUS_A_LOST           0x04         /* F011_STATUS_A bit 2: data was lost (LOST) */
#define F011_STATUS_A_CRC            0x08         /* F011_STATUS_A bit 3: the sector's CRC failed (CRC) */
#define F011_STATUS_A_RNF            0x10         /* F011_STATUS_A bit 4: the sector was not found (RNF) */
#define F011_STATUS_A_EQ             0x20         /* F011_STATUS_A bit 5: CPU and disk buffer pointers are equal (EQ) */
#define F011_STATUS_A_DRQ            0x40         /* F011_STATUS_A bit 6: bytes are ready (DRQ) */
#define F011_STATUS_A_BUSY           0x80         /* F011_STATUS_A bit 7: a command is running (BUSY) */
#define F011_STATUS_B_IRQ            0x02         /* F011_STATUS_B bit 1: the controller has raised an interrupt (IRQ) */
#define F011_STATUS_B_DISKIN         0x08         /* F011_STATUS_B bit 3: a disk is in the drive (DISKIN) */
#define F011_STATUS_B_WTREQ          0x40         /* F011_STATUS_B bit 6: the sector to write was found (WTREQ) */
#define F011_STATUS_B_RDREQ          0x80         /* F011_STATUS_B bit 7: the sector to read was found (RDREQ) */

/* spec §M4.1-§M4.2 */
#define SD_CONTROL                   0xD680       /* $D680: command / status */
#define SD_SECTOR0                   0xD681       /* $D681-$D684: sector number */
#define SD_SECTOR3                   0xD684       /* $D684: the sector number's last byte */
#define SD_BUFFER_SELECT             0xD689       /* $D689: bit 7 BUFSEL */
#define SD_BUFSEL_SD                 0x80         /* SD_BUFFER_SELECT bit: user mode sees the SD buffer, not the F011 one */
#define SD_BUFFER                    0x0FFD6E00UL /* the SD card's 512-byte sector buffer */

/* spec §M6; iomap.txt lines 512-533 */
#define KBD_ASCII                    0xD610       /* $D610: the queue's head as ASCII (0 = empty); a write pops it */
#define KBD_MODIFIERS                0xD611       /* $D611: modifier keys held */
#define KBD_MATRIX_PEEK              0xD613       /* $D613: the selected matrix column, 0 = held */
#define KBD_MATRIX_SELECT            0xD614       /* $D614: selects the matrix column $D613 reads */
#define KBD_PETSCII                  0xD619       /* $D619: the queue's head as PETSCII; a write pops it */

/* spec §M9; iomap.txt lines 1059-1060, 1178-1203 */
#define MATH_BUSY                    0xD70F       /* $D70F: bit 6 MULBUSY, bit 7 DIVBUSY */
#define MATH_DIVBUSY                 0x80         /* MATH_BUSY bit 7: the divider is still working */
#define MATH_DIVOUT                  0xD768       /* $D768-$D76F: DIVOUT, (MULTINA << 32) / MULTINB as 32.32 */
#define MATH_MULTINA                 0xD770       /* $D770-$D773: MULTINA, input A */
#define MATH_MULTINB                 0xD774       /* $D774-$D777: MULTINB, input B */
#define MATH_MULTOUT                 0xD778       /* $D778-$D77F: MULTOUT, A x B */
#define MATH_MULTOUT_HIGH            0xD77C       /* $D77C: the product's high 32 bits */
#define MATH_LAST                    0xD77F       /* $D77F: the last multiplier register */

/* spec §M3.1-§M3.5; iomap.txt lines 1031-1049 */
#define DMA_ADDRLSB_TRIGGER          0xD700       /* $D700: list address bits 0-7, and start a plain job */
#define DMA_ADDRMSB                  0xD701       /* $D701: list address bits 8-15 */
#define DMA_ADDRBANK                 0xD702       /* $D702: list address bits 16-22; writing it clears DMA_ADDRMB */
#define DMA_MODE                     0xD703       /* $D703: bit 0 F018B lists by default, bit 1 no MB wrap */
#define DMA_ADDRMB                   0xD704       /* $D704: list address bits 20-27 (write after DMA_ADDRBANK) */
#define DMA_ETRIGGER                 0xD705       /* $D705: list address bits 0-7, and start an enhanced job */
#define DMA_ETRIGGER_MAPPED          0xD706       /* $D706: as DMA_ETRIGGER, the list read through the CPU's memory map */
#define DMA_INLINE                   0xD707       /* $D707: any write starts an enhanced job whose list follows the STA (inline) */
#define DMA_ADDRLSB                  0xD70E       /* $D70E: list address bits 0-7 without starting a job */
#define DMA_OPT_END                  0x00         /* option: end of options */
#define DMA_OPT_CROSS_MB             0x01         /* option: addresses may cross MB boundaries */
#define DMA_OPT_F018A                0x0A         /* option: this job's list is F018A */
#define DMA_OPT_F018B                0x0B         /* option: this job's list is F018B */
#define DMA_OPT_SRC_MB               0x80         /* option + 1 byte: the source MB (address bits 20-27) */
#define DMA_OPT_DST_MB               0x81         /* option + 1 byte: the destination MB */
#define DMA_OPT_DST_SKIP             0x85         /* option + 1 byte: the destination's step in whole bytes (skip rate bits 8-15; 1 by default) */
#define DMA_COPY                     0x00         /* command bits 0-1: copy */
#define DMA_FILL                     0x03         /* command bits 0-1: fill (source byte 0 is the value) */
#define DMA_CHAIN                    0x04         /* command bit 2: another entry follows (enhanced jobs: with its own options) */
#define DMA_SUB_SRC_HOLD             0x02         /* F018B sub-command bit 1: the source address is held */
#define DMA_SUB_DST_HOLD             0x08         /* F018B sub-command bit 3: the destination address is held (one register) */

/* spec §M2.2-§M2.3 */
#define IO_FIRST                     0xD000       /* $D000: the I/O area's first address, the VIC-IV's first register */
#define IO_LAST                      0xDFFF       /* $DFFF: the I/O area's last address */

/* spec §M7.1, §M7.5, §M2.2, §M2.4; iomap.txt lines 65-103, 152, 227, 233-250, 288 */
#define VIC_CONTROL_A                0xD011       /* $D011: bit 7 the raster line's bit 8 (read) and the compare's (write) */
#define VIC_RASTER                   0xD012       /* $D012: the raster line (read), the compare line (write) */
#define VIC_MEMORY                   0xD018       /* $D018: VIC-II memory pointers; a write sets CHARPTR bits 13-11 (viciv.vhdl 2359-2364) */
#define VIC_IRQ_FLAGS                0xD019       /* $D019: bit 0 the raster interrupt flag, acknowledged by writing it */
#define VIC_IRQ_MASK                 0xD01A       /* $D01A: bit 0 the raster interrupt's mask */
#define VIC_BORDER                   0xD020       /* $D020: border colour */
#define VIC_BACKGROUND               0xD021       /* $D021: background colour */
#define VIC_KEY                      0xD02F       /* $D02F: the knock register that selects the I/O personality */
#define VIC_ROM_BANKS                0xD030       /* $D030: C65 ROM banking and colour RAM window */
#define VIC_CONTROL_B                0xD031       /* $D031: H640, FAST, ATTR, V400... */
#define VIC_CONTROL_B_H640           0x80         /* VIC_CONTROL_B bit 7: 640 pixels across (80 columns) */
#define VIC_CONTROL_B_FAST           0x40         /* VIC_CONTROL_B bit 6: FAST (3.5 MHz, 40.5 MHz with VFAST) */
#define VIC_CONTROL_B_ATTR           0x20         /* VIC_CONTROL_B bit 5: extended attributes */
#define VIC_CONTROL_B_V400           0x08         /* VIC_CONTROL_B bit 3: 400 lines (50 rows) */
#define VIC_CONTROL_C                0xD054       /* $D054: VIC-IV control C, bit 6 VFAST */
#define VIC_CONTROL_C_VFAST          0x40         /* VIC_CONTROL_C bit 6: VFAST (40.5 MHz with FAST) */
#define VIC_LINESTEP                 0xD058       /* $D058-$D059: LINESTEP, bytes per logical text row */
#define VIC_HOTREG                   0xD05D       /* $D05D: bit 7 HOTREG, VIC-II register writes reset VIC-IV ones */
#define VIC_HOTREG_ON                0x80         /* VIC_HOTREG bit 7: hot registers on */
#define VIC_CHRCOUNT                 0xD05E       /* $D05E: CHRCOUNT, characters per row (bits 0-7) */
#define VIC_SCRNPTR                  0xD060       /* $D060-$D063: SCRNPTR, screen RAM (28 bits; $D063 bits 4-5 CHRCOUNT's bits 8-9) */
#define VIC_SCRNPTR_HIGH             0xD063       /* $D063: SCRNPTR's last byte */
#define VIC_COLPTR                   0xD064       /* $D064-$D065: COLPTR, colour RAM offset */
#define VIC_CHARPTR                  0xD068       /* $D068-$D06A: CHARPTR, the character set */
#define VIC_DISPROWS                 0xD07B       /* $D07B: DISPROWS, text rows */

/* spec §M15; iomap.txt lines 1422-1452 */
#define CIA1_BASE                    0xDC00       /* $DC00: CIA 1's first register */
#define CIA1_TALO                    0xDC04       /* $DC04: timer A, low byte */
#define CIA1_TAHI                    0xDC05       /* $DC05: timer A, high byte */
#define CIA1_TBLO                    0xDC06       /* $DC06: timer B, low byte */
#define CIA1_TBHI                    0xDC07       /* $DC07: timer B, high byte */
#define CIA1_TOD                     0xDC08       /* $DC08-$DC0B: time of day, tenths to hours (BCD) */
#define CIA1_TOD_HOURS               0xDC0B       /* $DC0B: time of day, hours (reading it latches the clock) */
#define CIA1_ICR                     0xDC0D       /* $DC0D: interrupt flags (read), mask (write) */
#define CIA1_CRA                     0xDC0E       /* $DC0E: timer A control */
#define CIA1_CRB                     0xDC0F       /* $DC0F: timer B control */
#define CIA1_ICR_SET                 0x80         /* CIA1_ICR write bit 7: set the mask bits given (clear: clear them) */
#define CIA1_ICR_ALL                 0x7F         /* CIA1_ICR: every interrupt source (bits 0-4 the CIA has, 5-6 none) */
#define CIA1_CR_START                0x01         /* CIA1_CRA/CRB bit 0: the timer runs */
#define CIA1_CR_ONESHOT              0x08         /* CIA1_CRA/CRB bit 3: the timer stops at its underflow */
#define CIA1_CR_LOAD                 0x10         /* CIA1_CRA/CRB bit 4: load the latch now (a strobe, reads 0) */
#define CIA1_CRB_INMODE              0x60         /* CIA1_CRB bits 5-6: what timer B counts */
#define CIA1_CRB_COUNT_TA            0x40         /* CIA1_CRB bits 5-6 = %10: timer B counts timer A's underflows */
#define CIA1_CRB_ALARM               0x80         /* CIA1_CRB bit 7: time-of-day writes set the alarm */

/* iomap.txt line 578; c65uart.vhdl lines 336-339, 858-866 */
#define MODEL_ADDRESS                0xD629       /* $D629: M65MODEL */
#define MODEL_R3                     0x03         /* an R3 board (8 MB HyperRAM attic RAM) */
#define MODEL_R4                     0x04         /* an R4 board (64 MB SDRAM attic RAM; R5 and later read 5, 6...) */
#define MODEL_OTHER                  0x20         /* first value of other machines (MEGAphone and others) */

/* spec §M8.3; 1581 DOS directory format */
#define D81_DIR_TRACK                0x28         /* the directory's track */
#define D81_DIR_SECTOR               0x03         /* the directory's first sector */
#define D81_ENTRIES_PER_SECTOR       0x08         /* a directory sector's entries */
#define D81_ENTRY_LEN                0x20         /* bytes in a directory entry */
#define D81_ENTRY_TYPE               0x02         /* entry byte: the file type (D81_TYPE_*), 0 = unused */
#define D81_ENTRY_TRACK              0x03         /* entry byte: the first data sector's track */
#define D81_ENTRY_SECTOR             0x04         /* entry byte: the first data sector's sector */
#define D81_ENTRY_NAME               0x05         /* entry bytes: the name, D81_NAME_LEN bytes of PETSCII padded with D81_PAD */
#define D81_ENTRY_BLOCKS             0x1E         /* entry bytes: the file's size in blocks, 2 bytes LE */
#define D81_NAME_LEN                 0x10         /* most bytes of a name */
#define D81_PAD                      0xA0         /* the name's padding byte (shifted space) */
#define D81_TYPE_CLOSED              0x80         /* D81_ENTRY_TYPE bit 7: the file is closed (a file in use) */
#define D81_TYPE_MASK                0x07         /* D81_ENTRY_TYPE bits 0-2: the file type */
#define D81_TYPE_DEL                 0x00         /* file type: deleted */
#define D81_TYPE_SEQ                 0x01         /* file type: sequential */
#define D81_TYPE_PRG                 0x02         /* file type: program */
#define D81_TYPE_USR                 0x03         /* file type: user */
#define D81_TYPE_REL                 0x04         /* file type: relative */
#define D81_BLOCK_DATA               0xFE         /* data bytes of a file sector, after its 2-byte link */

/* spec §M7.4; iomap.txt lines 508, 944 */
#define TESTING_REALHW               0xD60F       /* $D60F: bit 5 REALHW, 1 on real hardware, 0 in emulators */
#define TESTING_REALHW_BIT           0x20         /* TESTING_REALHW's bit */
#define TESTING_EXIT                 0xD6CF       /* $D6CF: the exit status, then TESTING_EXIT_NOW */
#define TESTING_EXIT_NOW             0x42         /* written to TESTING_EXIT after the status: the emulator ends */

/* docs/mega65-program.md, Overlays */
#define OVL_MAGIC                    0x4F4C4E53UL /* The file's first 4 bytes, "SNLO" read as a little-endian word */
#define OVL_VERSION                  0x01         /* Byte 4: the header's version */
#define OVL_LEN                      0x06         /* Bytes 6-7: the length of the overlay's bytes after the header */
#define OVL_HEADER_LEN               0x08         /* The header's length */
#endif
