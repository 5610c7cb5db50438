//! The load port (spec §6.2): the only way data gets into SSNAIL memory from
//! the MEGA65, and the loader that streams an image file through it in
//! 512-byte sectors exactly as MEGA65 software must.
//!
//! Port model: bytes written to the data register land in a 1 KiB ring
//! indexed by destination address; the pointer advances; when it becomes a
//! multiple of 256 the block it left, [drain, ptr), is written to RAM. A commit
//! first flushes [drain, ptr) to the old pointer, then sets ptr = drain = the
//! staged pointer. A flush touching anything outside memory sets ERROR and
//! writes nothing of that flush.

use super::device::Ssnail;
use super::machine::Machine;
pub use ssnail_format::image::Segment;
use ssnail_format::image::{Header, HeaderError, BASE};
use ssnail_format::registers::{reg, LP_CLEAR_ERROR, LP_ERROR, LP_PTR_HIGH, LP_READY};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

const RING: usize = 1024;
const BLOCK: u32 = 256;
/// SD card sector size: the loader's unit of transfer.
pub const SECTOR: usize = 512;
/// The load pointer wraps in the 28-bit SSNAIL address space, as address operands do.
const PTR_MASK: u32 = ssnail_format::isa::ADDR_MASK;

pub struct LoadPort {
    /// Staged pointer bits 0–23 ($14–$16).
    pub staged: [u8; 3],
    ptr: u32,
    drain: u32,
    ring: Box<[u8; RING]>,
    pub error: bool,
    /// The end of the highest byte range the port has written (0 before any): what the MEGA65
    /// program itself put into SSNAIL memory reaches this far. Instrumentation for tests and
    /// fuzzing; the hardware has no such register.
    pub written_end: u64,
}

impl Default for LoadPort {
    fn default() -> Self {
        LoadPort {
            staged: [0; 3],
            ptr: 0,
            drain: 0,
            ring: Box::new([0; RING]),
            error: false,
            written_end: 0,
        }
    }
}

impl LoadPort {
    /// Current pointer (where the next data byte goes).
    pub fn pointer(&self) -> u32 {
        self.ptr
    }

    /// One byte to the data register.
    #[inline]
    pub fn data(&mut self, m: &mut Machine, b: u8) {
        self.ring[self.ptr as usize % RING] = b;
        self.ptr = (self.ptr + 1) & PTR_MASK;
        if self.ptr.is_multiple_of(BLOCK) {
            self.flush(m);
        }
    }

    /// Write the pending bytes [drain, ptr) (always within one 256-byte block).
    fn flush(&mut self, m: &mut Machine) {
        let end = if self.ptr < self.drain {
            PTR_MASK as u64 + 1
        } else {
            self.ptr as u64
        };
        let len = end - self.drain as u64;
        if len > 0 {
            let s = self.drain as usize % RING;
            let ok = m.write_bytes(self.drain as u64, &self.ring[s..s + len as usize]);
            if !ok {
                self.error = true;
            } else {
                self.written_end = self.written_end.max(self.drain as u64 + len);
            }
        }
        self.drain = self.ptr;
    }

    /// Write to $17: flush, then ptr = drain = staged bits 0–23 | (v & $F) << 24;
    /// bit 6 also clears ERROR.
    pub fn commit(&mut self, m: &mut Machine, v: u8) {
        self.flush(m);
        let p = u32::from_le_bytes([
            self.staged[0],
            self.staged[1],
            self.staged[2],
            v & LP_PTR_HIGH,
        ]);
        self.ptr = p;
        self.drain = p;
        if v & LP_CLEAR_ERROR != 0 {
            self.error = false;
        }
    }
}

/// What went wrong loading an image.
#[derive(Debug)]
pub enum LoadError {
    Io(PathBuf, std::io::Error),
    Header(PathBuf, HeaderError),
    Length {
        path: PathBuf,
        file: u64,
        expected: u64,
    },
    TooBig {
        path: PathBuf,
        needed: u64,
        memory: u64,
    },
    PortError(PathBuf),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            LoadError::Header(p, e) => write!(f, "{}: {e}", p.display()),
            LoadError::Length { path, file, expected } => write!(
                f,
                "{}: file is {file} bytes but its header describes {expected} (truncated or corrupt image)",
                path.display()
            ),
            LoadError::TooBig { path, needed, memory } => write!(
                f,
                "{}: image needs {:.2} MB of SSNAIL memory but only {:.2} MB is available",
                path.display(),
                *needed as f64 / 1048576.0,
                *memory as f64 / 1048576.0
            ),
            LoadError::PortError(p) => write!(f, "{}: load port reported ERROR (data outside RAM)", p.display()),
        }
    }
}

impl std::error::Error for LoadError {}

/// Result of a load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadReport {
    /// 512-byte sectors streamed.
    pub sectors: u64,
    pub bytes: u64,
}

