//! Payload placement (§1.8) and scratch allocation (§1.9).

use ssnail_format::image::{align_up, BLOB_ALIGN, PAYLOAD_ALIGN, PAYLOAD_BASE, SCRATCH_ALIGN};
use ssnail_gguf::TensorInfo;

/// What goes into a payload blob; filled in when the image is built.
pub enum Content<'a> {
    /// Bytes known now (tables, RoPE table, attention blocks, script).
    Bytes(Vec<u8>),
    /// A matrix stored in `dst` (copied when it is already `dst` and not
    /// padded) as `rows` × `cols`: the tensor's own rows and columns, then
    /// zeros (§4.4).
    Matrix {
        t: &'a TensorInfo,
        dst: ssnail_format::ggml::GgmlType,
        rows: usize,
        cols: usize,
    },
    /// 1-D tensors as f32, back to back (gain then bias).
    Vectors(Vec<&'a TensorInfo>),
    /// The RoPE table (§3.6), computed when the image is built.
    Rope { ctx: u32, head_dim: u32, base: f64 },
}

pub struct Blob<'a> {
    pub name: String,
    pub addr: u32,
    pub len: usize,
    pub content: Content<'a>,
}

/// Places blobs from $8005000 upward: each at the next multiple of 32, or
/// at `boundary` if it would otherwise straddle it.
pub struct Layout<'a> {
    pub boundary: u32,
    pub blobs: Vec<Blob<'a>>,
    /// Next free address (u64: a huge model may run past 32 bits).
    end: u64,
}

impl<'a> Layout<'a> {
    pub fn new(boundary: u32) -> Layout<'a> {
        Layout {
            boundary,
            blobs: Vec::new(),
            end: PAYLOAD_BASE as u64,
        }
    }

    /// Reserve the script area at $8005000 (16-byte slots, first in the payload).
    pub fn script_area(&mut self, len: usize) -> u32 {
        assert!(self.blobs.is_empty(), "the script area comes first");
        self.push_at(
            PAYLOAD_BASE as u64,
            "script",
            len,
            Content::Bytes(vec![0; len]),
        )
    }

    /// Place a blob; returns its address.
    pub fn place(&mut self, name: &str, len: usize, content: Content<'a>) -> u32 {
        let mut start = align_up(self.end, BLOB_ALIGN as u64);
        let b = self.boundary as u64;
        if start < b && start + len as u64 > b {
            start = b;
        }
        self.push_at(start, name, len, content)
    }

    /// Place a blob right after the last one, with no alignment (a matrix
    /// whose rows continue the previous one's, §1.8), or at `boundary` if it
    /// would otherwise straddle it.
    pub fn place_after(&mut self, name: &str, len: usize, content: Content<'a>) -> u32 {
        let mut start = self.end;
        let b = self.boundary as u64;
        if start < b && start + len as u64 > b {
            start = b;
        }
        self.push_at(start, name, len, content)
    }

    fn push_at(&mut self, start: u64, name: &str, len: usize, content: Content<'a>) -> u32 {
        self.end = start + len as u64;
        // Addresses past 32 bits are caught by the memory check (end() is u64);
        // saturate so nothing wraps meanwhile.
        let addr = start.min(u32::MAX as u64) as u32;
        self.blobs.push(Blob {
            name: name.to_string(),
            addr,
            len,
            content,
        });
        addr
    }

    /// Replace the bytes of a blob placed earlier (script, attention blocks).
    pub fn set_bytes(&mut self, addr: u32, bytes: Vec<u8>) {
        let b = self
            .blobs
            .iter_mut()
            .find(|b| b.addr == addr && matches!(b.content, Content::Bytes(_)));
        let b = b.expect("blob to fill was placed");
        assert_eq!(b.len, bytes.len());
        b.content = Content::Bytes(bytes);
    }

    /// End of the last blob.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Payload length: up to the last blob, padded to 256.
    pub fn payload_len(&self) -> u64 {
        align_up(self.end - PAYLOAD_BASE as u64, PAYLOAD_ALIGN as u64)
    }
}

/// Scratch allocations from `H_SCRATCH` upward, each rounded up to 256.
pub struct Scratch {
    next: u64,
}

impl Scratch {
    pub fn new(start: u64) -> Scratch {
        Scratch { next: start }
    }
    pub fn alloc(&mut self, bytes: u64) -> u32 {
        let a = self.next;
        self.next += align_up(bytes, SCRATCH_ALIGN as u64);
        a.min(u32::MAX as u64) as u32
    }
    pub fn end(&self) -> u64 {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(n: usize) -> Content<'static> {
        Content::Bytes(vec![0; n])
    }

    #[test]
    fn boundary_rule() {
        // Boundary at $8005100: 256 bytes after the payload start.
        let mut l = Layout::new(0x800_5100);
        l.script_area(64);
        // Ends exactly at the boundary: stays where alignment puts it.
        assert_eq!(l.place("a", 0xC0, bytes(0xC0)), 0x800_5040);
        // Starts exactly at it.
        assert_eq!(l.place("b", 0x10, bytes(0x10)), 0x800_5100);
        let mut l = Layout::new(0x800_5101);
        l.script_area(64);
        // Would straddle $8005101: moved up to it, unaligned.
        assert_eq!(l.place("c", 0xC2, bytes(0xC2)), 0x800_5101);
        // Later blobs are 32-aligned again.
        assert_eq!(l.place("d", 4, bytes(4)), 0x800_51E0);
        assert_eq!(l.payload_len(), 0x200);
    }

    #[test]
    fn scratch_rounds_to_256() {
        let mut s = Scratch::new(0x800_6000);
        assert_eq!(s.alloc(4), 0x800_6000);
        assert_eq!(s.alloc(256), 0x800_6100);
        assert_eq!(s.alloc(257), 0x800_6200);
        assert_eq!(s.end(), 0x800_6400);
    }
}
