//! The CPU's attic-RAM window at $8000000 and $D7FE, the register that chooses which RAM it shows
//! and how reads of it are cached (mega65-core at 76fac1b).
//!
//! * $D7FE bit 4 SELSDRAM: "Selects SDRAM instead of HyperRAM for Attic RAM where available"
//!   (iomap.txt line 1415; written in gs4510.vhdl lines 3616-3625, signal
//!   `sdram_t_or_hyperram_f_int`, reset 0 at line 291). The R4-R6 top level connects the CPU's
//!   expansion-RAM port to the SDRAM controller when it is set and to the HyperRAM controller
//!   otherwise (mega65r4.vhdl lines 1285-1308); R3 has no SDRAM and no such switch
//!   (mega65r3.vhdl). So on R4-R6 after reset the CPU reads HyperRAM at $8000000.
//! * SSNAIL's memory map (spec §2, SSNAIL.md "Memory map"): R3: HyperRAM at SSNAIL $8000000;
//!   R4-R6: SDRAM at SSNAIL $8000000-$BFFFFFF and HyperRAM at SSNAIL $C000000 (used by 72 MB
//!   images). Modelled here: CPU $8000000 + x reads SSNAIL $8000000 + x on R3 and on R4-R6 with
//!   SELSDRAM; on R4-R6 without it, the 8 MiB HyperRAM, which is SSNAIL's $C000000 + x when
//!   SSNAIL's memory reaches that far (72 MB) and otherwise RAM of its own that SSNAIL does not
//!   use. With SDRAM selected the CPU sees 64 MiB; beyond it (and beyond 8 MiB of HyperRAM)
//!   reads are unpopulated ($FF).
//! * Bit 2 SLOWCACHE (reset 1, gs4510.vhdl line 579): a read whose address bits 26-3 match the
//!   controller's current 8-byte cache line is served from that line (gs4510.vhdl lines
//!   2402-2433); the line is loaded by the controller when the CPU reads outside it
//!   (sdram_controller.vhdl lines 277-288, 395-397) and dropped when the CPU writes into it
//!   (lines 585-587). SSNAIL is another bus master that mega65-core does not know, so its writes
//!   (generated tokens, the runtime block) are assumed not to refresh the line: with bit 2 set a
//!   polling CPU keeps reading the old bytes. Bit 3 SLOWCACHE!ADV: reading the line's last byte
//!   right after the one before it loads the next line ahead (lines 2421-2432). Bit 0 PREFETCH
//!   (reset 0): a read of the address the slow-device interface guessed (the one after the last
//!   read) returns the byte fetched then (lines 2434-2445). Switching bit 4 changes which
//!   controller's line the CPU sees: the line is dropped.
//! * Bits 1, 5 (OCEANA, SLOWSDRAM) are kept and read back; bit 7 HWRNG!NOTRDY reads 0 (always
//!   ready, as xemu's io_mapper.c line 369).
//! * Without an SSNAIL device the board still decides (`Machine::set_board`, default R3 as xemu's
//!   default model, configdb.c line 130): R3 has its 8 MiB HyperRAM at $8000000 and nothing
//!   beyond; R4-R6 show 64 MiB of SDRAM with SELSDRAM set and the 8 MiB HyperRAM without it
//!   (the same rule as with a device whose memory does not reach $C000000). `$D629` reads the
//!   board's model ID: 3 on R3, 4 on R4 (c65uart.vhdl lines 336-339; R5 and later read the
//!   board's major revision there instead, lines 858-866, so a program treats 4 and up alike).

use ssnail_core::Board;
use ssnail_format::image::{BASE, HYPERRAM_BOUNDARY};

use super::machine::Machine;

/// $D7FE bits, shared with the MEGA65 program's C (ssnail_format::mega65, mega65_io.h).
pub use ssnail_format::mega65::d7fe;
use ssnail_format::mega65::model;

