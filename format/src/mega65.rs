//! MEGA65 machine facts that both the MEGA65 program's C and the headless MEGA65 (emu/mega65)
//! rely on, declared once as data, grouped by subject (spec docs/spec/mega65.md).
//!
//! These are not part of the SSNAIL contract: they are the MEGA65's own I/O registers and Hyppo's
//! calls. They live in this crate because it already owns the C-header generator and the test
//! that regenerates and compares, and the headless MEGA65 already depends on it (docs/DESIGN.md).
//!
//! Each group is a Rust module whose constants the emulator uses by name, and the same list as
//! data (crate::facts), from which `mega65/include/mega65_io.h` ([`c_header`]) and
//! `mega65/include/mega65_io.inc` ([`ca65_include`]) are generated: the C and ca65 name of a
//! constant is always the group's prefix followed by its Rust name (`hyppo::OPENDIR` is
//! `HYPPO_OPENDIR`), so no name is mapped by hand. To regenerate after a change here:
//!
//! ```text
//! cargo run -q -p ssnail-format --example mega65_io > mega65/include/mega65_io.h
//! cargo run -q -p ssnail-format --example mega65_io -- --ca65 > mega65/include/mega65_io.inc
//! ```

use crate::facts::{self, group, Group};

group! {
    /// Hypervisor calls (spec §M5): the trap registers and the DOS functions, which go in A for a
    /// write to `TRAP_DOS` (numbers from Hyppo's dos.asm dispatch table, mega65-core 76fac1b
    /// src/hyppo/dos.asm).
    pub mod hyppo, prefix "HYPPO_", source "spec §M5.1-§M5.3; Hyppo dos.asm dispatch table" {
        /// $D640: trap 0, the DOS, function in A
        pub const TRAP_DOS: u16 = 0xD640;
        /// $D643: trap 3, A to the serial monitor
        pub const TRAP_SERIAL: u16 = 0xD643;
        /// $D67F: the last trap register
        pub const TRAP_LAST: u16 = 0xD67F;
        /// A.X Hyppo, Y.Z HDOS version
        pub const GETVERSION: u8 = 0x00;
        /// A = the default drive
        pub const GETDEFAULTDRIVE: u8 = 0x02;
        /// A = the current drive
        pub const GETCURRENTDRIVE: u8 = 0x04;
        /// X = drive
        pub const SELECTDRIVE: u8 = 0x06;
        /// into the last found directory
        pub const CHDIR: u8 = 0x0C;
        /// A = directory descriptor
        pub const OPENDIR: u8 = 0x12;
        /// X = descriptor, Y = page of the record
        pub const READDIR: u8 = 0x14;
        /// X = descriptor
        pub const CLOSEDIR: u8 = 0x16;
        /// the last found file; A = descriptor
        pub const OPENFILE: u8 = 0x18;
        /// next 512 bytes into the SD buffer, Y:X = count
        pub const READFILE: u8 = 0x1A;
        /// X = descriptor
        pub const CLOSEFILE: u8 = 0x20;
        /// every file and directory
        pub const CLOSEALL: u8 = 0x22;
        /// Y = page of an ASCIIZ name
        pub const SETNAME: u8 = 0x2E;
        /// first match of the name
        pub const FINDFIRST: u8 = 0x30;
        /// next match
        pub const FINDNEXT: u8 = 0x32;
        /// the name, in the current directory
        pub const FINDFILE: u8 = 0x34;
        /// the named file to Z:Y:X
        pub const LOADFILE: u8 = 0x36;
        /// A = the last error code
        pub const GETERRORCODE: u8 = 0x38;
        /// Y = transfer page
        pub const SETUP_TRANSFER_AREA: u8 = 0x3A;
        /// X = drive
        pub const CDROOTDIR: u8 = 0x3C;
        /// the named D81 as drive 0
        pub const D81ATTACH0: u8 = 0x40;
        /// detach the D81s
        pub const D81DETACH: u8 = 0x42;
        /// the named D81 as drive 1
        pub const D81ATTACH1: u8 = 0x46;
        /// the named D81, X bit 0 = drive, bit 7 = detach
        pub const ATTACH: u8 = 0x4A;
        /// the MAP state, 6 bytes to page Y
        pub const GET_MAPPING: u8 = 0x74;
        /// Y to the serial monitor
        pub const SERIAL_MONITOR_WRITE: u8 = 0x7C;
        /// the function bits that count: bits 1-6 (spec §M5.1)
        pub const FUNCTION_MASK: u8 = 0x7E;
        /// the first page a call may not be given in Y: pages $00-$7E only (spec §M5.2)
        pub const PAGE_LIMIT: u8 = 0x7F;
        /// error: a page in Y at or above HYPPO_PAGE_LIMIT
        pub const ERR_INVALID_ADDRESS: u8 = 0x10;
        /// error: reading the file failed
        pub const ERR_READ_ERROR: u8 = 0x20;
        /// error: no such drive
        pub const ERR_NO_SUCH_DRIVE: u8 = 0x80;
        /// error: the name is longer than 63 bytes
        pub const ERR_NAME_TOO_LONG: u8 = 0x81;
        /// error: a function Hyppo does not have
        pub const ERR_NOT_IMPLEMENTED: u8 = 0x82;
        /// error: too many open files
        pub const ERR_TOO_MANY_OPEN: u8 = 0x84;
        /// error: a directory where a file was wanted
        pub const ERR_IS_DIRECTORY: u8 = 0x86;
        /// error: not a directory
        pub const ERR_NOT_DIRECTORY: u8 = 0x87;
        /// error: no such file
        pub const ERR_NOT_FOUND: u8 = 0x88;
        /// error: a bad file descriptor
        pub const ERR_INVALID_FD: u8 = 0x89;
        /// error: the D81 image has the wrong length
        pub const ERR_IMAGE_WRONG_LENGTH: u8 = 0x8A;
        /// error: end of file
        pub const ERR_EOF: u8 = 0xFF;
    }
}

