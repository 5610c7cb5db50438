//! The SSNAIL core emulator.
//!
//! * [`machine`]: memory from $8000000, registers, ISA v1, faults, traffic.
//! * [`gemv`], [`vector`], [`tables`], [`exact`]: the arithmetic, in the float
//!   reference and the bit-exact hardware numerics (rules next to the code);
//!   [`rowpool`]: the threads each GEMV's rows are split over.
//! * [`loadport`]: the load port and the sector loader; [`device`]: the
//!   register block at $FFD7500 ([`Ssnail`]), which the headless MEGA65
//!   attaches to its I/O space; [`host`]: the host protocol for PC tools.
//!
//! Typical use:
//! ```no_run
//! use ssnail_core::{Ssnail, NoHost, Numerics};
//! let (mut dev, _report) = Ssnail::load_file("model.ssnail".as_ref(), None).unwrap();
//! dev.machine.numerics = Numerics::Hardware;
//! let out = dev.generate(&[1, 450, 6635], 16, &mut NoHost).unwrap();
//! println!("{:?} stop reason {}", out.tokens, out.stop_reason);
//! ```

pub mod device;
pub mod exact;
pub mod gemv;
pub mod host;
pub mod loadport;
pub mod machine;
pub mod rowpool;
/// The function tables are part of the contract the hardware reproduces (ssnail-format).
pub use ssnail_format::tables;
pub mod vector;

pub use device::{Board, Ssnail};
pub use gemv::Kernels;
pub use host::{
    published, read_tokens, runtime, vocab_piece, Encoding, Generation, HostError, Runtime,
};
pub use loadport::{LoadError, LoadReport};
pub use machine::{Fault, FaultKind, Host, Machine, NoHost, Step, Traffic, DEFAULT_INSTR_LIMIT};
pub use vector::Numerics;
