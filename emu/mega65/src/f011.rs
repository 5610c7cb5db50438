//! The F011 floppy controller ($D080–$D08F, C65 and MEGA65 personalities) reading 512-byte sectors
//! from a mounted D81 image into the F011 buffer at $FFD6C00.
//!
//! Registers: $D080 control (bits 0–2 drive, bit 3 side, bit 5 motor), $D081 command ($40/$41 read
//! sector, $80/$81 write sector, $10 step out, $18 step in, $14 wait one step time, $00/$01 cancel
//! / reset buffer pointer), $D082 status A (7 BUSY, 6 DRQ, 5 EQ, 4 RNF, 1 PROT, 0 TK0), $D083
//! status B (7 RDREQ, 3 DSKIN, 1 IRQ), $D084 track (0–79), $D085 sector (1–10), $D086 side (0/1),
//! $D087 data port, $D089 step time. Sector (track t, side s, sector n) of a D81 lies at byte
//! ((t·2 + s)·10 + n − 1)·512, i.e. 1581 logical track t+1, sectors 2(n−1) + 20s and the one after.
//!
//! What mega65-core's sdcardio.vhdl (76fac1b) does, and this model with it:
//! * The head: $10 moves it out one track, $18 in one (lines 2737–2808); $10, $14 and $18 keep
//!   BUSY for $D089 × 62.5 µs (lines 2761–2763, 2808–2810; iomap.txt line 339: reset $80 = 8 ms).
//!   TK0 = head over track 0 (lines 2200–2205).
//! * A D81 image on the SD card (the usual case, [`Drive::Image`]) is addressed by the track,
//!   sector and side registers alone (lines 2213–2232); the head does not matter. Without an
//!   image, a read sets RNF at once and never BUSY (lines 2597–2600), and DSKIN ($D083.3) is 0
//!   (lines 2180–2184, 1220–1225). A found sector is in the buffer at once here (with ~2 ms of
//!   emulated time charged to the CPU).
//! * A real drive ([`Drive::Real`], here holding the D81's contents) finds a sector only when the
//!   track number in the sector headers under the head equals $D084 (mfm_decoder.vhdl line 361),
//!   so the head must have been stepped there; DSKIN always reads 1 (lines 2169–2173). A read
//!   that finds nothing stays BUSY for 10 rotations (~2 s at 300 rpm) and ends with RNF (lines
//!   2580–2592, 4484–4520); with no disk there are no index pulses and the 250 ms per-rotation
//!   timeout gives the same ~2.5 s. A found sector takes 20 ms here (a tenth of a rotation: the
//!   next sector of a track read in order).
//!   The automatic track seek of $D696 (AUTOTUNE) is not modelled.

use super::machine::{Machine, CPU_HZ};
use super::sectors::{SectorBuffers, SECTOR_SIZE};
use ssnail_format::mega65::f011::{
    COMMAND_READ, COMMAND_RESET_BUFFER, COMMAND_STEP_IN, COMMAND_STEP_OUT, COMMAND_WRITE,
    STATUS_A_BUSY as BUSY, STATUS_A_DRQ as DRQ, STATUS_A_EQ as EQ, STATUS_A_LOST as LOST,
    STATUS_A_PROT as PROT, STATUS_A_RNF as RNF, STATUS_A_TK0 as TK0, STATUS_B_DISKIN as DISKIN,
    STATUS_B_IRQ as IRQ, STATUS_B_RDREQ as RDREQ, STATUS_B_WTREQ as WTREQ,
};

pub use ssnail_disk::D81_SIZE;

/// What drive 0 is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Drive {
    /// A D81 image on the SD card (sdcardio.vhdl's disk-image path).
    #[default]
    Image,
    /// A real 3.5" drive (the MFM path): sectors only under the head.
    Real,
}

/// Cycles one F011 step-time unit lasts (62.5 µs).
const STEP_UNIT: u64 = CPU_HZ * 625 / 10_000_000;
/// A real drive's give-up time: 10 rotations of 200 ms.
const REAL_TIMEOUT: u64 = CPU_HZ * 2;
/// A real drive's time to a found sector: one of the 10 sectors of a 200 ms rotation.
const REAL_FOUND: u64 = CPU_HZ / 50;