group! {
    /// The 87-byte record readdir writes (spec §M5.3).
    pub mod dirent, prefix "DIRENT_", source "spec §M5.3" {
        /// long name, ASCIIZ
        pub const NAME: usize = 0x00;
        /// length of the long name
        pub const NAME_LEN: usize = 0x40;
        /// most bytes of the long name the record holds (a longer one is cut)
        pub const NAME_MAX: usize = 63;
        /// 8.3 name, 11 bytes, space padded
        pub const SHORT_NAME: usize = 0x41;
        /// first cluster, 4 bytes LE
        pub const CLUSTER: usize = 0x4E;
        /// size in bytes, 4 bytes LE
        pub const SIZE: usize = 0x52;
        /// FAT attributes
        pub const ATTR: usize = 0x56;
        /// bytes in the record
        pub const LEN: usize = 0x57;
        /// DIRENT_ATTR bit: a directory
        pub const ATTR_DIR: u8 = 0x10;
        /// DIRENT_ATTR bit: a file (archive)
        pub const ATTR_ARCHIVE: u8 = 0x20;
    }
}

group! {
    /// $D7FE, the attic-RAM window's controls (mega65-core iomap.txt lines 1411-1417; written in
    /// gs4510.vhdl lines 3616-3625; spec §M2.5).
    pub mod d7fe, prefix "D7FE_", source "iomap.txt lines 1411-1417; gs4510.vhdl lines 3616-3625" {
        /// the register
        pub const ADDRESS: u16 = 0xD7FE;
        /// bit 0: reads of the next address come from the slow-device prefetch
        pub const PREFETCH: u8 = 0x01;
        /// bit 2: reads within the current 8-byte line come from the line cache
        pub const SLOWCACHE: u8 = 0x04;
        /// bit 3: reading a line's last byte loads the next line ahead
        pub const SLOWCACHE_ADV: u8 = 0x08;
        /// bit 4: the attic window shows SDRAM, not HyperRAM
        pub const SELSDRAM: u8 = 0x10;
        /// after reset: only the line cache on (gs4510.vhdl lines 291, 578-580)
        pub const RESET: u8 = SLOWCACHE;
    }
}

