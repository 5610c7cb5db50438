//! What several of the core emulator's test files share.

use ssnail_core::Machine;
use ssnail_format::isa::Instr;

/// A machine with `mem` bytes of SSNAIL memory and `prog` encoded at `code`.
pub fn machine_with(mem: usize, code: u32, prog: &[Instr]) -> Machine {
    let mut m = Machine::new(mem);
    let bytes: Vec<u8> = prog.iter().flat_map(|i| i.encode()).collect();
    assert!(m.write_bytes(code as u64, &bytes));
    m
}