/// A command that finishes later: when, and the status bits it leaves.
#[derive(Clone, Copy, Debug)]
struct Pending {
    done_at: u64,
    rnf: bool,
    found: bool,
}

#[derive(Clone, Debug)]
pub struct F011 {
    image: Option<Vec<u8>>,
    pub drive: Drive,
    control: u8,
    command: u8,
    status_a: u8,
    status_b: u8,
    track: u8,
    sector: u8,
    side: u8,
    /// The physical track under the head (0 = outermost).
    pub head_track: u8,
    step_time: u8,
    pending: Option<Pending>,
    /// CPU-side pointer into the buffer for $D087.
    pointer: u16,
    /// Sectors read so far (statistics).
    pub sectors_read: u64,
    /// Head steps so far (statistics).
    pub steps: u64,
}

impl Default for F011 {
    fn default() -> Self {
        F011 {
            image: None,
            drive: Drive::Image,
            control: 0,
            command: 0,
            status_a: 0,
            status_b: 0,
            track: 0,
            sector: 0,
            side: 0,
            head_track: 0,
            step_time: 0x80,
            pending: None,
            pointer: 0,
            sectors_read: 0,
            steps: 0,
        }
    }
}

impl F011 {
    /// Ejects the disk and resets the controller (Hyppo's d81detach; the buffer stays).
    pub fn detach(&mut self) {
        *self = F011::default();
    }

    /// Resets the controller with `image` in drive 0 as a D81 image on the SD card (Hyppo's
    /// d81attach).
    pub fn attach(&mut self, image: Vec<u8>) {
        self.detach();
        self.mount(image);
    }

    /// Resets the controller with drive 0 a real drive holding `image` (None: no disk).
    pub fn insert_real(&mut self, image: Option<Vec<u8>>) {
        self.detach();
        self.drive = Drive::Real;
        if let Some(img) = image {
            self.mount(img);
        }
    }

    pub fn mount(&mut self, image: Vec<u8>) {
        self.image = Some(image);
        self.status_a |= PROT; // write protected (read-only mount)
    }

    pub fn mounted(&self) -> bool {
        self.image.is_some()
    }

    fn disk_in(&self) -> bool {
        self.drive == Drive::Real || self.image.is_some()
    }

    /// The image offset of the sector the registers name, if it is on the disk.
    fn sector_offset(&self) -> Option<usize> {
        let t = self.track as usize;
        let s = self.side as usize & 1;
        let n = self.sector as usize;
        let offset = ((t * 2 + s) * 10 + n.wrapping_sub(1)) * 512;
        ((1..=10).contains(&n)
            && t < 80
            && self
                .image
                .as_ref()
                .is_some_and(|img| offset + 512 <= img.len()))
        .then_some(offset)
    }
}

impl Machine {
    /// Mounts a D81 image's contents in drive 0 as a real drive would hold the disk (sectors
    /// found only under the head); `image` None = a real drive with no disk.
    pub fn mount_real_drive(&mut self, image: Option<Vec<u8>>) {
        self.f011.insert_real(image);
    }
}

impl F011 {
    /// Finishes a command whose time has come.
    fn settle(&mut self, now: u64, buffers: &mut SectorBuffers) {
        let Some(p) = self.pending else {
            return;
        };
        if now < p.done_at {
            return;
        }
        self.pending = None;
        if p.found {
            self.fill_buffer(buffers);
        }
        self.status_a &= !BUSY;
        if p.rnf {
            self.status_a |= RNF;
        }
        self.status_b |= IRQ;
    }

    fn fill_buffer(&mut self, buffers: &mut SectorBuffers) {
        let Some(offset) = self.sector_offset() else {
            return;
        };
        let img = self.image.as_ref().unwrap();
        buffers
            .f011_mut()
            .copy_from_slice(&img[offset..offset + SECTOR_SIZE]);
        self.pointer = 0;
        self.status_a |= DRQ;
        self.status_b |= RDREQ;
        self.sectors_read += 1;
    }