/// SDRAM and HyperRAM sizes on R4-R6 boards; HyperRAM's place in SSNAIL's map ($C000000).
const SDRAM_SIZE: u32 = 64 << 20;
const HYPERRAM_SIZE: u32 = 8 << 20;
const SSNAIL_HYPERRAM_OFFSET: u32 = HYPERRAM_BOUNDARY - BASE;

/// Which memory cell the CPU reaches at $8000000 + offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// SSNAIL memory at this offset from $8000000 (or, without a core, plain attic RAM).
    Ssnail(u32),
    /// HyperRAM on an R4-R6 board that SSNAIL does not use.
    OwnHyperram(u32),
    Unpopulated,
}

/// The cell behind the CPU's attic window at $8000000 + `off`, for SSNAIL on `board` (None: no
/// core) with `ssnail_mem` bytes of memory and $D7FE = `d7fe`. The one rule that the headless
/// MEGA65 and the C interface (emu/capi, for xemu) both follow.
pub fn window_cell(board: Option<Board>, d7fe: u8, ssnail_mem: usize, off: u32) -> Cell {
    match board {
        None | Some(Board::R3) => Cell::Ssnail(off),
        Some(Board::R4) if d7fe & d7fe::SELSDRAM != 0 => {
            if off < SDRAM_SIZE {
                Cell::Ssnail(off)
            } else {
                Cell::Unpopulated
            }
        }
        Some(Board::R4) => {
            if off >= HYPERRAM_SIZE {
                Cell::Unpopulated
            } else if ssnail_mem > SSNAIL_HYPERRAM_OFFSET as usize {
                Cell::Ssnail(SSNAIL_HYPERRAM_OFFSET + off)
            } else {
                Cell::OwnHyperram(off)
            }
        }
    }
}

/// State behind $D7FE.
#[derive(Clone, Debug)]
pub struct Attic {
    pub control: u8,
    /// The board when no SSNAIL device is attached (with one, the device's board counts).
    board: Board,
    /// Window offset of the cached line's first byte and its bytes.
    line: Option<(u32, [u8; 8])>,
    /// The byte the slow-device interface fetched ahead: window offset and value.
    prefetched: Option<(u32, u8)>,
    /// Low 3 bits of the previous cached read (for SLOWCACHE!ADV).
    prev_in_line: u8,
    /// HyperRAM of an R4-R6 board whose SSNAIL does not use it (1 MiB pieces, allocated on write).
    own_hyperram: Vec<Option<Box<[u8]>>>,
    /// Reads served from the line or the prefetched byte (statistics, and for tests).
    pub cached_reads: u64,
}

impl Default for Attic {
    fn default() -> Self {
        Attic {
            control: d7fe::RESET,
            board: Board::R3,
            line: None,
            prefetched: None,
            prev_in_line: 0,
            own_hyperram: Vec::new(),
            cached_reads: 0,
        }
    }
}

impl Machine {
    /// $D7FE read (MEGA65 personality).
    pub(crate) fn d7fe_read(&self) -> u8 {
        self.attic.control & 0x7F
    }

    /// $D7FE write.
    pub(crate) fn d7fe_write(&mut self, v: u8) {
        if (v ^ self.attic.control) & d7fe::SELSDRAM != 0 {
            self.attic.line = None;
            self.attic.prefetched = None;
        }
        self.attic.control = v & 0x7F;
    }

    /// The board: the SSNAIL device's, or the one `set_board` chose (R3 by default).
    pub fn board(&self) -> Board {
        self.ssnail
            .device
            .as_ref()
            .map_or(self.attic.board, |d| d.board)
    }

    /// The board of a machine without an SSNAIL device (an attached device brings its own).
    pub fn set_board(&mut self, board: Board) {
        self.attic.board = board;
        self.attic.line = None;
        self.attic.prefetched = None;
    }

