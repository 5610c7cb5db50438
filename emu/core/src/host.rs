//! The host protocol (spec §6.3): what MEGA65 software does to run a job,
//! as helpers for the PC tools. Tokens and the runtime block are written
//! through the load port (as on the MEGA65); results are read from memory (the
//! CPU maps the RAM SSNAIL has at $8000000). Each run is: write, job pointer =
//! header $08, GO, run to HALT with the host's hooks (SYNC after every
//! published token, ARGMAX sampler).

use super::device::Ssnail;
use super::loadport::set_pointer;
use super::machine::{Fault, Host, Machine};
use ssnail_format::chatblock::{self, ChatBlock, ChatBlockError};
use ssnail_format::image::{h, rt, Header, BASE, HEADER_LEN, TOKEN_SLOTS};
use ssnail_format::registers::{reg, LP_CLEAR_ERROR, LP_ERROR};
use std::fmt;

/// The runtime block ($8000040–$8000057).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Runtime {
    pub pos: u32,
    pub prompt_len: u32,
    pub n_generate: u32,
    pub generated: u32,
    pub stop_request: u32,
    pub stop_reason: u32,
}

/// Read the runtime block from memory.
pub fn runtime(m: &Machine) -> Runtime {
    let r = |off: u32| m.peek_u32((BASE + off) as u64).unwrap_or(0);
    Runtime {
        pos: r(rt::POS),
        prompt_len: r(rt::PROMPT_LEN),
        n_generate: r(rt::N_GENERATE),
        generated: r(rt::GENERATED),
        stop_request: r(rt::STOP_REQUEST),
        stop_reason: r(rt::STOP_REASON),
    }
}

/// Token ids at `tokens[from .. from + n)` (the token buffer address is header $14).
/// The counts come from SSNAIL memory, which a script can corrupt: the read
/// stops at the end of the token buffer (TOKEN_SLOTS), so a wild counter
/// never makes the host read more than the buffer holds.
pub fn read_tokens(m: &Machine, from: u32, n: u32) -> Vec<u32> {
    let base = m.peek_u32((BASE as usize + h::TOKENS) as u64).unwrap_or(0);
    let n = n.min(TOKEN_SLOTS.saturating_sub(from));
    (0..n)
        .map(|i| {
            m.peek_u32(base as u64 + 4 * (from as u64 + i as u64))
                .unwrap_or(0)
        })
        .collect()
}

/// Tokens published so far in this run: tokens[prompt_len .. prompt_len + generated).
pub fn published(m: &Machine) -> Vec<u32> {
    let r = runtime(m);
    read_tokens(m, r.prompt_len, r.generated)
}

/// A token's bytes from the vocab table in memory (empty for special or
/// unknown ids).
pub fn vocab_piece(m: &Machine, id: u32) -> Vec<u8> {
    let hd = Header::parse(&m.mem()[..HEADER_LEN]).unwrap_or_default();
    if id >= hd.n_vocab {
        return Vec::new();
    }
    let v = hd.vocab as u64;
    match (
        m.peek_u32(v + 4 * id as u64),
        m.peek_u32(v + 4 * (id as u64 + 1)),
    ) {
        (Some(a), Some(b)) if b >= a => m
            .bytes(v + a as u64, (b - a) as u64)
            .unwrap_or(&[])
            .to_vec(),
        _ => Vec::new(),
    }
}

/// A host-protocol failure.
#[derive(Debug)]
pub enum HostError {
    Fault(Fault),
    /// The load port flagged ERROR while writing tokens/runtime block.
    Port(u32),
    TooManyTokens {
        first: u32,
        count: usize,
    },
    EmptyPrompt,
    NotEncoder,
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostError::Fault(e) => write!(f, "{e}"),
            HostError::Port(a) => write!(f, "load port reported ERROR writing at ${a:07X}"),
            HostError::TooManyTokens { first, count } => write!(
                f,
                "{count} tokens from slot {first} do not fit the {TOKEN_SLOTS}-slot token buffer"
            ),
            HostError::EmptyPrompt => write!(f, "empty prompt: a decoder needs at least one token"),
            HostError::NotEncoder => write!(f, "not an encoder image"),
        }
    }
}

