//! The F018 "DMAgic" controller (spec §M3): F018A/F018B lists, enhanced option bytes, COPY/FILL
//! (plus SWAP and MIX-as-COPY), chaining, held and stepped addresses with 8.8 skip rates.
//!
//! Every byte goes through `read_phys`/`write_phys`, so a copy with a held destination on a device
//! register hands each byte to that register's write handler in order. The CPU is stalled while a
//! job runs: the job's cost (2 cycles per copied byte, 1 per filled byte at 40.5 MHz, matching the
//! Book's ≈20 MB/s copy and ≈40.5 MB/s fill) is added to the cycle count.

use super::bus::IO_BASE;
use super::io::io;
use super::machine::Machine;
use ssnail_format::mega65::dma;

/// The DMA controller's registers ($D700–$D70F, spec §M3.1): the list address and the list
/// format. A job runs on the machine's bus, so starting one is a `Machine` method.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Dma {
    /// The job list's 28-bit address ($D700–$D702, $D704, $D70E). It advances as a job reads
    /// its list and is left after the last list byte read (gs4510.vhdl at 76fac1b5:
    /// `reg_dmagic_addr <= reg_dmagic_addr + 1` in `DMAgicTrigger`, `DMAgicReadOptions` and
    /// every `DMAgicReadList` step but the entry's last, and nothing puts it back), so a job
    /// started by writing only $D705 reads its list from that address's upper bits and the
    /// written low byte. xemu does the same (dma65.c, `list_addr++` per list byte).
    list: u32,
    /// $D703 bit 0: lists are F018B (12-byte entries), else F018A (11 bytes).
    f018b: bool,
}

/// Where the job list is read from.
#[derive(Clone, Copy)]
enum ListAt {
    /// 28-bit physical address.
    Phys(u32),
    /// 16-bit address through the CPU's current memory map (ETRIGMAPD, inline jobs).
    Cpu(u16),
}

/// Options that persist along a chain and reset after the last entry.
#[derive(Clone, Copy)]
struct Options {
    f018b: bool,
    src_mb: u8,
    dst_mb: u8,
    /// 8.8 fixed-point skip rates.
    src_skip: u16,
    dst_skip: u16,
    transparent: Option<u8>,
    transparent_value: u8,
    count_hi: u8,
    cross_mb: bool,
}

/// The registers' offsets in the I/O area and the options by the names the program uses
/// (ssnail_format::mega65::dma).
const ADDRLSB_TRIGGER: u16 = io(dma::ADDRLSB_TRIGGER);
const ADDRMSB: u16 = io(dma::ADDRMSB);
const ADDRBANK: u16 = io(dma::ADDRBANK);
const MODE: u16 = io(dma::MODE);
const ADDRMB: u16 = io(dma::ADDRMB);
const ETRIGGER: u16 = io(dma::ETRIGGER);
const ETRIGGER_MAPPED: u16 = io(dma::ETRIGGER_MAPPED);
const INLINE: u16 = io(dma::INLINE);
const ADDRLSB: u16 = io(dma::ADDRLSB);

impl Machine {
    pub(crate) fn dma_register_write(&mut self, off: u16, v: u8) {
        match off {
            ADDRLSB_TRIGGER => {
                // Also clears bits 23–27 (gs4510.vhdl: "in case an enhanced job had set them").
                self.dma.list = (self.dma.list & 0x7F_FF00) | v as u32;
                let n = self.dma_job(ListAt::Phys(self.dma.list), false).1;
                self.dma.list = self.dma.list.wrapping_add(n) & 0xFFF_FFFF;
            }
            ADDRMSB => self.dma.list = (self.dma.list & !0xFF00) | (v as u32) << 8,
            ADDRBANK => {
                // Bits 16–22; writing it also clears bits 23–27.
                self.dma.list = (self.dma.list & 0xFFFF) | ((v as u32 & 0x7F) << 16);
            }
            MODE => self.dma.f018b = v & 1 != 0,
            ADDRMB => self.dma.list = (self.dma.list & 0xF_FFFF) | (v as u32) << 20,
            ETRIGGER => {
                self.dma.list = (self.dma.list & !0xFF) | v as u32;
                let n = self.dma_job(ListAt::Phys(self.dma.list), true).1;
                self.dma.list = self.dma.list.wrapping_add(n) & 0xFFF_FFFF;
            }
            ETRIGGER_MAPPED => {
                self.dma.list = (self.dma.list & !0xFF) | v as u32;
                let n = self.dma_job(ListAt::Cpu(self.dma.list as u16), true).1;
                self.dma.list = self.dma.list.wrapping_add(n) & 0xFFF_FFFF;
            }
            INLINE => {
                // Inline job: the list follows the STA $D707 instruction (its address is the
                // list address's bits 0–15); the CPU resumes after it.
                let at = self.pc;
                self.dma.list = (self.dma.list & !0xFFFF) | at as u32;
                let (end, n) = self.dma_job(ListAt::Cpu(at), true);
                self.dma.list = self.dma.list.wrapping_add(n) & 0xFFF_FFFF;
                if let ListAt::Cpu(e) = end {
                    self.pc = e;
                }
            }
            ADDRLSB => self.dma.list = (self.dma.list & !0xFF) | v as u32,
            _ => {}
        }
        self.io_regs[off as usize] = v;
    }

