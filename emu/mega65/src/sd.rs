//! The SD-card controller registers a user program sees ($D680–$D689, spec §M4.1). The card
//! itself is a host directory served by the hypervisor's file calls (hyppo.rs); raw sector
//! commands need a FAT32 card image and report an error here (spec §M4.3, a model).

use ssnail_format::mega65::sd::BUFSEL_SD;

/// SD-card controller state.
#[derive(Clone, Debug, Default)]
pub struct SdCard {
    /// $D689 bit 7 (BUFSEL): user mode sees the SD buffer (1) or the F011 buffer (0), spec §M4.2.
    pub(crate) bufsel_sd: bool,
    /// $D681–$D684: the sector number.
    sector: [u8; 4],
    /// $D680 bit 6: the last raw command failed.
    error: bool,
    /// Command $81 maps the selected sector buffer at $DE00–$DFFF ($82, and every return from
    /// the hypervisor, unmaps it; spec §M4.2, §M5.5).
    pub(crate) window: bool,
}

impl SdCard {
    /// A read of $D680 + `reg` (0–$F); None for registers this controller does not model.
    pub(crate) fn read(&self, reg: u8) -> Option<u8> {
        match reg {
            // Status: never busy; bit 6 = error of the last raw command.
            0x0 => Some((if self.error { 0x40 } else { 0 }) | 0x10),
            0x1..=0x4 => Some(self.sector[(reg - 1) as usize]),
            0x9 => Some(if self.bufsel_sd { BUFSEL_SD } else { 0 }),
            _ => None,
        }
    }

    /// A write to $D680 + `reg`; false for registers this controller does not model.
    pub(crate) fn write(&mut self, reg: u8, v: u8) -> bool {
        match reg {
            0x0 => {
                // Raw sector commands need a real FAT32 card image; with a host directory as the
                // card only the buffer commands work, and a raw read reports ERROR.
                self.error = matches!(v, 0x02..=0x06);
                match v {
                    0x81 => self.window = true,
                    0x82 => self.window = false,
                    _ => {}
                }
            }
            0x1..=0x4 => self.sector[(reg - 1) as usize] = v,
            0x9 => self.bufsel_sd = v & BUFSEL_SD != 0,
            _ => return false,
        }
        true
    }
}
