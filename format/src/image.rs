//! Image file format: the 256-byte header, the runtime block and the fixed
//! memory map from $8000000 (spec §1).

use crate::{rd_u32, wr_u32};

/// First SSNAIL address; every image is laid out from here.
pub const BASE: u32 = 0x800_0000;
/// Size of the header (which includes the runtime block and description).
pub const HEADER_LEN: usize = 256;
/// Output area for encoder (BERT) images: the pooled embedding.
pub const OUTPUT_AREA: u32 = 0x800_0100;
/// Bytes available in the output area (960 f32).
pub const OUTPUT_AREA_LEN: u32 = 0xF00;
/// Token buffer: u32 token ids.
pub const TOKENS: u32 = 0x800_1000;
/// Slots in the token buffer; position `ctx` needs slot `ctx`, so ctx ≤ 4095.
pub const TOKEN_SLOTS: u32 = 4096;
/// Largest context an image may have (the token buffer holds 4095 tokens plus one).
pub const MAX_CTX: u32 = TOKEN_SLOTS - 1;
/// Payload load address: script, tables, weights.
pub const PAYLOAD_BASE: u32 = 0x800_5000;
/// On R4–R6 the SDRAM ends and HyperRAM starts here; no payload blob may straddle it.
pub const HYPERRAM_BOUNDARY: u32 = 0xC00_0000;
/// SSNAIL addresses are 28 bits: the address space ends here (128 MiB from BASE).
pub const ADDRESS_END: u64 = 0x1000_0000;
/// Every payload blob starts on this alignment.
pub const BLOB_ALIGN: u32 = 32;
/// The payload length is a multiple of this.
pub const PAYLOAD_ALIGN: u32 = 256;
/// Scratch allocations are rounded up to this.
pub const SCRATCH_ALIGN: u32 = 256;
/// One MiB: the unit of memory sizes.
pub const MIB: u64 = 1 << 20;

pub const MAGIC: &[u8; 4] = b"SSNL";
pub const VERSION: u16 = 1;
/// Header flags bit 0: encoder image (BERT).
pub const FLAG_ENCODER: u16 = 1;

/// Header field offsets (§1.4).
pub mod h {
    pub const MAGIC: usize = 0x00;
    pub const VERSION: usize = 0x04;
    pub const FLAGS: usize = 0x06;
    pub const CODE: usize = 0x08;
    pub const DATA: usize = 0x0C;
    pub const SCRATCH: usize = 0x10;
    pub const TOKENS: usize = 0x14;
    pub const VOCAB: usize = 0x18;
    pub const NVOCAB: usize = 0x1C;
    pub const MAXCTX: usize = 0x20;
    pub const BOS: usize = 0x24;
    pub const EOS: usize = 0x28;
    pub const PAYLOAD_LEN: usize = 0x2C;
    pub const OUTPUT: usize = 0x30;
    pub const OUTDIM: usize = 0x34;
    pub const MEM_NEEDED: usize = 0x38;
    pub const ARCH: usize = 0x3C;
    pub const REGIONS: usize = 0x60;
    pub const LOAD_BASE: usize = 0x64;
    /// Legacy host segment (old images only; new images write 0).
    pub const HOST_BASE: usize = 0x70;
    pub const HOST_SEG_LEN: usize = 0x74;
    pub const TOKENIZER: usize = 0x78;
    /// Address of the chat block (§2.6), 0 = none.
    pub const CHAT: usize = 0x7C;
    /// The image's answer defaults (§1.4): [`super::ANSWER_TOKENS`] and [`super::ANSWER_GREEDY`];
    /// 0 = the host's own defaults.
    pub const ANSWER: usize = 0x58;
    pub const DESC: usize = 0x80;
    pub const DESC_LEN: usize = 0x80;
}

/// Header $58 bits 0-15: tokens per answer by default (1-4095; 0 = the host's default).
pub const ANSWER_TOKENS: u32 = 0xFFFF;
/// Header $58 bit 16: greedy by default (temperature 0, repetition penalty 1.0, as the v1
/// hardware's ARGMAX); clear = the host's default sampling.
pub const ANSWER_GREEDY: u32 = 0x1_0000;

/// Runtime block offsets (§1.5), relative to BASE; shared by CPU and script.
pub mod rt {
    pub const POS: u32 = 0x40;
    pub const PROMPT_LEN: u32 = 0x44;
    pub const N_GENERATE: u32 = 0x48;
    pub const GENERATED: u32 = 0x4C;
    pub const STOP_REQUEST: u32 = 0x50;
    pub const STOP_REASON: u32 = 0x54;
}