/// Set the port pointer as MEGA65 software does: stage bits 0–23, then
/// write bits 24–27 (plus `extra`, e.g. bit 6) to the commit register.
pub fn set_pointer(dev: &mut Ssnail, addr: u32, extra: u8) {
    let b = addr.to_le_bytes();
    dev.write(reg::LP_PTR0, b[0]);
    dev.write(reg::LP_PTR1, b[1]);
    dev.write(reg::LP_PTR2, b[2]);
    dev.write(reg::LP_COMMIT, (b[3] & LP_PTR_HIGH) | extra);
}

/// Stream an image into `dev` through the load port, 512-byte sector by
/// sector (§6.2 loader steps 1–3). `path` names the source in errors.
pub fn load_stream(
    dev: &mut Ssnail,
    src: &mut dyn Read,
    file_len: u64,
    path: &Path,
) -> Result<LoadReport, LoadError> {
    let io = |e| LoadError::Io(path.to_path_buf(), e);
    let mut sector = vec![0u8; SECTOR];
    let first = read_sector(src, &mut sector, file_len, 0).map_err(io)?;
    let header =
        Header::parse(&sector[..first]).map_err(|e| LoadError::Header(path.to_path_buf(), e))?;
    let segs = header.segments();
    let expected = header.file_len();
    if file_len != expected {
        return Err(LoadError::Length {
            path: path.to_path_buf(),
            file: file_len,
            expected,
        });
    }
    // 1. Pointer to the first segment, clearing ERROR.
    set_pointer(dev, segs[0].address, LP_CLEAR_ERROR);
    let mut sectors = 0u64;
    let mut off = 0u64;
    let mut n = first;
    loop {
        // 2. Wait for READY (the emulated port is always ready when idle).
        if dev.read(reg::LP_COMMIT) & LP_READY == 0 {
            dev.run_to_idle();
        }
        // Segment starts inside this sector (or exactly at its first byte) split the DMA.
        let mut pos = 0usize;
        for s in segs.iter().skip(1) {
            if s.file_offset >= off && s.file_offset < off + n as u64 {
                let cut = (s.file_offset - off) as usize;
                dev.dma_data(&sector[pos..cut]);
                set_pointer(dev, s.address, 0);
                pos = cut;
            }
        }
        dev.dma_data(&sector[pos..n]);
        sectors += 1;
        off += n as u64;
        if off >= file_len {
            break;
        }
        n = read_sector(src, &mut sector, file_len, off).map_err(io)?;
    }
    // 3. Commit once more to flush, wait for READY, check ERROR.
    set_pointer(dev, BASE, 0);
    if dev.read(reg::LP_COMMIT) & LP_ERROR != 0 {
        return Err(LoadError::PortError(path.to_path_buf()));
    }
    Ok(LoadReport {
        sectors,
        bytes: file_len,
    })
}

fn read_sector(
    src: &mut dyn Read,
    buf: &mut [u8],
    file_len: u64,
    off: u64,
) -> std::io::Result<usize> {
    let n = (file_len - off).min(SECTOR as u64) as usize;
    src.read_exact(&mut buf[..n])?;
    Ok(n)
}