    fn list_byte(&mut self, at: &mut ListAt) -> u8 {
        match at {
            ListAt::Phys(p) => {
                let v = self.read_phys(*p);
                *p = p.wrapping_add(1);
                v
            }
            ListAt::Cpu(a) => {
                let v = self.rd(*a);
                *a = a.wrapping_add(1);
                v
            }
        }
    }

    /// The list address registers as the CPU reads them (gs4510.vhdl at 76fac1b5, `read_data`'s
    /// DMAgicRegister case): $D700 and $D705 its bits 0–7, $D701 bits 8–15, $D702 the last
    /// written bit 7 (WITHIO) and bits 16–22, $D704 bits 20–27; `None` for the other registers.
    pub(crate) fn dma_register_read(&self, off: u16) -> Option<u8> {
        let a = self.dma.list;
        match off {
            ADDRLSB_TRIGGER | ETRIGGER => Some(a as u8),
            ADDRMSB => Some((a >> 8) as u8),
            ADDRBANK => Some(self.io_regs[ADDRBANK as usize] & 0x80 | (a >> 16) as u8 & 0x7F),
            ADDRMB => Some((a >> 20) as u8),
            _ => None,
        }
    }

    /// Runs a job (and its chain); returns where the list reading stopped and how many list
    /// bytes it read.
    fn dma_job(&mut self, mut at: ListAt, enhanced: bool) -> (ListAt, u32) {
        let defaults = Options {
            f018b: self.dma.f018b,
            src_mb: 0,
            dst_mb: 0,
            src_skip: 0x100,
            dst_skip: 0x100,
            transparent: None,
            transparent_value: 0,
            count_hi: 0,
            cross_mb: self.io_regs[MODE as usize] & 2 != 0,
        };
        let mut o = defaults;
        let mut list_bytes = 0u64;
        loop {
            if enhanced {
                loop {
                    let opt = self.list_byte(&mut at);
                    list_bytes += 1;
                    if opt == dma::OPT_END {
                        break;
                    }
                    let arg = if opt >= 0x80 {
                        list_bytes += 1;
                        self.list_byte(&mut at)
                    } else {
                        0
                    };
                    match opt {
                        dma::OPT_CROSS_MB => o.cross_mb = true,
                        0x06 => o.transparent = None,
                        0x07 => o.transparent = Some(o.transparent_value),
                        dma::OPT_F018A => o.f018b = false,
                        dma::OPT_F018B => o.f018b = true,
                        dma::OPT_SRC_MB => o.src_mb = arg,
                        dma::OPT_DST_MB => o.dst_mb = arg,
                        0x82 => o.src_skip = (o.src_skip & 0xFF00) | arg as u16,
                        0x83 => o.src_skip = (o.src_skip & 0x00FF) | (arg as u16) << 8,
                        0x84 => o.dst_skip = (o.dst_skip & 0xFF00) | arg as u16,
                        0x85 => o.dst_skip = (o.dst_skip & 0x00FF) | (arg as u16) << 8,
                        0x86 => {
                            o.transparent_value = arg;
                            if o.transparent.is_some() {
                                o.transparent = Some(arg);
                            }
                        }
                        0x90 => o.count_hi = arg,
                        // Line drawing, floppy flux modes etc. are not used by programs we run.
                        _ => {}
                    }
                }
            }
            let mut e = [0u8; 12];
            let len = if o.f018b { 12 } else { 11 };
            for b in e.iter_mut().take(len) {
                *b = self.list_byte(&mut at);
            }
            list_bytes += len as u64;
            let cmd = e[0];
            let mut count = e[1] as u32 | (e[2] as u32) << 8 | (o.count_hi as u32) << 16;
            if count == 0 {
                count = 0x1_0000;
            }
            let src16 = e[3] as u32 | (e[4] as u32) << 8;
            let dst16 = e[6] as u32 | (e[7] as u32) << 8;
            let (src_bank, dst_bank) = (e[5], e[8]);
            let (src, dst) = if o.f018b {
                let sub = e[9];
                (
                    Stream {
                        mb: o.src_mb as u32 + ((src_bank as u32 >> 4) & 7),
                        pos: ((src_bank as u32 & 0x0F) << 16 | src16) << 8,
                        step: if sub & dma::SUB_SRC_HOLD != 0 {
                            0
                        } else {
                            o.src_skip as u32
                        },
                        down: cmd & 0x10 != 0,
                        io: src_bank & 0x80 != 0,
                    },
                    Stream {
                        mb: o.dst_mb as u32 + ((dst_bank as u32 >> 4) & 7),
                        pos: ((dst_bank as u32 & 0x0F) << 16 | dst16) << 8,
                        step: if sub & dma::SUB_DST_HOLD != 0 {
                            0
                        } else {
                            o.dst_skip as u32
                        },
                        down: cmd & 0x20 != 0,
                        io: dst_bank & 0x80 != 0,
                    },
                )
            } else {
                let s = |mb: u8, bank: u8, a16: u32, skip: u16| Stream {
                    mb: mb as u32,
                    pos: ((bank as u32 & 0x0F) << 16 | a16) << 8,
                    step: if bank & 0x10 != 0 { 0 } else { skip as u32 },
                    down: bank & 0x40 != 0,
                    io: bank & 0x80 != 0,
                };
                (
                    s(o.src_mb, src_bank, src16, o.src_skip),
                    s(o.dst_mb, dst_bank, dst16, o.dst_skip),
                )
            };
            let cycles = self.dma_transfer(cmd & 3, count, src, dst, &o);
            self.cycles += cycles;
            if cmd & 4 == 0 {
                break;
            }
        }
        self.cycles += list_bytes;
        (at, list_bytes as u32)
    }