/// Stop reasons written to the runtime block by the script.
pub mod stop {
    pub const COUNT: u32 = 1;
    pub const EOS: u32 = 2;
    pub const CONTEXT_FULL: u32 = 3;
    pub const REQUESTED: u32 = 4;
}

/// Architecture code at header $3C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    Llama = 0,
    Gpt2 = 1,
    Bert = 2,
}

impl Arch {
    pub fn from_code(c: u32) -> Option<Arch> {
        match c {
            0 => Some(Arch::Llama),
            1 => Some(Arch::Gpt2),
            2 => Some(Arch::Bert),
            _ => None,
        }
    }
    /// The GGUF `general.architecture` spelling.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Llama => "llama",
            Arch::Gpt2 => "gpt2",
            Arch::Bert => "bert",
        }
    }
    pub fn from_name(s: &str) -> Option<Arch> {
        match s {
            "llama" => Some(Arch::Llama),
            "gpt2" => Some(Arch::Gpt2),
            "bert" => Some(Arch::Bert),
            _ => None,
        }
    }
    pub fn is_encoder(self) -> bool {
        self == Arch::Bert
    }
}

/// The static header fields, as written by the converter.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Header {
    pub flags: u16,
    pub code: u32,
    pub data: u32,
    pub scratch: u32,
    pub tokens: u32,
    pub vocab: u32,
    pub n_vocab: u32,
    pub max_ctx: u32,
    pub bos: u32,
    pub eos: u32,
    pub payload_len: u32,
    pub output: u32,
    pub out_dim: u32,
    pub mem_needed: u32,
    pub arch: u32,
    pub load_base: u32,
    pub host_base: u32,
    pub host_len: u32,
    pub tokenizer: u32,
    /// The chat block's address (§2.6), 0 when the image has none.
    pub chat: u32,
    /// Answer defaults (header $58): tokens per answer and greedy; 0 = the host's.
    pub answer: u32,
    /// Description bytes up to (not including) the NUL.
    pub desc: Vec<u8>,
}

/// Why a header could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeaderError {
    TooShort(usize),
    BadMagic([u8; 4]),
    BadVersion(u16),
}

impl std::fmt::Display for HeaderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderError::TooShort(n) => {
                write!(f, "too short for an SSNAIL header ({n} bytes, need 256)")
            }
            HeaderError::BadMagic(m) => write!(
                f,
                "not an SSNAIL image (magic {:02X} {:02X} {:02X} {:02X}, expected 'SSNL')",
                m[0], m[1], m[2], m[3]
            ),
            HeaderError::BadVersion(v) => {
                write!(
                    f,
                    "unsupported SSNAIL image version {v} (this tool reads version 1)"
                )
            }
        }
    }
}

impl std::error::Error for HeaderError {}

impl Header {
    /// Parse the first 256 bytes of an image.
    pub fn parse(b: &[u8]) -> Result<Header, HeaderError> {
        if b.len() < HEADER_LEN {
            return Err(HeaderError::TooShort(b.len()));
        }
        let magic: [u8; 4] = b[0..4].try_into().unwrap();
        if &magic != MAGIC {
            return Err(HeaderError::BadMagic(magic));
        }
        let version = u16::from_le_bytes([b[4], b[5]]);
        if version != VERSION {
            return Err(HeaderError::BadVersion(version));
        }
        let d = &b[h::DESC..h::DESC + h::DESC_LEN];
        let end = d.iter().position(|&c| c == 0).unwrap_or(d.len());
        Ok(Header {
            flags: u16::from_le_bytes([b[6], b[7]]),
            code: rd_u32(b, h::CODE),
            data: rd_u32(b, h::DATA),
            scratch: rd_u32(b, h::SCRATCH),
            tokens: rd_u32(b, h::TOKENS),
            vocab: rd_u32(b, h::VOCAB),
            n_vocab: rd_u32(b, h::NVOCAB),
            max_ctx: rd_u32(b, h::MAXCTX),
            bos: rd_u32(b, h::BOS),
            eos: rd_u32(b, h::EOS),
            payload_len: rd_u32(b, h::PAYLOAD_LEN),
            output: rd_u32(b, h::OUTPUT),
            out_dim: rd_u32(b, h::OUTDIM),
            mem_needed: rd_u32(b, h::MEM_NEEDED),
            arch: rd_u32(b, h::ARCH),
            load_base: rd_u32(b, h::LOAD_BASE),
            host_base: rd_u32(b, h::HOST_BASE),
            host_len: rd_u32(b, h::HOST_SEG_LEN),
            tokenizer: rd_u32(b, h::TOKENIZER),
            chat: rd_u32(b, h::CHAT),
            answer: rd_u32(b, h::ANSWER),
            desc: d[..end].to_vec(),
        })
    }

