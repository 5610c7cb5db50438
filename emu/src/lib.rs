//! Emulators.
//!
//! * [`core`]: the SSNAIL core — executes an image's script exactly, in the
//!   float reference or bit-exact hardware numerics, behind the load port and
//!   register block that MEGA65 software sees.
//! * [`mega65`]: a headless MEGA65 (45GS02 CPU, DMA, hypervisor file calls,
//!   F011 drive, keyboard queue, screen) with the SSNAIL core attached.

pub mod core;
pub mod mega65;
