//! The F011 floppy controller ($D080–$D08F, C65 and MEGA65 personalities) reading 512-byte sectors
//! from a mounted D81 image into the F011 buffer at $FFD6C00.
//!
//! Registers: $D080 control (bits 0–2 drive, bit 3 side, bit 5 motor), $D081 command ($40/$41 read
//! sector, $80/$81 write sector, $10/$18 step out/in, $00/$01 cancel / reset buffer pointer),
//! $D082 status A (7 BUSY, 6 DRQ, 5 EQ, 4 RNF, 1 PROT, 0 TK0), $D083 status B (7 RDREQ, 3 DSKIN,
//! 1 IRQ), $D084 track (0–79), $D085 sector (1–10), $D086 side (0/1), $D087 data port.
//! Sector (track t, side s, sector n) of a D81 lies at byte ((t·2 + s)·10 + n − 1)·512, i.e. 1581
//! logical track t+1, sectors 2(n−1) + 20s and the one after. Reads complete instantly.

use super::machine::Machine;

pub use ssnail_disk::D81_SIZE;

#[derive(Clone, Debug, Default)]
pub struct F011 {
    image: Option<Vec<u8>>,
    control: u8,
    command: u8,
    status_a: u8,
    status_b: u8,
    track: u8,
    sector: u8,
    side: u8,
    head_track: u8,
    /// CPU-side pointer into the buffer for $D087.
    pointer: u16,
    /// Sectors read so far (statistics).
    pub sectors_read: u64,
}

impl F011 {
    pub fn mount(&mut self, image: Vec<u8>) {
        self.image = Some(image);
        self.status_b |= 0x08;
        self.status_a |= 0x01 | 0x02; // track 0, write protected (read-only mount)
    }

    pub fn mounted(&self) -> bool {
        self.image.is_some()
    }
}

impl Machine {
    pub(crate) fn f011_read(&mut self, reg: u8) -> u8 {
        let f = &mut self.f011;
        match reg {
            0 => f.control,
            1 => f.command,
            2 => f.status_a,
            3 => f.status_b,
            4 => f.track,
            5 => f.sector,
            6 => f.side,
            7 => {
                let v = self.sector_area[0xC00 + (f.pointer as usize & 0x1FF)];
                f.pointer = (f.pointer + 1) & 0x1FF;
                f.status_a &= !0x40;
                if f.pointer == 0 {
                    f.status_a |= 0x20; // EQ: the whole buffer has been read
                }
                v
            }
            _ => 0,
        }
    }

    pub(crate) fn f011_write(&mut self, reg: u8, v: u8) {
        match reg {
            0 => self.f011.control = v,
            1 => self.f011_command(v),
            4 => self.f011.track = v,
            5 => self.f011.sector = v,
            6 => self.f011.side = v,
            7 => {
                let p = self.f011.pointer as usize & 0x1FF;
                self.sector_area[0xC00 + p] = v;
                self.f011.pointer = (self.f011.pointer + 1) & 0x1FF;
            }
            _ => {}
        }
    }

    fn f011_command(&mut self, v: u8) {
        let f = &mut self.f011;
        f.command = v;
        f.status_a &= !(0x80 | 0x40 | 0x20 | 0x10 | 0x04);
        f.status_b &= !(0x80 | 0x40 | 0x02);
        match v & 0xF8 {
            0x40 => {
                let t = f.track as usize;
                let s = f.side as usize & 1;
                let n = f.sector as usize;
                let offset = ((t * 2 + s) * 10 + n.wrapping_sub(1)) * 512;
                let ok = (1..=10).contains(&n)
                    && t < 80
                    && f.image
                        .as_ref()
                        .is_some_and(|img| offset + 512 <= img.len());
                if ok {
                    let img = f.image.as_ref().unwrap();
                    self.sector_area[0xC00..0xE00].copy_from_slice(&img[offset..offset + 512]);
                    let f = &mut self.f011;
                    f.pointer = 0;
                    f.status_a |= 0x40;
                    f.status_b |= 0x80 | 0x02;
                    f.sectors_read += 1;
                    // ~2 ms of emulated time per sector (300 rpm, 10 sectors per track).
                    self.cycles += 81_000;
                } else {
                    f.status_a |= 0x10; // record not found
                    f.status_b |= 0x02;
                }
            }
            0x80 => {
                // Read-only mount: the write fails as on a protected disk.
                f.status_a |= 0x10;
                f.status_b |= 0x02;
            }
            0x10 => {
                if v & 4 == 0 {
                    f.head_track = f.head_track.saturating_sub(1);
                }
                if f.head_track == 0 {
                    f.status_a |= 1;
                }
            }
            0x18 => {
                f.head_track = (f.head_track + 1).min(85);
                f.status_a &= !1;
            }
            0x00 if v & 1 != 0 => f.pointer = 0,
            _ => {}
        }
    }
}