group! {
    /// The F011 floppy controller's registers and sector buffer (spec §M14, §M2.1).
    pub mod f011, prefix "F011_", source "spec §M14, §M4.2; iomap.txt lines 300-339" {
        /// $D080: drive, side, motor
        pub const CONTROL: u16 = 0xD080;
        /// $D081: read, step, buffer reset
        pub const COMMAND: u16 = 0xD081;
        /// $D082: BUSY, RNF, TK0...
        pub const STATUS_A: u16 = 0xD082;
        /// $D083: DISKIN...
        pub const STATUS_B: u16 = 0xD083;
        /// $D084: track
        pub const TRACK: u16 = 0xD084;
        /// $D085: sector
        pub const SECTOR: u16 = 0xD085;
        /// $D086: side
        pub const SIDE: u16 = 0xD086;
        /// $D08F: the last F011 register
        pub const LAST: u16 = 0xD08F;
        /// the F011's 512-byte sector buffer
        pub const BUFFER: u32 = 0x0FFD_6C00;
        /// F011_CONTROL bit 3: the head's side (iomap.txt line 301)
        pub const CONTROL_SIDE: u8 = 0x08;
        /// F011_CONTROL bit 5: drive motor and LED on (iomap.txt line 303)
        pub const CONTROL_MOTOR: u8 = 0x20;
        /// F011_CONTROL bit 6: the drive LED blinks (iomap.txt line 304)
        pub const CONTROL_LED: u8 = 0x40;
        /// F011_COMMAND: reset the sector buffer's pointers (NOBUF, iomap.txt line 307)
        pub const COMMAND_RESET_BUFFER: u8 = 0x01;
        /// F011_COMMAND: step the head out, towards track 0 (STEP, DIR clear; sdcardio.vhdl)
        pub const COMMAND_STEP_OUT: u8 = 0x10;
        /// F011_COMMAND: step the head in (STEP with DIR set)
        pub const COMMAND_STEP_IN: u8 = 0x18;
        /// F011_COMMAND: read the sector at F011_TRACK/SECTOR/SIDE (RDCMD, iomap.txt line 313)
        pub const COMMAND_READ: u8 = 0x40;
        /// F011_COMMAND: write the sector (WRCMD, iomap.txt line 314)
        pub const COMMAND_WRITE: u8 = 0x80;
        /// F011_STATUS_A bit 0: the head is over track 0 (TK0)
        pub const STATUS_A_TK0: u8 = 0x01;
        /// F011_STATUS_A bit 1: the disk is write protected (PROT)
        pub const STATUS_A_PROT: u8 = 0x02;
        /// F011_STATUS_A bit 2: data was lost (LOST)
        pub const STATUS_A_LOST: u8 = 0x04;
        /// F011_STATUS_A bit 3: the sector's CRC failed (CRC)
        pub const STATUS_A_CRC: u8 = 0x08;
        /// F011_STATUS_A bit 4: the sector was not found (RNF)
        pub const STATUS_A_RNF: u8 = 0x10;
        /// F011_STATUS_A bit 5: CPU and disk buffer pointers are equal (EQ)
        pub const STATUS_A_EQ: u8 = 0x20;
        /// F011_STATUS_A bit 6: bytes are ready (DRQ)
        pub const STATUS_A_DRQ: u8 = 0x40;
        /// F011_STATUS_A bit 7: a command is running (BUSY)
        pub const STATUS_A_BUSY: u8 = 0x80;
        /// F011_STATUS_B bit 1: the controller has raised an interrupt (IRQ)
        pub const STATUS_B_IRQ: u8 = 0x02;
        /// F011_STATUS_B bit 3: a disk is in the drive (DISKIN)
        pub const STATUS_B_DISKIN: u8 = 0x08;
        /// F011_STATUS_B bit 6: the sector to write was found (WTREQ)
        pub const STATUS_B_WTREQ: u8 = 0x40;
        /// F011_STATUS_B bit 7: the sector to read was found (RDREQ)
        pub const STATUS_B_RDREQ: u8 = 0x80;
    }
}

