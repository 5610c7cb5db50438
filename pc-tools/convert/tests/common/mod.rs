//! Test-side helpers, written from the spec's text (§1.8, §1.9, §3.7)
//! independently of the converter's code: literal addresses and opcodes, an
//! own layout walk and an own listing builder.
#![allow(dead_code)]

use ssnail_gguf::Gguf;

pub const BASE: u32 = 0x800_0000;
pub const PAYLOAD: u32 = 0x800_5000;
pub const TOKENS: u32 = 0x800_1000;
pub const OUT_AREA: u32 = 0x800_0100;

/// Write GGUF bytes to a temporary file and open it.
pub fn open(bytes: &[u8]) -> (tempfile::TempDir, Gguf) {
    open_named(bytes, "model.gguf")
}

pub fn open_named(bytes: &[u8], name: &str) -> (tempfile::TempDir, Gguf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    let g = Gguf::open(&p).unwrap();
    (dir, g)
}

/// File offset of an SSNAIL address: the 256-byte header loads at
/// $8000000, the payload (file offset 256) at $8005000 (§1.7).
pub fn off(addr: u32) -> usize {
    if addr < BASE + 256 {
        (addr - BASE) as usize
    } else {
        assert!(addr >= PAYLOAD, "${addr:X} is not in the file");
        (addr - PAYLOAD) as usize + 256
    }
}

pub fn u32_at(img: &[u8], addr: u32) -> u32 {
    let o = off(addr);
    u32::from_le_bytes(img[o..o + 4].try_into().unwrap())
}

pub fn bytes_at(img: &[u8], addr: u32, len: usize) -> &[u8] {
    let o = off(addr);
    &img[o..o + len]
}

/// Assert equal bytes, naming the first difference (not dumping both).
pub fn same(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!(
            "{what}: first difference at byte {i}: {:02X} vs expected {:02X}",
            got[i], want[i]
        );
    }
}

/// Payload placement per §1.8: next multiple of 32, or the boundary when the
/// blob would straddle it.
pub struct Walk {
    pub end: u64,
    pub boundary: u64,
    /// (address, length) of every placed blob.
    pub placed: Vec<(u32, usize)>,
}

impl Walk {
    pub fn new(script_slots: usize, boundary: u32) -> Walk {
        Walk {
            end: PAYLOAD as u64 + 16 * script_slots as u64,
            boundary: boundary as u64,
            placed: vec![(PAYLOAD, 16 * script_slots)],
        }
    }
    pub fn place(&mut self, len: usize) -> u32 {
        let mut a = self.end.div_ceil(32) * 32;
        if a < self.boundary && a + len as u64 > self.boundary {
            a = self.boundary;
        }
        self.end = a + len as u64;
        self.placed.push((a as u32, len));
        a as u32
    }
    /// Right after the last blob, no alignment (llama's attn_k and ffn_up, §1.8).
    pub fn place_after(&mut self, len: usize) -> u32 {
        let mut a = self.end;
        if a < self.boundary && a + len as u64 > self.boundary {
            a = self.boundary;
        }
        self.end = a + len as u64;
        self.placed.push((a as u32, len));
        a as u32
    }
    pub fn payload_len(&self) -> u32 {
        ((self.end - PAYLOAD as u64).div_ceil(256) * 256) as u32
    }
}

/// Scratch per §1.9: each allocation rounded up to 256.
pub struct Scr(pub u64);

impl Scr {
    pub fn alloc(&mut self, n: u64) -> u32 {
        let a = self.0;
        self.0 += n.div_ceil(256) * 256;
        a as u32
    }
}