    fn dma_transfer(
        &mut self,
        op: u8,
        count: u32,
        mut src: Stream,
        mut dst: Stream,
        o: &Options,
    ) -> u64 {
        let io_mode = self.io_mode;
        let fill = src.pos >> 8;
        for _ in 0..count {
            let d = dst.addr(o.cross_mb, io_mode);
            match op {
                dma::FILL => {
                    // FILL: the value is the low byte of the source address.
                    self.write_phys(d, fill as u8);
                }
                2 => {
                    let s = src.addr(o.cross_mb, io_mode);
                    let (x, y) = (self.read_phys(s), self.read_phys(d));
                    self.write_phys(s, y);
                    self.write_phys(d, x);
                    src.advance();
                }
                _ => {
                    let s = src.addr(o.cross_mb, io_mode);
                    let v = self.read_phys(s);
                    if o.transparent != Some(v) {
                        self.write_phys(d, v);
                    }
                    src.advance();
                }
            }
            dst.advance();
        }
        count as u64 * if op == 3 { 1 } else { 2 }
    }
}

/// One side of a transfer: megabyte, 20.8 fixed-point position inside it, step and direction.
#[derive(Clone, Copy)]
struct Stream {
    mb: u32,
    pos: u32,
    step: u32,
    down: bool,
    io: bool,
}

impl Stream {
    fn addr(&self, cross_mb: bool, io_mode: u8) -> u32 {
        let a20 = (self.pos >> 8) & 0xF_FFFF;
        if self.io && self.mb == 0 && (a20 & 0xFF000) == 0x0D000 {
            return IO_BASE + ((io_mode as u32) << 12) + (a20 & 0xFFF);
        }
        if cross_mb {
            ((self.mb << 20) + (self.pos >> 8)) & 0xFFF_FFFF
        } else {
            ((self.mb << 20) | a20) & 0xFFF_FFFF
        }
    }

    fn advance(&mut self) {
        self.pos = if self.down {
            self.pos.wrapping_sub(self.step)
        } else {
            self.pos.wrapping_add(self.step)
        };
    }
}