/// Memory for an image: max(8 MiB, header $38 rounded up to a whole MiB).
pub fn default_memory(h: &Header) -> usize {
    let mib = 1usize << 20;
    (8 * mib).max((h.mem_needed as usize).div_ceil(mib) * mib)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_flushes_blocks_when_the_pointer_leaves_them() {
        let mut dev = Ssnail::new(Machine::new(1 << 20));
        set_pointer(&mut dev, BASE + 0x1F0, LP_CLEAR_ERROR);
        dev.dma_data(&[7u8; 15]);
        // Still buffered: nothing in RAM yet.
        assert_eq!(dev.machine.mem()[0x1F0], 0);
        dev.dma_data(&[9u8]); // pointer reaches $8000200: block flushed
        assert_eq!(
            &dev.machine.mem()[0x1F0..0x200],
            &[[7u8; 15].as_slice(), &[9]].concat()[..]
        );
        dev.dma_data(&[5u8; 3]);
        assert_eq!(dev.machine.mem()[0x200], 0);
        // A commit flushes to the old pointer first.
        set_pointer(&mut dev, BASE + 0x5000, 0);
        assert_eq!(&dev.machine.mem()[0x200..0x203], &[5, 5, 5]);
        assert_eq!(dev.read(reg::LP_COMMIT) & (LP_READY | LP_ERROR), LP_READY);
    }

    #[test]
    fn the_port_remembers_the_end_of_the_highest_bytes_it_wrote() {
        let mut dev = Ssnail::new(Machine::new(1 << 20));
        assert_eq!(dev.port.written_end, 0);
        set_pointer(&mut dev, BASE + 0x4000, LP_CLEAR_ERROR);
        dev.dma_data(&[1u8; 0x30]);
        set_pointer(&mut dev, BASE + 0x100, 0); // flushes $8004000-$800402F
        assert_eq!(dev.port.written_end, (BASE + 0x4030) as u64);
        dev.dma_data(&[2u8; 8]);
        set_pointer(&mut dev, BASE, 0); // lower bytes leave the high-water mark
        assert_eq!(dev.port.written_end, (BASE + 0x4030) as u64);
        // Bytes refused (outside memory) are not counted as written.
        set_pointer(&mut dev, BASE + (2 << 20), 0);
        dev.dma_data(&[3u8; 4]);
        set_pointer(&mut dev, BASE, 0);
        assert_eq!(dev.port.written_end, (BASE + 0x4030) as u64);
    }

    #[test]
    fn error_outside_memory_and_clear() {
        let mut dev = Ssnail::new(Machine::new(1 << 20));
        set_pointer(&mut dev, BASE + (1 << 20) - 2, LP_CLEAR_ERROR);
        dev.dma_data(&[1, 2, 3, 4]);
        set_pointer(&mut dev, BASE, 0);
        assert_ne!(dev.read(reg::LP_COMMIT) & LP_ERROR, 0);
        // The last in-memory block was flushed when the pointer left it; the
        // bytes past the end raised ERROR at the commit.
        assert_eq!(&dev.machine.mem()[(1 << 20) - 2..], &[1, 2]);
        // Plain commit keeps ERROR; bit 6 clears it.
        set_pointer(&mut dev, BASE, 0);
        assert_ne!(dev.read(reg::LP_COMMIT) & LP_ERROR, 0);
        set_pointer(&mut dev, BASE, LP_CLEAR_ERROR);
        assert_eq!(dev.read(reg::LP_COMMIT) & LP_ERROR, 0);
    }

    /// A minimal image: header plus a payload of `payload_len` bytes.
    fn image(payload_len: u32, load_base: u32, host_len: u32) -> Vec<u8> {
        let h = Header {
            code: load_base,
            payload_len,
            load_base,
            host_base: if host_len > 0 { BASE + 0x1000 } else { 0 },
            host_len,
            mem_needed: 0x10_0000,
            ..Default::default()
        };
        let mut f = h.to_bytes().to_vec();
        f.extend((0..host_len + payload_len).map(|i| (i * 7 + 3) as u8));
        f
    }

    fn load(img: &[u8], mem: usize) -> (Ssnail, Result<LoadReport, LoadError>) {
        let mut dev = Ssnail::new(Machine::new(mem));
        let r = load_stream(
            &mut dev,
            &mut &img[..],
            img.len() as u64,
            Path::new("test.ssnail"),
        );
        (dev, r)
    }

    #[test]
    fn segment_inside_a_sector_and_on_a_sector_boundary() {
        // Payload at file offset 256 (inside sector 0): the normal case.
        let img = image(3000, 0x800_5000, 0);
        let (dev, r) = load(&img, 1 << 20);
        let r = r.unwrap();
        assert_eq!(r.sectors, (img.len() as u64).div_ceil(512));
        assert_eq!(&dev.machine.mem()[..256], &img[..256]);
        assert_eq!(&dev.machine.mem()[0x5000..0x5000 + 3000], &img[256..]);
        // Legacy host segment of 256 bytes: the payload then starts at file
        // offset 512, exactly on a sector boundary.
        let img = image(1000, 0x800_8000, 256);
        let (dev, r) = load(&img, 1 << 20);
        assert!(r.is_ok());
        assert_eq!(&dev.machine.mem()[0x1000..0x1100], &img[256..512]);
        assert_eq!(&dev.machine.mem()[0x8000..0x8000 + 1000], &img[512..]);
        // Legacy load base 0 means $8000100.
        let img = image(600, 0, 0);
        let (dev, _) = load(&img, 1 << 20);
        assert_eq!(&dev.machine.mem()[0x100..0x100 + 600], &img[256..]);
    }

    #[test]
    fn errors_name_the_file() {
        // Bigger than memory: the port reports ERROR.
        let img = image(200_000, 0x800_5000, 0);
        let (_, r) = load(&img, 128 * 1024);
        let e = r.unwrap_err().to_string();
        assert_eq!(
            e,
            "test.ssnail: load port reported ERROR (data outside RAM)"
        );
        // Truncated.
        let img = image(2000, 0x800_5000, 0);
        let (_, r) = load(&img[..1000], 1 << 20);
        assert!(r.unwrap_err().to_string().contains("file is 1000 bytes"));
        // Not an image.
        let (_, r) = load(&[b"GGUF".as_slice(), &[0u8; 600]].concat(), 1 << 20);
        assert!(r.unwrap_err().to_string().contains("not an SSNAIL image"));
    }
}