// Opcodes from the §3.4 table.
pub const HALT: u8 = 0x01;
pub const SYNC: u8 = 0x02;
pub const COPY: u8 = 0x03;
pub const SETN: u8 = 0x07;
pub const LI: u8 = 0x08;
pub const LDR: u8 = 0x09;
pub const STR: u8 = 0x0A;
pub const ADDI: u8 = 0x0B;
pub const LEA: u8 = 0x0C;
pub const BEQ: u8 = 0x0D;
pub const BNE: u8 = 0x0E;
pub const BLT: u8 = 0x0F;
pub const GEMV: u8 = 0x10;
pub const DEQROW: u8 = 0x11;
pub const ARGMAX: u8 = 0x12;
pub const VADD: u8 = 0x20;
pub const RMSNORM: u8 = 0x22;
pub const SILUMUL: u8 = 0x23;
pub const ROPE: u8 = 0x24;
pub const ATTN: u8 = 0x25;
pub const LAYERNORM: u8 = 0x26;
pub const GELU: u8 = 0x27;
pub const MEANROWS: u8 = 0x28;
pub const CVT16: u8 = 0x29;

/// Register-relative operand A[n] + 0 (§3.2).
pub fn a(n: u32) -> u32 {
    0x8000_0000 | (n << 24)
}

/// An expected instruction: (opcode, a, b, X, Y, Z) with an optional
/// symbolic branch target in X.
#[derive(Clone, Debug)]
pub struct E {
    pub op: u8,
    pub a: u8,
    pub b: u8,
    pub x: u32,
    pub y: u32,
    pub z: u32,
    pub target: Option<&'static str>,
}

/// An expected listing; labels resolve to base + 16·index.
pub struct Listing {
    pub base: u32,
    pub ins: Vec<E>,
    pub labels: Vec<(&'static str, usize)>,
}

impl Listing {
    pub fn new(base: u32) -> Listing {
        Listing {
            base,
            ins: Vec::new(),
            labels: Vec::new(),
        }
    }
    pub fn i(&mut self, op: u8, a: u8, b: u8, x: u32, y: u32, z: u32) {
        self.ins.push(E {
            op,
            a,
            b,
            x,
            y,
            z,
            target: None,
        });
    }
    pub fn br(&mut self, op: u8, a: u8, b: u8, target: &'static str) {
        self.ins.push(E {
            op,
            a,
            b,
            x: 0,
            y: 0,
            z: 0,
            target: Some(target),
        });
    }
    pub fn label(&mut self, name: &'static str) {
        self.labels.push((name, self.ins.len()));
    }
    /// The listing with branch targets filled in (label names are unique).
    pub fn resolve(&self) -> Vec<[u32; 6]> {
        self.ins
            .iter()
            .map(|e| {
                let x = match e.target {
                    Some(t) => {
                        let idx = self
                            .labels
                            .iter()
                            .find(|(n, _)| *n == t)
                            .unwrap_or_else(|| panic!("label {t}"))
                            .1;
                        self.base + 16 * idx as u32
                    }
                    None => e.x,
                };
                [e.op as u32, e.a as u32, e.b as u32, x, e.y, e.z]
            })
            .collect()
    }
}

/// Decode `n` script slots from an image.
pub fn script(img: &[u8], code: u32, n: usize) -> Vec<[u32; 6]> {
    (0..n)
        .map(|k| {
            let b = bytes_at(img, code + 16 * k as u32, 16);
            assert_eq!(b[3], 0, "reserved byte of instruction {k}");
            let w = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
            [b[0] as u32, b[1] as u32, b[2] as u32, w(4), w(8), w(12)]
        })
        .collect()
}

/// Compare a decoded script with the expected listing, naming the first
/// difference; the rest of the script area must be zero (NOP).
pub fn check_script(img: &[u8], code: u32, slots: usize, want: &Listing) {
    let want = want.resolve();
    let got = script(img, code, slots);
    for (k, w) in want.iter().enumerate() {
        assert_eq!(
            &got[k],
            w,
            "instruction {k} (at ${:X}): got [op,a,b,X,Y,Z] = {:X?}, expected {:X?}",
            code + 16 * k as u32,
            got[k],
            w
        );
    }
    for (k, g) in got.iter().enumerate().skip(want.len()) {
        assert_eq!(g, &[0u32; 6], "slot {k} after the script is not zero");
    }
}