group! {
    /// The SD-card controller's registers and sector buffer (spec §M4).
    pub mod sd, prefix "SD_", source "spec §M4.1-§M4.2" {
        /// $D680: command / status
        pub const CONTROL: u16 = 0xD680;
        /// $D681-$D684: sector number
        pub const SECTOR0: u16 = 0xD681;
        /// $D684: the sector number's last byte
        pub const SECTOR3: u16 = 0xD684;
        /// $D689: bit 7 BUFSEL
        pub const BUFFER_SELECT: u16 = 0xD689;
        /// SD_BUFFER_SELECT bit: user mode sees the SD buffer, not the F011 one
        pub const BUFSEL_SD: u8 = 0x80;
        /// the SD card's 512-byte sector buffer
        pub const BUFFER: u32 = 0x0FFD_6E00;
    }
}

group! {
    /// The keyboard: the hardware ASCII key queue and the matrix (spec §M6; iomap.txt lines
    /// 512-533).
    pub mod keyboard, prefix "KBD_", source "spec §M6; iomap.txt lines 512-533" {
        /// $D610: the queue's head as ASCII (0 = empty); a write pops it
        pub const ASCII: u16 = 0xD610;
        /// $D611: modifier keys held
        pub const MODIFIERS: u16 = 0xD611;
        /// $D613: the selected matrix column, 0 = held
        pub const MATRIX_PEEK: u16 = 0xD613;
        /// $D614: selects the matrix column $D613 reads
        pub const MATRIX_SELECT: u16 = 0xD614;
        /// $D619: the queue's head as PETSCII; a write pops it
        pub const PETSCII: u16 = 0xD619;
    }
}

group! {
    /// The hardware multiplier and divider (spec §M9; mega65-core iomap.txt lines 1059-1060,
    /// 1178-1203): the two 32-bit inputs, their 64-bit product and the 32.32 quotient, each little
    /// endian; the product is ready with no trigger.
    pub mod math, prefix "MATH_", source "spec §M9; iomap.txt lines 1059-1060, 1178-1203" {
        /// $D70F: bit 6 MULBUSY, bit 7 DIVBUSY
        pub const BUSY: u16 = 0xD70F;
        /// MATH_BUSY bit 7: the divider is still working
        pub const DIVBUSY: u8 = 0x80;
        /// $D768-$D76F: DIVOUT, (MULTINA << 32) / MULTINB as 32.32
        pub const DIVOUT: u16 = 0xD768;
        /// $D770-$D773: MULTINA, input A
        pub const MULTINA: u16 = 0xD770;
        /// $D774-$D777: MULTINB, input B
        pub const MULTINB: u16 = 0xD774;
        /// $D778-$D77F: MULTOUT, A x B
        pub const MULTOUT: u16 = 0xD778;
        /// $D77C: the product's high 32 bits
        pub const MULTOUT_HIGH: u16 = 0xD77C;
        /// $D77F: the last multiplier register
        pub const LAST: u16 = 0xD77F;
    }
}