    /// $D629 M65MODEL: 3 on R3, 4 on R4 (c65uart.vhdl lines 336-339, 858-866).
    pub(crate) fn model_id(&self) -> u8 {
        match self.board() {
            Board::R3 => model::R3,
            Board::R4 => model::R4,
        }
    }

    fn attic_cell(&self, off: u32) -> Cell {
        match &self.ssnail.device {
            Some(d) => window_cell(Some(d.board), self.attic.control, d.machine.mem_size(), off),
            // No device: SsnailPort's plain attic RAM plays R3's HyperRAM or R4's SDRAM.
            None => match self.attic.board {
                Board::R3 if off < HYPERRAM_SIZE => Cell::Ssnail(off),
                Board::R3 => Cell::Unpopulated,
                Board::R4 => window_cell(Some(Board::R4), self.attic.control, 0, off),
            },
        }
    }

    /// The RAM cell itself, without caches.
    fn attic_cell_read(&mut self, off: u32) -> u8 {
        match self.attic_cell(off) {
            Cell::Ssnail(o) => self.ssnail_mem_read(o),
            Cell::OwnHyperram(o) => match self.attic.own_hyperram.get((o >> 20) as usize) {
                Some(Some(chunk)) => chunk[(o & 0xF_FFFF) as usize],
                _ => 0,
            },
            Cell::Unpopulated => 0xFF,
        }
    }

    /// CPU (or DMA) read of $8000000 + off through the line cache and the prefetch.
    pub(crate) fn attic_read(&mut self, off: u32) -> u8 {
        let c = self.attic.control;
        let base = off & !7;
        let in_line = (off & 7) as u8;
        if c & d7fe::SLOWCACHE != 0 {
            if let Some((line_base, bytes)) = self.attic.line {
                if line_base == base {
                    self.attic.cached_reads += 1;
                    let v = bytes[in_line as usize];
                    if c & d7fe::SLOWCACHE_ADV != 0 && self.attic.prev_in_line == 6 && in_line == 7
                    {
                        self.attic_load_line(base.wrapping_add(8));
                    }
                    self.attic.prev_in_line = in_line;
                    return v;
                }
            }
        }
        if c & d7fe::PREFETCH != 0 {
            if let Some((at, v)) = self.attic.prefetched {
                if at == off {
                    self.attic.cached_reads += 1;
                    self.attic.prefetched =
                        Some((off.wrapping_add(1), self.attic_cell_read(off + 1)));
                    return v;
                }
            }
        }
        // A real access: the controller loads the line around it, and guesses the next address.
        self.attic_load_line(base);
        self.attic.prev_in_line = in_line;
        if c & d7fe::PREFETCH != 0 {
            self.attic.prefetched = Some((off.wrapping_add(1), self.attic_cell_read(off + 1)));
        }
        self.attic_cell_read(off)
    }

    fn attic_load_line(&mut self, base: u32) {
        let mut bytes = [0u8; 8];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = self.attic_cell_read(base + i as u32);
        }
        self.attic.line = Some((base, bytes));
    }

    /// CPU (or DMA) write of $8000000 + off: drops a cached line or byte it overlaps.
    pub(crate) fn attic_write(&mut self, off: u32, v: u8) {
        if self.attic.line.is_some_and(|(b, _)| b == off & !7) {
            self.attic.line = None;
        }
        if self.attic.prefetched.is_some_and(|(a, _)| a == off) {
            self.attic.prefetched = None;
        }
        match self.attic_cell(off) {
            Cell::Ssnail(o) => self.ssnail_mem_write(o, v),
            Cell::OwnHyperram(o) => {
                let i = (o >> 20) as usize;
                if self.attic.own_hyperram.len() <= i {
                    self.attic.own_hyperram.resize_with(i + 1, || None);
                }
                let chunk = self.attic.own_hyperram[i]
                    .get_or_insert_with(|| vec![0u8; 1 << 20].into_boxed_slice());
                chunk[(o & 0xF_FFFF) as usize] = v;
            }
            Cell::Unpopulated => {}
        }
    }
}
