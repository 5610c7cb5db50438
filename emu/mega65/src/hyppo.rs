//! Hypervisor traps (spec §M5), implemented natively instead of running Hyppo: writes to
//! $D640–$D67F in the MEGA65 personality. Trap 0 ($D640) is the DOS with the function in A; trap 3
//! ($D643) writes A to the serial monitor. The SD card's FAT32 file system is played by a host
//! directory: Hyppo upper-cases the requested name and matches only names stored in upper case, so
//! a host file is found only if its name is all upper case (e.g. `MODEL.BIN`).
//!
//! Results follow the Hyppo convention: C set = success; C clear = failure with the error code in A.
//! readfile leaves up to 512 bytes in the SD buffer ($FFD6E00) with the count in Y:X; at end of file
//! it returns a zero count with C set (the Book's and xemu's behaviour, spec §M5.4).

use std::fs::File;
use std::io::Read;
use std::path::PathBuf;

use ssnail_format::mega65::{dirent, hyppo as call};

use super::machine::{flag, Machine};
use super::sectors::SECTOR_SIZE;

/// A directory entry of the emulated card.
#[derive(Clone, Debug)]
pub struct Found {
    pub name: String,
    pub path: PathBuf,
    pub is_dir: bool,
    pub size: u64,
}

#[derive(Debug)]
struct OpenFile {
    file: File,
}

