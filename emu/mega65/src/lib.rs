//! A headless MEGA65: the 45GS02 CPU with MAP, quad and flat instructions and cycle
//! counts from the measured 40.5 MHz table; chip and colour RAM, the I/O personalities, DMA, the
//! hypervisor file calls on a host directory, the F011 drive on a D81 image, the $D610 keyboard
//! queue, the text screen as text or PNG, CIA timers and TOD, the $D6CF exit port, and the SSNAIL
//! device at $FFD7500 with its memory at $8000000 shared with [`ssnail_core`].
//!
//! ```no_run
//! use ssnail_mega65::{Machine, StopReason};
//! let prg = std::fs::read("prog.prg").unwrap();
//! let mut m = Machine::new();
//! let (_load, entry) = m.load_prg(&prg, None).unwrap();
//! m.start_at(entry);
//! let reason = m.run(40_500_000);
//! print!("{}", m.screen_text());
//! assert!(matches!(reason, StopReason::Exit(_) | StopReason::Budget));
//! ```

pub mod attic;
pub mod bus;
pub mod cia;
mod cpu;
mod dma;
pub mod f011;
pub mod hyppo;
mod io;
pub mod keys;
pub mod machine;
mod math;
pub mod opcodes;
pub mod prg;
mod raster;
pub mod screen;
mod sd;
pub mod sectors;
pub mod ssnail;

pub use keys::KeyScript;
pub use machine::{flag, Machine, StopReason, CPU_HZ};