group! {
    /// The DMA controller, DMAgic (spec §M3; mega65-core iomap.txt lines 1031-1049): the list
    /// address registers, the enhanced-job options and the list entry's command and sub-command
    /// bits the program uses.
    pub mod dma, prefix "DMA_", source "spec §M3.1-§M3.5; iomap.txt lines 1031-1049" {
        /// $D700: list address bits 0-7, and start a plain job
        pub const ADDRLSB_TRIGGER: u16 = 0xD700;
        /// $D701: list address bits 8-15
        pub const ADDRMSB: u16 = 0xD701;
        /// $D702: list address bits 16-22; writing it clears DMA_ADDRMB
        pub const ADDRBANK: u16 = 0xD702;
        /// $D703: bit 0 F018B lists by default, bit 1 no MB wrap
        pub const MODE: u16 = 0xD703;
        /// $D704: list address bits 20-27 (write after DMA_ADDRBANK)
        pub const ADDRMB: u16 = 0xD704;
        /// $D705: list address bits 0-7, and start an enhanced job
        pub const ETRIGGER: u16 = 0xD705;
        /// $D706: as DMA_ETRIGGER, the list read through the CPU's memory map
        pub const ETRIGGER_MAPPED: u16 = 0xD706;
        /// $D707: any write starts an enhanced job whose list follows the STA (inline)
        pub const INLINE: u16 = 0xD707;
        /// $D70E: list address bits 0-7 without starting a job
        pub const ADDRLSB: u16 = 0xD70E;
        /// option: end of options
        pub const OPT_END: u8 = 0x00;
        /// option: addresses may cross MB boundaries
        pub const OPT_CROSS_MB: u8 = 0x01;
        /// option: this job's list is F018A
        pub const OPT_F018A: u8 = 0x0A;
        /// option: this job's list is F018B
        pub const OPT_F018B: u8 = 0x0B;
        /// option + 1 byte: the source MB (address bits 20-27)
        pub const OPT_SRC_MB: u8 = 0x80;
        /// option + 1 byte: the destination MB
        pub const OPT_DST_MB: u8 = 0x81;
        /// option + 1 byte: the destination's step in whole bytes (skip rate bits 8-15; 1 by default)
        pub const OPT_DST_SKIP: u8 = 0x85;
        /// command bits 0-1: copy
        pub const COPY: u8 = 0x00;
        /// command bits 0-1: fill (source byte 0 is the value)
        pub const FILL: u8 = 0x03;
        /// command bit 2: another entry follows (enhanced jobs: with its own options)
        pub const CHAIN: u8 = 0x04;
        /// F018B sub-command bit 1: the source address is held
        pub const SUB_SRC_HOLD: u8 = 0x02;
        /// F018B sub-command bit 3: the destination address is held (one register)
        pub const SUB_DST_HOLD: u8 = 0x08;
    }
}

group! {
    /// The I/O area of the CPU's 64 KB view (spec §M2.2, §M2.3): where the VIC-IV's registers
    /// begin and the last I/O address; the RAM under it is bank 0's $D000-$DFFF.
    pub mod io_area, prefix "IO_", source "spec §M2.2-§M2.3" {
        /// $D000: the I/O area's first address, the VIC-IV's first register
        pub const FIRST: u16 = 0xD000;
        /// $DFFF: the I/O area's last address
        pub const LAST: u16 = 0xDFFF;
    }
}