impl std::error::Error for HostError {}

impl From<Fault> for HostError {
    fn from(f: Fault) -> Self {
        HostError::Fault(f)
    }
}

/// Result of a decoder run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generation {
    /// Generated tokens: tokens[prompt_len .. prompt_len + generated).
    pub tokens: Vec<u32>,
    pub stop_reason: u32,
    pub runtime: Runtime,
}

/// Result of an encoder run.
#[derive(Clone, Debug, PartialEq)]
pub struct Encoding {
    /// H_OUTDIM floats at H_OUTPUT (empty unless stop reason 1).
    pub output: Vec<f32>,
    pub stop_reason: u32,
}

impl Ssnail {
    /// The image header as loaded in memory.
    pub fn header(&self) -> Header {
        Header::parse(&self.machine.mem()[..HEADER_LEN]).unwrap_or_default()
    }

    /// Write bytes at an SSNAIL address through the load port: pointer (clearing
    /// ERROR), data, a flushing commit, then check ERROR.
    pub fn port_write(&mut self, addr: u32, data: &[u8]) -> Result<(), HostError> {
        set_pointer(self, addr, LP_CLEAR_ERROR);
        self.dma_data(data);
        set_pointer(self, BASE, 0);
        if self.read(reg::LP_COMMIT) & LP_ERROR != 0 {
            return Err(HostError::Port(addr));
        }
        Ok(())
    }

    /// Write token ids into the token buffer from slot `first` (through the port).
    pub fn write_tokens(&mut self, first: u32, tokens: &[u32]) -> Result<(), HostError> {
        if first as usize + tokens.len() > TOKEN_SLOTS as usize {
            return Err(HostError::TooManyTokens {
                first,
                count: tokens.len(),
            });
        }
        let bytes: Vec<u8> = tokens.iter().flat_map(|t| t.to_le_bytes()).collect();
        let base = self.header().tokens;
        self.port_write(base + 4 * first, &bytes)
    }

