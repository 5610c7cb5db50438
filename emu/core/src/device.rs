//! The SSNAIL device behind the register block at $FFD7500 (spec §9.2; the
//! map itself is ssnail_format::registers): one device that the PC tools and
//! the headless MEGA65 both attach to. `read`/`write` take the low byte of the
//! I/O address ($FFD75xx → xx).

use super::loadport::{self, LoadError, LoadPort, LoadReport};
use super::machine::{Fault, Host, Machine, NoHost, Regs, Step};
use ssnail_format::image::{Header, ADDRESS_END, BASE};
use std::path::Path;

// The register map is part of the contract (ssnail_format::registers); re-exported here for
// callers of the device.
pub use ssnail_format::registers::*;

/// Which board the emulated SSNAIL sits on (sets capabilities and region defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Board {
    /// R3: 8 MiB HyperRAM at $8000000, no SDRAM.
    R3,
    /// R4–R6: SDRAM at $8000000 (64 MiB), HyperRAM (8 MiB) at $C000000.
    R4,
}

/// The SSNAIL device: core, memory, load port and register block.
pub struct Ssnail {
    pub machine: Machine,
    pub port: LoadPort,
    pub board: Board,
    job: u32,
    busy: bool,
    error: u8,
    fault_pc: u32,
    /// The last fault, with its message.
    pub last_fault: Option<Fault>,
    /// $10–$13: HyperRAM MB, SDRAM base (MB units), SDRAM MB, HyperRAM base (MB units).
    regions: [u8; 4],
}

impl Ssnail {
    /// A device on an R4–R6 board around `machine`.
    pub fn new(machine: Machine) -> Ssnail {
        Ssnail::with_board(machine, Board::R4)
    }

    pub fn with_board(machine: Machine, board: Board) -> Ssnail {
        let regions = match board {
            Board::R3 => [8, 0x00, 0, 0x80],
            Board::R4 => [8, 0x80, 64, 0xC0],
        };
        Ssnail {
            machine,
            port: LoadPort::default(),
            board,
            job: 0,
            busy: false,
            error: 0,
            fault_pc: 0,
            last_fault: None,
            regions,
        }
    }

    pub fn busy(&self) -> bool {
        self.busy
    }

    /// Register read (low byte of $FFD75xx).
    pub fn read(&self, r: u8) -> u8 {
        match r {
            reg::ID => ID_VALUE,
            reg::VERSION => VERSION_VALUE,
            reg::CAPS => {
                let mem = match self.board {
                    Board::R3 => 0,
                    Board::R4 => CAP_SDRAM | CAP_HYPERRAM,
                };
                mem | CAP_EMULATOR
            }
            reg::STATUS => {
                (self.busy as u8 * STATUS_BUSY) | if self.error != 0 { STATUS_FAULT } else { 0 }
            }
            reg::ERROR => self.error,
            reg::MEM_MB => (self.machine.mem_size() >> 20).min(255) as u8,
            0x08..=0x0B => self.job.to_le_bytes()[(r - reg::JOB0) as usize],
            0x0C..=0x0F => self.fault_pc.to_le_bytes()[(r - reg::FAULT_PC0) as usize],
            0x10..=0x13 => self.regions[(r - reg::HYPERRAM_MB) as usize],
            0x14..=0x16 => self.port.staged[(r - reg::LP_PTR0) as usize],
            reg::LP_COMMIT => {
                // READY: room for 512 bytes (always, in the model), no commit
                // outstanding (commits are immediate), no job running.
                (if self.busy { 0 } else { LP_READY }) | if self.port.error { LP_ERROR } else { 0 }
            }
            _ => 0,
        }
    }

    /// Register write (low byte of $FFD75xx). GO starts the job; it runs when
    /// the owner calls [`Ssnail::tick`] or [`Ssnail::run_job`].
    pub fn write(&mut self, r: u8, v: u8) {
        match r {
            reg::GO if v & GO_START != 0 && !self.busy => self.start_job(),
            0x08..=0x0B => {
                let mut b = self.job.to_le_bytes();
                b[(r - reg::JOB0) as usize] = v;
                self.job = u32::from_le_bytes(b);
            }
            0x10..=0x13 => self.regions[(r - reg::HYPERRAM_MB) as usize] = v,
            0x14..=0x16 => self.port.staged[(r - reg::LP_PTR0) as usize] = v,
            reg::LP_COMMIT => self.port.commit(&mut self.machine, v),
            reg::LP_DATA => self.port.data(&mut self.machine, v),
            _ => {}
        }
    }