group! {
    /// The VIC-IV registers the program sets and the headless MEGA65 models (spec §M7.1, §M7.5,
    /// §M2.2, §M2.4; mega65-core iomap.txt lines 65-103, 152, 227, 233-250, 288; viciv.vhdl).
    pub mod vic, prefix "VIC_", source "spec §M7.1, §M7.5, §M2.2, §M2.4; iomap.txt lines 65-103, 152, 227, 233-250, 288" {
        /// $D011: bit 7 the raster line's bit 8 (read) and the compare's (write)
        pub const CONTROL_A: u16 = 0xD011;
        /// $D012: the raster line (read), the compare line (write)
        pub const RASTER: u16 = 0xD012;
        /// $D018: VIC-II memory pointers; a write sets CHARPTR bits 13-11 (viciv.vhdl 2359-2364)
        pub const MEMORY: u16 = 0xD018;
        /// $D019: bit 0 the raster interrupt flag, acknowledged by writing it
        pub const IRQ_FLAGS: u16 = 0xD019;
        /// $D01A: bit 0 the raster interrupt's mask
        pub const IRQ_MASK: u16 = 0xD01A;
        /// $D020: border colour
        pub const BORDER: u16 = 0xD020;
        /// $D021: background colour
        pub const BACKGROUND: u16 = 0xD021;
        /// $D02F: the knock register that selects the I/O personality
        pub const KEY: u16 = 0xD02F;
        /// $D030: C65 ROM banking and colour RAM window
        pub const ROM_BANKS: u16 = 0xD030;
        /// $D031: H640, FAST, ATTR, V400...
        pub const CONTROL_B: u16 = 0xD031;
        /// VIC_CONTROL_B bit 7: 640 pixels across (80 columns)
        pub const CONTROL_B_H640: u8 = 0x80;
        /// VIC_CONTROL_B bit 6: FAST (3.5 MHz, 40.5 MHz with VFAST)
        pub const CONTROL_B_FAST: u8 = 0x40;
        /// VIC_CONTROL_B bit 5: extended attributes
        pub const CONTROL_B_ATTR: u8 = 0x20;
        /// VIC_CONTROL_B bit 3: 400 lines (50 rows)
        pub const CONTROL_B_V400: u8 = 0x08;
        /// $D054: VIC-IV control C, bit 6 VFAST
        pub const CONTROL_C: u16 = 0xD054;
        /// VIC_CONTROL_C bit 6: VFAST (40.5 MHz with FAST)
        pub const CONTROL_C_VFAST: u8 = 0x40;
        /// $D058-$D059: LINESTEP, bytes per logical text row
        pub const LINESTEP: u16 = 0xD058;
        /// $D05D: bit 7 HOTREG, VIC-II register writes reset VIC-IV ones
        pub const HOTREG: u16 = 0xD05D;
        /// VIC_HOTREG bit 7: hot registers on
        pub const HOTREG_ON: u8 = 0x80;
        /// $D05E: CHRCOUNT, characters per row (bits 0-7)
        pub const CHRCOUNT: u16 = 0xD05E;
        /// $D060-$D063: SCRNPTR, screen RAM (28 bits; $D063 bits 4-5 CHRCOUNT's bits 8-9)
        pub const SCRNPTR: u16 = 0xD060;
        /// $D063: SCRNPTR's last byte
        pub const SCRNPTR_HIGH: u16 = 0xD063;
        /// $D064-$D065: COLPTR, colour RAM offset
        pub const COLPTR: u16 = 0xD064;
        /// $D068-$D06A: CHARPTR, the character set
        pub const CHARPTR: u16 = 0xD068;
        /// $D07B: DISPROWS, text rows
        pub const DISPROWS: u16 = 0xD07B;
    }
}

group! {
    /// CIA 1's timers, the program's clock (spec §M15; mega65-core iomap.txt lines 1422-1452,
    /// cia6526.vhdl). CIA 2 at $DD00 has the same registers at the same offsets.
    pub mod cia1, prefix "CIA1_", source "spec §M15; iomap.txt lines 1422-1452" {
        /// $DC00: CIA 1's first register
        pub const BASE: u16 = 0xDC00;
        /// $DC04: timer A, low byte
        pub const TALO: u16 = 0xDC04;
        /// $DC05: timer A, high byte
        pub const TAHI: u16 = 0xDC05;
        /// $DC06: timer B, low byte
        pub const TBLO: u16 = 0xDC06;
        /// $DC07: timer B, high byte
        pub const TBHI: u16 = 0xDC07;
        /// $DC08-$DC0B: time of day, tenths to hours (BCD)
        pub const TOD: u16 = 0xDC08;
        /// $DC0B: time of day, hours (reading it latches the clock)
        pub const TOD_HOURS: u16 = 0xDC0B;
        /// $DC0D: interrupt flags (read), mask (write)
        pub const ICR: u16 = 0xDC0D;
        /// $DC0E: timer A control
        pub const CRA: u16 = 0xDC0E;
        /// $DC0F: timer B control
        pub const CRB: u16 = 0xDC0F;
        /// CIA1_ICR write bit 7: set the mask bits given (clear: clear them)
        pub const ICR_SET: u8 = 0x80;
        /// CIA1_ICR: every interrupt source (bits 0-4 the CIA has, 5-6 none)
        pub const ICR_ALL: u8 = 0x7F;
        /// CIA1_CRA/CRB bit 0: the timer runs
        pub const CR_START: u8 = 0x01;
        /// CIA1_CRA/CRB bit 3: the timer stops at its underflow
        pub const CR_ONESHOT: u8 = 0x08;
        /// CIA1_CRA/CRB bit 4: load the latch now (a strobe, reads 0)
        pub const CR_LOAD: u8 = 0x10;
        /// CIA1_CRB bits 5-6: what timer B counts
        pub const CRB_INMODE: u8 = 0x60;
        /// CIA1_CRB bits 5-6 = %10: timer B counts timer A's underflows
        pub const CRB_COUNT_TA: u8 = 0x40;
        /// CIA1_CRB bit 7: time-of-day writes set the alarm
        pub const CRB_ALARM: u8 = 0x80;
    }
}

