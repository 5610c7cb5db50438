//! The two 512-byte sector buffers inside $FFD6000–$FFD6FFF (spec §M2.1, §M4.2): the F011
//! floppy controller's at $FFD6C00 and the SD card's at $FFD6E00.
//!
//! Hypervisor mode sees the whole 4 KB area; a user program sees only the buffer that `$D689`
//! bit 7 selects (1 = SD, 0 = F011), mirrored 8× over $FFD6000–$FFD6FFF, and after SD command
//! $81 also at $DE00–$DFFF (spec §M4.1–§M4.2; mega65-core sdcardio.vhdl
//! `resolve_sector_buffer_address`, xemu `disk_buffer_user_reader`). Programs here always run in
//! user mode (the hypervisor's calls are native, hyppo.rs), so the rest of the area — Hyppo's
//! scratch below $FFD6C00 — is never visible and is not kept.
//!
//! The F011 (f011.rs) fills and drains its buffer, the hypervisor's readfile (hyppo.rs) fills
//! the SD one, and the bus (bus.rs, and with it DMA) reads and writes the user view.

/// Bytes in one sector buffer.
pub const SECTOR_SIZE: usize = 512;

// The program reads the buffers at the addresses mega65_io.h names (F011_BUFFER, SD_BUFFER):
// both lie in the area the bus decodes as the user view.
const _: () = {
    use ssnail_format::mega65::{f011, sd};
    let area = super::bus::SECTOR_AREA_BASE;
    assert!(f011::BUFFER >= area && f011::BUFFER + SECTOR_SIZE as u32 <= area + 0x1000);
    assert!(sd::BUFFER >= area && sd::BUFFER + SECTOR_SIZE as u32 <= area + 0x1000);
};

/// The F011 and SD sector buffers.
#[derive(Clone, Debug)]
pub struct SectorBuffers {
    f011: Box<[u8; SECTOR_SIZE]>,
    sd: Box<[u8; SECTOR_SIZE]>,
}

impl Default for SectorBuffers {
    fn default() -> Self {
        SectorBuffers {
            f011: Box::new([0; SECTOR_SIZE]),
            sd: Box::new([0; SECTOR_SIZE]),
        }
    }
}

impl SectorBuffers {
    /// The F011 buffer ($FFD6C00).
    pub fn f011(&self) -> &[u8; SECTOR_SIZE] {
        &self.f011
    }

    pub fn f011_mut(&mut self) -> &mut [u8; SECTOR_SIZE] {
        &mut self.f011
    }

    /// The SD buffer ($FFD6E00).
    pub fn sd(&self) -> &[u8; SECTOR_SIZE] {
        &self.sd
    }

    pub fn sd_mut(&mut self) -> &mut [u8; SECTOR_SIZE] {
        &mut self.sd
    }

    /// The buffer user mode sees: `bufsel_sd` is `$D689` bit 7.
    fn user_buffer(&mut self, bufsel_sd: bool) -> &mut [u8; SECTOR_SIZE] {
        if bufsel_sd {
            &mut self.sd
        } else {
            &mut self.f011
        }
    }

    /// A user-mode read at `offset` into $FFD6000–$FFD6FFF (or the $DE00 window): the selected
    /// buffer, mirrored every 512 bytes.
    pub fn user_read(&mut self, bufsel_sd: bool, offset: u32) -> u8 {
        self.user_buffer(bufsel_sd)[offset as usize % SECTOR_SIZE]
    }

    /// A user-mode write at `offset` into $FFD6000–$FFD6FFF (or the $DE00 window).
    pub fn user_write(&mut self, bufsel_sd: bool, offset: u32, v: u8) {
        self.user_buffer(bufsel_sd)[offset as usize % SECTOR_SIZE] = v;
    }
}