    /// Write pos, prompt_len, n_generate, generated = 0, stop_request = 0 (through the port).
    pub fn write_runtime(
        &mut self,
        pos: u32,
        prompt_len: u32,
        n_generate: u32,
    ) -> Result<(), HostError> {
        let bytes: Vec<u8> = [pos, prompt_len, n_generate, 0, 0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        self.port_write(BASE + rt::POS, &bytes)
    }

    /// Direct host-side runtime write (PC tools that skip the port; e.g. stop_request).
    pub fn poke_runtime(&mut self, offset: u32, v: u32) {
        self.machine.poke_u32((BASE + offset) as u64, v);
    }

    /// Direct host-side token write (no load port), for PC tools.
    pub fn poke_tokens(&mut self, first: u32, tokens: &[u32]) -> Result<(), HostError> {
        if first as usize + tokens.len() > TOKEN_SLOTS as usize {
            return Err(HostError::TooManyTokens {
                first,
                count: tokens.len(),
            });
        }
        let base = self.header().tokens as u64;
        let bytes: Vec<u8> = tokens.iter().flat_map(|t| t.to_le_bytes()).collect();
        if !self.machine.write_bytes(base + 4 * first as u64, &bytes) {
            return Err(HostError::Port(base as u32 + 4 * first));
        }
        Ok(())
    }

    /// Job pointer = header $08, GO, run to HALT.
    pub fn run_script(&mut self, host: &mut dyn Host) -> Result<(), HostError> {
        let code = self.header().code;
        self.go(code);
        self.run_job(host)?;
        Ok(())
    }

    fn finish_generation(&self) -> Generation {
        let r = runtime(&self.machine);
        Generation {
            tokens: read_tokens(&self.machine, r.prompt_len, r.generated),
            stop_reason: r.stop_reason,
            runtime: r,
        }
    }

    /// First turn: tokens from slot 0, pos = 0, prompt_len = count, n_generate = n.
    pub fn generate(
        &mut self,
        prompt: &[u32],
        n: u32,
        host: &mut dyn Host,
    ) -> Result<Generation, HostError> {
        if prompt.is_empty() {
            return Err(HostError::EmptyPrompt);
        }
        self.write_tokens(0, prompt)?;
        self.write_runtime(0, prompt.len() as u32, n)?;
        self.run_script(host)?;
        Ok(self.finish_generation())
    }

    /// Continue: append tokens after the last one (from pos + 1), prompt_len =
    /// pos + 1 + count, keep pos, GO again (an empty continuation just goes on).
    pub fn continue_generation(
        &mut self,
        appended: &[u32],
        n: u32,
        host: &mut dyn Host,
    ) -> Result<Generation, HostError> {
        let pos = runtime(&self.machine).pos;
        self.write_tokens(pos + 1, appended)?;
        self.write_runtime(pos, pos + 1 + appended.len() as u32, n)?;
        self.run_script(host)?;
        Ok(self.finish_generation())
    }

    /// Encoder run: tokens, prompt_len, GO; the output vector if stop reason 1.
    pub fn encode(&mut self, tokens: &[u32], host: &mut dyn Host) -> Result<Encoding, HostError> {
        let hd = self.header();
        if !hd.is_encoder() {
            return Err(HostError::NotEncoder);
        }
        self.write_tokens(0, tokens)?;
        self.write_runtime(0, tokens.len() as u32, 0)?;
        self.run_script(host)?;
        let reason = runtime(&self.machine).stop_reason;
        let output = if reason == 1 {
            self.machine
                .peek_f32s(hd.output as u64, hd.out_dim as usize)
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        Ok(Encoding {
            output,
            stop_reason: reason,
        })
    }

    /// A token's bytes from the vocab table (empty for special or unknown ids).
    pub fn vocab_piece(&self, id: u32) -> Vec<u8> {
        vocab_piece(&self.machine, id)
    }

    /// The chat block header $7C points at (§2.6); None when it is 0.
    pub fn chat_block(&self) -> Option<Result<ChatBlock, ChatBlockError>> {
        let addr = self.header().chat;
        if addr == 0 {
            return None;
        }
        let mem = self.machine.mem();
        let most = chatblock::FIXED_LEN + 4 * 4 * chatblock::MAX_SEQ;
        let from = (addr as usize).wrapping_sub(BASE as usize);
        let bytes = mem.get(from..).map(|b| &b[..b.len().min(most)]);
        Some(ChatBlock::decode(bytes.unwrap_or(&[])))
    }

    /// The description at header $80 (invalid UTF-8 replaced).
    pub fn description(&self) -> String {
        self.header().description()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Machine;

    fn device() -> Ssnail {
        let mut d = Ssnail::new(Machine::new(1 << 20));
        let h = Header {
            tokens: ssnail_format::image::TOKENS,
            ..Default::default()
        };
        d.machine.write_bytes(BASE as u64, &h.to_bytes());
        d
    }

    #[test]
    fn port_and_direct_writes_agree() {
        let toks: Vec<u32> = (0..300).map(|i| i * 7 + 1).collect();
        let mut a = device();
        let mut b = device();
        a.write_tokens(5, &toks).unwrap();
        a.write_runtime(4, 305, 9).unwrap();
        b.poke_tokens(5, &toks).unwrap();
        for (off, v) in [(rt::POS, 4), (rt::PROMPT_LEN, 305), (rt::N_GENERATE, 9)] {
            b.poke_runtime(off, v);
        }
        assert_eq!(a.machine.mem(), b.machine.mem());
        assert_eq!(read_tokens(&a.machine, 5, 300), toks);
        let r = runtime(&a.machine);
        assert_eq!(
            (
                r.pos,
                r.prompt_len,
                r.n_generate,
                r.generated,
                r.stop_request
            ),
            (4, 305, 9, 0, 0)
        );
        assert!(matches!(
            a.write_tokens(4000, &toks),
            Err(HostError::TooManyTokens { .. })
        ));
    }
    #[test]
    fn a_corrupted_token_counter_reads_at_most_the_token_buffer() {
        let mut d = device();
        d.poke_runtime(rt::PROMPT_LEN, 10);
        d.poke_runtime(rt::GENERATED, 1_200_000_000);
        assert_eq!(published(&d.machine).len(), (TOKEN_SLOTS - 10) as usize);
        d.poke_runtime(rt::PROMPT_LEN, u32::MAX - 3);
        assert!(published(&d.machine).is_empty());
    }
}