group! {
    /// Which board this is: $D629 M65MODEL (mega65-core iomap.txt line 578; c65uart.vhdl lines
    /// 336-339, 858-866): 3 on R3, 4 on R4; R5 and later read their major revision (5, 6...).
    pub mod model, prefix "MODEL_", source "iomap.txt line 578; c65uart.vhdl lines 336-339, 858-866" {
        /// $D629: M65MODEL
        pub const ADDRESS: u16 = 0xD629;
        /// an R3 board (8 MB HyperRAM attic RAM)
        pub const R3: u8 = 3;
        /// an R4 board (64 MB SDRAM attic RAM; R5 and later read 5, 6...)
        pub const R4: u8 = 4;
        /// first value of other machines (MEGAphone and others)
        pub const OTHER: u8 = 0x20;
    }
}

group! {
    /// The D81's directory as the 1581 DOS lays it out (spec §M8.3, checked against cc1541; the
    /// MEGA65 Book's 1581 appendix; the Commodore 1581 user's guide, "Directory format"): a
    /// chain of sectors on track 40 from sector 3, each with the 2-byte link and 8 entries of 32
    /// bytes; and the file sector's data bytes. `ssnail-disk` writes and reads it; the program
    /// (src/models.c) reads it.
    pub mod d81, prefix "D81_", source "spec §M8.3; 1581 DOS directory format" {
        /// the directory's track
        pub const DIR_TRACK: u8 = 40;
        /// the directory's first sector
        pub const DIR_SECTOR: u8 = 3;
        /// a directory sector's entries
        pub const ENTRIES_PER_SECTOR: usize = 8;
        /// bytes in a directory entry
        pub const ENTRY_LEN: usize = 32;
        /// entry byte: the file type (D81_TYPE_*), 0 = unused
        pub const ENTRY_TYPE: usize = 0x02;
        /// entry byte: the first data sector's track
        pub const ENTRY_TRACK: usize = 0x03;
        /// entry byte: the first data sector's sector
        pub const ENTRY_SECTOR: usize = 0x04;
        /// entry bytes: the name, D81_NAME_LEN bytes of PETSCII padded with D81_PAD
        pub const ENTRY_NAME: usize = 0x05;
        /// entry bytes: the file's size in blocks, 2 bytes LE
        pub const ENTRY_BLOCKS: usize = 0x1E;
        /// most bytes of a name
        pub const NAME_LEN: usize = 16;
        /// the name's padding byte (shifted space)
        pub const PAD: u8 = 0xA0;
        /// D81_ENTRY_TYPE bit 7: the file is closed (a file in use)
        pub const TYPE_CLOSED: u8 = 0x80;
        /// D81_ENTRY_TYPE bits 0-2: the file type
        pub const TYPE_MASK: u8 = 0x07;
        /// file type: deleted
        pub const TYPE_DEL: u8 = 0;
        /// file type: sequential
        pub const TYPE_SEQ: u8 = 1;
        /// file type: program
        pub const TYPE_PRG: u8 = 2;
        /// file type: user
        pub const TYPE_USR: u8 = 3;
        /// file type: relative
        pub const TYPE_REL: u8 = 4;
        /// data bytes of a file sector, after its 2-byte link
        pub const BLOCK_DATA: usize = 254;
    }
}