impl Clone for OpenFile {
    /// The same open file (a second descriptor: the position is shared).
    fn clone(&self) -> Self {
        OpenFile {
            file: self
                .file
                .try_clone()
                .expect("a second descriptor for an open file"),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Hyppo {
    root: Option<PathBuf>,
    /// Current directory below the root.
    cwd: Vec<String>,
    name: String,
    last_found: Option<Found>,
    files: [Option<OpenFile>; 4],
    /// Hyppo's `dos_current_file_descriptor`: the descriptor readfile reads. openfile sets it to
    /// the new file, and readdir, closefile and closedir to the X they are given, before they
    /// check it (mega65-core 76fac1b src/hyppo/dos.asm lines 753-754 in trap_dos_readdir and
    /// 853-854 in trap_dos_closefile: `ldx hypervisor_x / stx dos_current_file_descriptor`;
    /// trap_dos_closedir, line 793, jumps to trap_dos_closefile). So a closedir after openfile leaves readfile on the closed directory:
    /// readfile then fails, as on the real machine and in xemu (whose readfile needs the last
    /// opened file and loses it on any close).
    current: Option<u8>,
    /// Directory listings open through opendir / findfirst (fd = 4 + index).
    dirs: [Option<(Vec<Found>, usize)>; 2],
    last_error: u8,
    /// Sectors read by readfile (statistics).
    pub sectors_read: u64,
}

impl Hyppo {
    pub fn set_root(&mut self, dir: PathBuf) {
        self.root = Some(dir);
        self.cwd.clear();
    }

    fn cwd_path(&self) -> Option<PathBuf> {
        let mut p = self.root.clone()?;
        for c in &self.cwd {
            p.push(c);
        }
        Some(p)
    }

    /// Entries of the current directory, sorted by name.
    fn list(&self) -> Vec<Found> {
        let Some(dir) = self.cwd_path() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd.flatten() {
                let Ok(meta) = e.metadata() else { continue };
                let Some(name) = e.file_name().to_str().map(str::to_string) else {
                    continue;
                };
                out.push(Found {
                    name,
                    path: e.path(),
                    is_dir: meta.is_dir(),
                    size: meta.len(),
                });
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Finds the name set by setname: upper-cased request, exact match (Hyppo's rule).
    fn find(&self) -> Option<Found> {
        let want = self.name.to_ascii_uppercase();
        if want == ".." || want == "." {
            return Some(Found {
                name: want,
                path: PathBuf::new(),
                is_dir: true,
                size: 0,
            });
        }
        self.list().into_iter().find(|f| f.name == want)
    }
}

/// 8.3 name field (11 bytes, space padded, no dot) from a long name.
fn short_name(name: &str) -> [u8; 11] {
    let mut out = [b' '; 11];
    let (base, ext) = match name.rfind('.') {
        Some(i) if i > 0 => (&name[..i], &name[i + 1..]),
        _ => (name, ""),
    };
    for (i, c) in base.bytes().take(8).enumerate() {
        out[i] = c.to_ascii_uppercase();
    }
    for (i, c) in ext.bytes().take(3).enumerate() {
        out[8 + i] = c.to_ascii_uppercase();
    }
    out
}

impl Machine {
    /// A write to $D640 + `trap`. Hyppo takes the function (or character) from the saved A, not
    /// from the value written (the Book: the write must come from A).
    pub(crate) fn hypervisor_trap(&mut self, trap: u8) {
        // A trap costs the Hyppo round trip; ~200 cycles is the order of a short Hyppo service.
        self.cycles += 200;
        // Hyppo unmaps the $DE00 sector-buffer window on every return (spec §M5.5).
        self.sd.window = false;
        const DOS: u8 = 0;
        const SERIAL: u8 = (call::TRAP_SERIAL - call::TRAP_DOS) as u8;
        match trap {
            DOS => self.dos_call(self.a),
            SERIAL => {
                self.serial.push(self.a);
                self.p |= flag::C;
            }
            // $D641 ROM write-protect, $D642 config services, $D67F freeze: nothing to do here.
            _ => self.p |= flag::C,
        }
    }

    fn ok(&mut self) {
        self.p |= flag::C;
    }

    fn fail(&mut self, code: u8) {
        self.hyppo.last_error = code;
        self.a = code;
        self.p &= !flag::C;
    }

    /// Reads the name page (Y ≤ $7E, through the caller's memory map).
    fn copy_in_page(&mut self) -> Option<Vec<u8>> {
        if self.y >= call::PAGE_LIMIT {
            return None;
        }
        let base = (self.y as u16) << 8;
        Some((0..256u16).map(|i| self.rd(base + i)).collect())
    }

    fn dos_call(&mut self, function: u8) {
        match function & call::FUNCTION_MASK {
            call::GETVERSION => {
                // getversion: Hyppo 1.2, HDOS 1.2 (Z changes, as on the real machine).
                self.a = 1;
                self.x = 2;
                self.y = 1;
                self.z = 2;
                self.ok()
            }
            call::GETDEFAULTDRIVE | call::GETCURRENTDRIVE => {
                self.a = 0;
                self.ok()
            }
            call::SELECTDRIVE => {
                if self.x == 0 {
                    self.ok()
                } else {
                    self.fail(call::ERR_NO_SUCH_DRIVE)
                }
            }
            call::CHDIR => self.dos_chdir(),
            call::OPENDIR => self.dos_opendir(),
            call::READDIR => self.dos_readdir(),
            call::CLOSEDIR => {
                self.hyppo.current = Some(self.x);
                let i = self.x.wrapping_sub(4) as usize;
                if i < self.hyppo.dirs.len() && self.hyppo.dirs[i].is_some() {
                    self.hyppo.dirs[i] = None;
                    self.ok()
                } else {
                    self.fail(call::ERR_INVALID_FD)
                }
            }
            call::OPENFILE => self.dos_openfile(),
            call::READFILE => self.dos_readfile(),
            call::CLOSEFILE => {
                let fd = self.x as usize;
                self.hyppo.current = Some(self.x);
                if fd < 4 && self.hyppo.files[fd].is_some() {
                    self.hyppo.files[fd] = None;
                    self.ok()
                } else {
                    self.fail(call::ERR_INVALID_FD)
                }
            }
            call::CLOSEALL => {
                self.hyppo.files = Default::default();
                self.hyppo.dirs = Default::default();
                self.hyppo.current = None;
                self.ok()
            }
            call::SETNAME => self.dos_setname(),
            call::FINDFIRST => self.dos_findfirst(),
            call::FINDNEXT => self.dos_findnext(),
            call::FINDFILE => match self.hyppo.find() {
                Some(f) => {
                    self.hyppo.last_found = Some(f);
                    self.ok()
                }
                None => self.fail(call::ERR_NOT_FOUND),
            },
            call::LOADFILE => self.dos_loadfile(),
            call::GETERRORCODE => {
                self.a = self.hyppo.last_error;
                self.ok()
            }
            call::SETUP_TRANSFER_AREA => {
                if self.y >= call::PAGE_LIMIT {
                    self.fail(call::ERR_INVALID_ADDRESS)
                } else {
                    self.ok()
                }
            }
            call::CDROOTDIR => {
                if self.x == 0 {
                    self.hyppo.cwd.clear();
                    self.ok()
                } else {
                    self.fail(call::ERR_NO_SUCH_DRIVE)
                }
            }
            call::D81ATTACH0 | call::D81ATTACH1 | call::ATTACH => self.dos_attach(function),
            call::D81DETACH => {
                self.f011.detach();
                self.ok()
            }
            call::GET_MAPPING => {
                // get_mapping: 6 bytes (MAPLO offset+mask, MAPHI offset+mask, MBs) to Y×256.
                if self.y >= call::PAGE_LIMIT {
                    return self.fail(call::ERR_INVALID_ADDRESS);
                }
                let m = self.map;
                let lo = ((m.mask as u32 & 0x0F) << 12) | (m.lo_offset >> 8);
                let hi = ((m.mask as u32 >> 4) << 12) | (m.hi_offset >> 8);
                let bytes = [
                    lo as u8,
                    (lo >> 8) as u8,
                    hi as u8,
                    (hi >> 8) as u8,
                    m.lo_mb,
                    m.hi_mb,
                ];
                let base = (self.y as u16) << 8;
                for (i, b) in bytes.into_iter().enumerate() {
                    self.wr(base + i as u16, b);
                }
                self.ok()
            }
            call::SERIAL_MONITOR_WRITE => {
                self.serial.push(self.y);
                self.ok()
            }
            _ => self.fail(call::ERR_NOT_IMPLEMENTED),
        }
    }

    fn dos_setname(&mut self) {
        let Some(page) = self.copy_in_page() else {
            return self.fail(call::ERR_INVALID_ADDRESS);
        };
        let len = page.iter().position(|&b| b == 0).unwrap_or(256);
        if len > dirent::NAME_MAX {
            return self.fail(call::ERR_NAME_TOO_LONG);
        }
        self.hyppo.name = page[..len].iter().map(|&b| b as char).collect();
        self.ok()
    }

    fn dos_chdir(&mut self) {
        let Some(f) = self.hyppo.last_found.clone() else {
            return self.fail(call::ERR_NOT_FOUND);
        };
        if !f.is_dir {
            return self.fail(call::ERR_NOT_DIRECTORY);
        }
        match f.name.as_str() {
            "." => {}
            ".." => {
                self.hyppo.cwd.pop();
            }
            n => self.hyppo.cwd.push(n.to_string()),
        }
        self.ok()
    }

    fn free_dir_slot(&mut self) -> Option<usize> {
        self.hyppo.dirs.iter().position(Option::is_none)
    }

    fn dos_opendir(&mut self) {
        let Some(i) = self.free_dir_slot() else {
            return self.fail(call::ERR_TOO_MANY_OPEN);
        };
        self.hyppo.dirs[i] = Some((self.hyppo.list(), 0));
        self.a = 4 + i as u8;
        self.ok()
    }

    fn dos_readdir(&mut self) {
        self.hyppo.current = Some(self.x);
        let i = self.x.wrapping_sub(4) as usize;
        if self.y >= call::PAGE_LIMIT {
            return self.fail(call::ERR_INVALID_ADDRESS);
        }
        let Some(Some((list, pos))) = self.hyppo.dirs.get_mut(i) else {
            return self.fail(call::ERR_INVALID_FD);
        };
        let Some(f) = list.get(*pos).cloned() else {
            return self.fail(call::ERR_EOF);
        };
        *pos += 1;
        let mut rec = [0u8; dirent::LEN];
        let lfn = f.name.as_bytes();
        let n = lfn.len().min(dirent::NAME_MAX);
        rec[dirent::NAME..dirent::NAME + n].copy_from_slice(&lfn[..n]);
        rec[dirent::NAME_LEN] = n as u8;
        rec[dirent::SHORT_NAME..dirent::SHORT_NAME + 11].copy_from_slice(&short_name(&f.name));
        rec[dirent::CLUSTER..dirent::CLUSTER + 4].copy_from_slice(&(2 + *pos as u32).to_le_bytes());
        rec[dirent::SIZE..dirent::SIZE + 4]
            .copy_from_slice(&(f.size.min(u32::MAX as u64) as u32).to_le_bytes());
        rec[dirent::ATTR] = if f.is_dir {
            dirent::ATTR_DIR
        } else {
            dirent::ATTR_ARCHIVE
        };
        let base = (self.y as u16) << 8;
        for (k, b) in rec.into_iter().enumerate() {
            self.wr(base + k as u16, b);
        }
        self.hyppo.last_found = Some(f);
        self.ok()
    }

    /// findfirst: without wildcards (Hyppo has none) it finds the one exact match.
    fn dos_findfirst(&mut self) {
        let Some(found) = self.hyppo.find() else {
            return self.fail(call::ERR_NOT_FOUND);
        };
        let Some(i) = self.free_dir_slot() else {
            return self.fail(call::ERR_TOO_MANY_OPEN);
        };
        self.hyppo.dirs[i] = Some((vec![found.clone()], 1));
        self.hyppo.last_found = Some(found);
        self.a = 4 + i as u8;
        self.ok()
    }

    fn dos_findnext(&mut self) {
        // Every search holds one match; the next call reports "no more" and closes the search.
        if let Some(slot) = self
            .hyppo
            .dirs
            .iter_mut()
            .find(|d| d.as_ref().is_some_and(|(l, p)| l.len() == 1 && *p == 1))
        {
            *slot = None;
        }
        self.fail(call::ERR_NOT_FOUND)
    }

    fn dos_openfile(&mut self) {
        let Some(f) = self.hyppo.last_found.clone() else {
            return self.fail(call::ERR_NOT_FOUND);
        };
        if f.is_dir {
            return self.fail(call::ERR_IS_DIRECTORY);
        }
        let Some(fd) = self.hyppo.files.iter().position(Option::is_none) else {
            return self.fail(call::ERR_TOO_MANY_OPEN);
        };
        match File::open(&f.path) {
            Ok(file) => {
                self.hyppo.files[fd] = Some(OpenFile { file });
                self.hyppo.current = Some(fd as u8);
                self.a = fd as u8;
                self.ok()
            }
            Err(_) => self.fail(call::ERR_READ_ERROR),
        }
    }

    fn dos_readfile(&mut self) {
        let Some(fd) = self.hyppo.current else {
            return self.fail(call::ERR_INVALID_FD);
        };
        // A directory's descriptor (4, 5 here) or a closed file is no file to read.
        let Some(Some(of)) = self.hyppo.files.get_mut(fd as usize) else {
            return self.fail(call::ERR_INVALID_FD);
        };
        let mut buf = [0u8; SECTOR_SIZE];
        let mut n = 0;
        while n < SECTOR_SIZE {
            match of.file.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(_) => return self.fail(call::ERR_READ_ERROR),
            }
        }
        self.sectors.sd_mut()[..n].copy_from_slice(&buf[..n]);
        if n > 0 {
            self.hyppo.sectors_read += 1;
        }
        self.x = n as u8;
        self.y = (n >> 8) as u8;
        // An SD sector read at ~1.5 MB/s (SPI at 20 MHz with overheads) takes ~340 µs.
        self.cycles += 14_000;
        self.ok()
    }

    fn dos_loadfile(&mut self) {
        let Some(f) = self.hyppo.find() else {
            return self.fail(call::ERR_NOT_FOUND);
        };
        if f.is_dir {
            return self.fail(call::ERR_IS_DIRECTORY);
        }
        let Ok(data) = std::fs::read(&f.path) else {
            return self.fail(call::ERR_READ_ERROR);
        };
        let start = self.x as u32 | (self.y as u32) << 8 | (self.z as u32) << 16;
        for (i, &b) in data.iter().enumerate() {
            self.write_phys((start + i as u32) & 0xFF_FFFF, b);
        }
        self.cycles += data.len() as u64 * 27;
        self.ok()
    }

    fn dos_attach(&mut self, function: u8) {
        let Some(f) = self.hyppo.find() else {
            return self.fail(call::ERR_NOT_FOUND);
        };
        let attach = function & call::FUNCTION_MASK == call::ATTACH;
        let drive1 = function == call::D81ATTACH1 || (attach && self.x & 1 != 0);
        if attach && self.x & 0x80 != 0 {
            self.f011.detach();
            return self.ok();
        }
        if drive1 {
            return self.fail(call::ERR_NO_SUCH_DRIVE);
        }
        match std::fs::read(&f.path) {
            Ok(img) if img.len() == super::f011::D81_SIZE => {
                self.f011.attach(img);
                self.ok()
            }
            Ok(_) => self.fail(call::ERR_IMAGE_WRONG_LENGTH),
            Err(_) => self.fail(call::ERR_READ_ERROR),
        }
    }
}