    /// A read of $D080 + `reg` at cycle `now`.
    pub(crate) fn read(&mut self, now: u64, buffers: &mut SectorBuffers, reg: u8) -> u8 {
        self.settle(now, buffers);
        match reg {
            0 => self.control,
            1 => self.command,
            2 => (self.status_a & !TK0) | if self.head_track == 0 { TK0 } else { 0 },
            3 => (self.status_b & !DISKIN) | if self.disk_in() { DISKIN } else { 0 },
            4 => self.track,
            5 => self.sector,
            6 => self.side,
            7 => {
                let v = buffers.f011()[self.pointer as usize & 0x1FF];
                self.pointer = (self.pointer + 1) & 0x1FF;
                self.status_a &= !DRQ;
                if self.pointer == 0 {
                    self.status_a |= EQ; // the whole buffer has been read
                }
                v
            }
            9 => self.step_time,
            _ => 0,
        }
    }

    /// A write of `v` to $D080 + `reg` at cycle `now`; returns the cycles the CPU is held.
    pub(crate) fn write(&mut self, now: u64, buffers: &mut SectorBuffers, reg: u8, v: u8) -> u64 {
        self.settle(now, buffers);
        match reg {
            0 => self.control = v,
            1 => return self.run_command(now, buffers, v),
            4 => self.track = v,
            5 => self.sector = v,
            6 => self.side = v,
            7 => {
                let p = self.pointer as usize & 0x1FF;
                buffers.f011_mut()[p] = v;
                self.pointer = (self.pointer + 1) & 0x1FF;
            }
            9 => self.step_time = v,
            _ => {}
        }
        0
    }

    /// Starts command `v`; returns the cycles the CPU is held.
    fn run_command(&mut self, now: u64, buffers: &mut SectorBuffers, v: u8) -> u64 {
        self.command = v;
        if v == 0x00 {
            // Cancel (sdcardio.vhdl lines 2819–2826).
            self.pending = None;
            self.status_a &= !BUSY;
            return 0;
        }
        self.status_a &= !(BUSY | DRQ | EQ | RNF | LOST);
        self.status_b &= !(RDREQ | WTREQ | IRQ);
        let step_busy = self.step_time as u64 * STEP_UNIT;
        match v & 0xF8 {
            COMMAND_READ => match self.drive {
                Drive::Image => {
                    if self.sector_offset().is_some() {
                        self.fill_buffer(buffers);
                        self.status_b |= IRQ;
                        // ~2 ms of emulated time per sector (300 rpm, 10 sectors per track).
                        return 81_000;
                    } else {
                        self.status_a |= RNF; // record not found (or no image)
                        self.status_b |= IRQ;
                    }
                }
                Drive::Real => {
                    let found = self.sector_offset().is_some() && self.head_track == self.track;
                    self.status_a |= BUSY;
                    self.pending = Some(Pending {
                        done_at: now + if found { REAL_FOUND } else { REAL_TIMEOUT },
                        rnf: !found,
                        found,
                    });
                }
            },
            COMMAND_WRITE => {
                // Read-only mount: the write fails as on a protected disk.
                self.status_a |= RNF;
                self.status_b |= IRQ;
            }
            COMMAND_STEP_OUT | COMMAND_STEP_IN => {
                if v & 0xFC == 0x14 {
                    // $14: one step time of BUSY without a step.
                } else if v & (COMMAND_STEP_IN ^ COMMAND_STEP_OUT) != 0 {
                    self.head_track = (self.head_track + 1).min(85);
                    self.steps += 1;
                } else {
                    self.head_track = self.head_track.saturating_sub(1);
                    self.steps += 1;
                }
                self.status_a |= BUSY;
                self.pending = Some(Pending {
                    done_at: now + step_busy,
                    rnf: false,
                    found: false,
                });
            }
            0x00 if v & COMMAND_RESET_BUFFER != 0 => self.pointer = 0,
            _ => {}
        }
        0
    }
}