group! {
    /// The exit port a test run ends with (spec §M7.4): with xemu's `-testing` (and in the
    /// headless MEGA65) the status written to $D6CF, then $42, ends the emulator; on real
    /// hardware $42 there reconfigures the FPGA (iomap.txt line 944), so a program that may run
    /// on a board checks REALHW first (iomap.txt line 508).
    pub mod testing, prefix "TESTING_", source "spec §M7.4; iomap.txt lines 508, 944" {
        /// $D60F: bit 5 REALHW, 1 on real hardware, 0 in emulators
        pub const REALHW: u16 = 0xD60F;
        /// TESTING_REALHW's bit
        pub const REALHW_BIT: u8 = 0x20;
        /// $D6CF: the exit status, then TESTING_EXIT_NOW
        pub const EXIT: u16 = 0xD6CF;
        /// written to TESTING_EXIT after the status: the emulator ends
        pub const EXIT_NOW: u8 = 0x42;
    }
}

group! {
    /// The MEGA65 program's chat overlay file, `ssnail.ovl` (docs/mega65-program.md,
    /// "Overlays"): this header, then the bytes for the overlay region. Not a MEGA65 fact but
    /// the program's own file, which its build writes (src/ovl.s) and its C reads
    /// (src/ovlload.c), and `ssnail-d81` and the program's tests read; it sits here with the
    /// generator.
    pub mod overlay, prefix "OVL_", source "docs/mega65-program.md, Overlays" {
        /// The file's first 4 bytes, "SNLO" read as a little-endian word
        pub const MAGIC: u32 = 0x4F4C_4E53;
        /// Byte 4: the header's version
        pub const VERSION: u8 = 1;
        /// Bytes 6-7: the length of the overlay's bytes after the header
        pub const LEN: usize = 6;
        /// The header's length
        pub const HEADER_LEN: usize = 8;
    }
}

/// The overlay file's name on the D81 (and, in any letter case, on the SD card); the C program
/// looks for the same (src/ovlload.c `ovl_file`).
pub const OVERLAY_FILE: &str = "ssnail.ovl";

/// Every group, in the order of the header.
pub fn groups() -> Vec<Group> {
    vec![
        hyppo::group(),
        dirent::group(),
        d7fe::group(),
        f011::group(),
        sd::group(),
        keyboard::group(),
        math::group(),
        dma::group(),
        io_area::group(),
        vic::group(),
        cia1::group(),
        model::group(),
        d81::group(),
        testing::group(),
        overlay::group(),
    ]
}

/// The C header's text (mega65/include/mega65_io.h).
pub fn c_header() -> String {
    let mut o = String::from(
        "/* mega65_io.h: MEGA65 I/O registers, Hyppo calls and the readdir record the program and\n \
         * the headless MEGA65 share (docs/spec/mega65.md).\n \
         * GENERATED from the ssnail-format crate (format/src/mega65.rs); do not edit. Regenerate:\n \
         *   cargo run -q -p ssnail-format --example mega65_io > mega65/include/mega65_io.h */\n\
         #ifndef MEGA65_IO_H\n#define MEGA65_IO_H\n",
    );
    facts::c_defines(&mut o, &groups(), 28);
    o.push_str("#endif\n");
    o
}

/// The same constants for ca65 (mega65/include/mega65_io.inc), the same names.
pub fn ca65_include() -> String {
    let mut o = String::from(
        "; mega65_io.inc: MEGA65 I/O registers, Hyppo calls and the readdir record for ca65, the\n\
         ; constants of mega65_io.h with the same names (docs/spec/mega65.md).\n\
         ; GENERATED from the ssnail-format crate (format/src/mega65.rs); do not edit. Regenerate:\n\
         ;   cargo run -q -p ssnail-format --example mega65_io -- --ca65 > mega65/include/mega65_io.inc\n\
         .ifndef MEGA65_IO_INC\nMEGA65_IO_INC = 1\n",
    );
    facts::ca65_defines(&mut o, &groups(), 28);
    o.push_str(".endif\n");
    o
}