    /// "DMA with the destination held" to the data register: each byte is one
    /// data-register write.
    pub fn dma_data(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.port.data(&mut self.machine, b);
        }
    }

    /// GO: registers cleared (decided: jobs start from a known state), error
    /// cleared, PC = job pointer, busy.
    fn start_job(&mut self) {
        self.machine.regs = Regs {
            pc: self.job,
            ..Regs::default()
        };
        self.error = 0;
        self.last_fault = None;
        self.busy = true;
    }

    /// Execute up to `budget` instructions of the running job (for a host that
    /// interleaves SSNAIL with its CPU). Returns true while the job is still busy.
    pub fn tick(&mut self, budget: u64, host: &mut dyn Host) -> bool {
        for _ in 0..budget {
            if !self.busy {
                break;
            }
            match self.machine.step(host) {
                Ok(Step::Halt) => self.busy = false,
                Ok(_) => {}
                Err(f) => {
                    self.error = f.code();
                    self.fault_pc = f.pc;
                    self.last_fault = Some(f);
                    self.busy = false;
                }
            }
        }
        self.busy
    }

    /// Run the current job to HALT.
    pub fn run_job(&mut self, host: &mut dyn Host) -> Result<(), Fault> {
        while self.tick(u64::MAX, host) {}
        match &self.last_fault {
            Some(f) => Err(f.clone()),
            None => Ok(()),
        }
    }

    /// Let a running job finish (used where a host would wait for READY).
    pub fn run_to_idle(&mut self) {
        while self.tick(u64::MAX, &mut NoHost) {}
    }

    /// Write the job pointer and GO through the registers, as MEGA65 software does.
    pub fn go(&mut self, job: u32) {
        for (i, b) in job.to_le_bytes().into_iter().enumerate() {
            self.write(reg::JOB0 + i as u8, b);
        }
        self.write(reg::GO, 1);
    }

    /// Read an image file and load it through the load port into a new device
    /// with memory `mem` bytes, or max(8 MiB, header $38 rounded up to a MiB).
    pub fn load_file(path: &Path, mem: Option<usize>) -> Result<(Ssnail, LoadReport), LoadError> {
        let io = |e| LoadError::Io(path.to_path_buf(), e);
        let mut f = std::fs::File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        let mut head = Vec::with_capacity(256);
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut f, 256), &mut head).map_err(io)?;
        let h = Header::parse(&head).map_err(|e| LoadError::Header(path.to_path_buf(), e))?;
        let mem = mem.unwrap_or_else(|| loadport::default_memory(&h));
        let max = (ADDRESS_END - BASE as u64) as usize;
        if mem > max {
            return Err(LoadError::TooBig {
                path: path.to_path_buf(),
                needed: mem as u64,
                memory: max as u64,
            });
        }
        std::io::Seek::rewind(&mut f).map_err(io)?;
        let mut dev = Ssnail::new(Machine::new(mem));
        let mut reader = std::io::BufReader::with_capacity(1 << 20, f);
        let rep = loadport::load_stream(&mut dev, &mut reader, len, path)?;
        dev.machine.reset_stats();
        Ok((dev, rep))
    }

    /// Load an image held in memory (tests, converter output).
    pub fn load_bytes(img: &[u8], mem: Option<usize>) -> Result<(Ssnail, LoadReport), LoadError> {
        let path = Path::new("<image>");
        let h = Header::parse(img).map_err(|e| LoadError::Header(path.to_path_buf(), e))?;
        let mem = mem.unwrap_or_else(|| loadport::default_memory(&h));
        let mut dev = Ssnail::new(Machine::new(mem));
        let rep = loadport::load_stream(&mut dev, &mut &img[..], img.len() as u64, path)?;
        dev.machine.reset_stats();
        Ok((dev, rep))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssnail_format::isa::{Instr, Op};

    #[test]
    fn identity_and_defaults() {
        let d = Ssnail::new(Machine::new(8 << 20));
        assert_eq!(d.read(reg::ID), 0x53);
        assert_eq!(d.read(reg::VERSION), 1);
        assert_eq!(d.read(reg::CAPS), CAP_SDRAM | CAP_HYPERRAM | CAP_EMULATOR);
        assert_eq!(d.read(reg::MEM_MB), 8);
        assert_eq!(
            [0x10, 0x11, 0x12, 0x13].map(|r| d.read(r)),
            [8, 0x80, 64, 0xC0]
        );
        assert_eq!(d.read(0x40), 0, "unknown registers read 0");
        let r3 = Ssnail::with_board(Machine::new(8 << 20), Board::R3);
        assert_eq!(r3.read(reg::CAPS) & CAP_SDRAM, 0);
    }

    #[test]
    fn go_runs_a_job_and_faults_are_reported() {
        let mut d = Ssnail::new(Machine::new(1 << 20));
        let prog = [
            Instr::new(Op::Li, 3, 0, 0, 0, 1234),
            Instr::new(Op::Str, 3, 0, BASE + 0x200, 0, 0),
            Instr::new(Op::Halt, 0, 0, 0, 0, 0),
            Instr::new(Op::Nop, 0, 0, 0, 0, 0),
            // Second job at +$40: illegal opcode after one NOP.
            Instr {
                opcode: 0x2A,
                a: 0,
                b: 0,
                x: 0,
                y: 0,
                z: 0,
            },
        ];
        let mut bytes = Vec::new();
        prog.iter().for_each(|i| bytes.extend(i.encode()));
        d.machine.write_bytes((BASE + 0x1000) as u64, &bytes);
        d.machine.regs.r[5] = 99;
        d.go(BASE + 0x1000);
        assert_eq!(d.read(reg::STATUS) & STATUS_BUSY, 1);
        assert_eq!(
            d.read(reg::LP_COMMIT) & LP_READY,
            0,
            "not READY while a job runs"
        );
        d.run_job(&mut NoHost).unwrap();
        assert_eq!(d.read(reg::STATUS), 0);
        assert_eq!(d.machine.peek_u32((BASE + 0x200) as u64), Some(1234));
        assert_eq!(d.machine.regs.r[5], 0, "GO clears the registers");
        d.go(BASE + 0x1030);
        let f = d.run_job(&mut NoHost).unwrap_err();
        assert_eq!(d.read(reg::ERROR), 1);
        assert_eq!(d.read(reg::STATUS), STATUS_FAULT);
        assert_eq!(
            [0x0C, 0x0D, 0x0E, 0x0F].map(|r| d.read(r)),
            (BASE + 0x1040).to_le_bytes()
        );
        assert!(f.to_string().contains("illegal opcode $2A"), "{f}");
        assert!(f.to_string().contains("$8001040"), "{f}");
    }
}