    /// The 256 header bytes (runtime block zero, description NUL-terminated,
    /// cut to 127 bytes).
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(MAGIC);
        b[4..6].copy_from_slice(&VERSION.to_le_bytes());
        b[6..8].copy_from_slice(&self.flags.to_le_bytes());
        for (off, v) in [
            (h::CODE, self.code),
            (h::DATA, self.data),
            (h::SCRATCH, self.scratch),
            (h::TOKENS, self.tokens),
            (h::VOCAB, self.vocab),
            (h::NVOCAB, self.n_vocab),
            (h::MAXCTX, self.max_ctx),
            (h::BOS, self.bos),
            (h::EOS, self.eos),
            (h::PAYLOAD_LEN, self.payload_len),
            (h::OUTPUT, self.output),
            (h::OUTDIM, self.out_dim),
            (h::MEM_NEEDED, self.mem_needed),
            (h::ARCH, self.arch),
            (h::LOAD_BASE, self.load_base),
            (h::HOST_BASE, self.host_base),
            (h::HOST_SEG_LEN, self.host_len),
            (h::TOKENIZER, self.tokenizer),
            (h::CHAT, self.chat),
            (h::ANSWER, self.answer),
        ] {
            wr_u32(&mut b, off, v);
        }
        let n = self.desc.len().min(h::DESC_LEN - 1);
        b[h::DESC..h::DESC + n].copy_from_slice(&self.desc[..n]);
        b
    }

    pub fn is_encoder(&self) -> bool {
        self.flags & FLAG_ENCODER != 0
    }

    pub fn arch(&self) -> Option<Arch> {
        Arch::from_code(self.arch)
    }

    /// The description as text (invalid UTF-8 replaced).
    pub fn description(&self) -> String {
        String::from_utf8_lossy(&self.desc).into_owned()
    }

    /// Where the payload loads: $64, or $8000100 for legacy images with 0 there.
    pub fn payload_address(&self) -> u32 {
        if self.load_base == 0 {
            OUTPUT_AREA
        } else {
            self.load_base
        }
    }

    /// Total file length the header promises.
    pub fn file_len(&self) -> u64 {
        HEADER_LEN as u64 + self.host_len as u64 + self.payload_len as u64
    }

    /// Where each piece of the file goes in memory (§1.7), in file order: the
    /// header at $8000000, a legacy host segment if $74 ≠ 0 (at $70), then the
    /// payload at $64 (or $8000100 if $64 = 0). The load port's loader, the
    /// image tokenizer's memory view and the MEGA65 program all follow this.
    pub fn segments(&self) -> Vec<Segment> {
        let mut v = vec![Segment {
            file_offset: 0,
            address: BASE,
            len: HEADER_LEN as u64,
        }];
        let mut off = HEADER_LEN as u64;
        if self.host_len != 0 {
            v.push(Segment {
                file_offset: off,
                address: self.host_base,
                len: self.host_len as u64,
            });
            off += self.host_len as u64;
        }
        v.push(Segment {
            file_offset: off,
            address: self.payload_address(),
            len: self.payload_len as u64,
        });
        v
    }
}

/// One contiguous piece of an image file and the SSNAIL address it loads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub file_offset: u64,
    pub address: u32,
    pub len: u64,
}

/// Round `v` up to a multiple of `a` (a power of two or not).
pub fn align_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

/// The named memory sizes and what they mean (§1.9).
pub fn size_description(mem_mb: f64) -> &'static str {
    if mem_mb == 8.0 {
        "any board"
    } else if mem_mb == 64.0 {
        "R4-R6, all in SDRAM"
    } else if mem_mb == 72.0 {
        "R4-R6, SDRAM then HyperRAM at $C000000"
    } else {
        "custom"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_errors() {
        let hd = Header {
            flags: FLAG_ENCODER,
            code: PAYLOAD_BASE,
            n_vocab: 400,
            desc: "x".repeat(200).into_bytes(),
            ..Default::default()
        };
        let b = hd.to_bytes();
        assert_eq!(&b[0..4], b"SSNL");
        assert_eq!(b[0xFF], 0, "description is cut to 127 bytes plus NUL");
        let back = Header::parse(&b).unwrap();
        assert_eq!(back.desc.len(), 127);
        assert_eq!(back.code, PAYLOAD_BASE);
        assert!(back.is_encoder());
        assert_eq!(Header::parse(&b[..100]), Err(HeaderError::TooShort(100)));
        let mut bad = b;
        bad[0] = b'X';
        assert!(matches!(Header::parse(&bad), Err(HeaderError::BadMagic(_))));
    }
}
