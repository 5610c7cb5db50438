//! D81 disk images (Commodore 1581 format, as used by the MEGA65): a writer and a reader.
//!
//! Layout facts (docs/spec/mega65.md, spec §M8.3):
//! * 819,200 bytes = 80 tracks (1–80) × 40 sectors (0–39) × 256 bytes; sector (T,S) is at
//!   `((T−1)·40 + S)·256`.
//! * Track 40: sector 0 = header (disk name, ID, DOS type "3D"), sectors 1 and 2 = BAM (tracks 1–40
//!   and 41–80, 6 bytes per track: free count + 40-bit bitmap, bit set = free), directory chain from
//!   40/3 (8 entries of 32 bytes per sector, last sector linked `00 FF`).
//! * Files are chains of sectors: 2-byte link + 254 data bytes; in the last sector the link track
//!   is 0 and the second byte is the index of the last used byte.
//!
//! The writer allocates data sectors track 39 downwards to 1, then 41 upwards to 80 (the 1581
//! keeps the directory track in the middle), sectors in ascending order. File names are stored
//! as PETSCII: ASCII letters of either case become `$41–$5A` (what a user types on a MEGA65 in
//! lower-case mode), other printable ASCII is kept.
//!
//! **For the headless MEGA65 emulator**: [`D81::from_bytes`] + [`D81::sector`] give the raw
//! 256-byte logical sectors an F011 read needs (a 512-byte F011 sector at track `t` (0–79),
//! sector `s` (1–10), side `h` (0/1) is logical sectors `h·20 + (s−1)·2` and `+1` of track `t+1`,
//! i.e. image offset `t·10240 + h·5120 + (s−1)·512`), and [`D81::files`] / [`D81::read_file`]
//! list and read files (e.g. to inject a PRG).

use ssnail_format::mega65::d81;
use thiserror::Error;

pub const TRACKS: u8 = 80;
pub const SECTORS_PER_TRACK: u8 = 40;
pub const SECTOR_SIZE: usize = 256;
pub const D81_SIZE: usize = TRACKS as usize * SECTORS_PER_TRACK as usize * SECTOR_SIZE;
/// The directory's track (the 1581 layout is ssnail_format::mega65::d81, which the MEGA65
/// program's C reads as D81_*).
pub const DIR_TRACK: u8 = d81::DIR_TRACK;
/// Data bytes per file sector (256 minus the 2-byte link).
pub const BLOCK_DATA: usize = d81::BLOCK_DATA;
/// Blocks free on an empty disk (everything except track 40).
pub const EMPTY_DISK_FREE_BLOCKS: u32 = (TRACKS as u32 - 1) * SECTORS_PER_TRACK as u32;
const ENTRY_SIZE: usize = d81::ENTRY_LEN;
const NAME_LEN: usize = d81::NAME_LEN;
const PAD: u8 = d81::PAD;
const ENTRIES: usize = d81::ENTRIES_PER_SECTOR;
const TYPE: usize = d81::ENTRY_TYPE;
const NAME: usize = d81::ENTRY_NAME;
const BLOCKS: usize = d81::ENTRY_BLOCKS;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum DiskError {
    #[error("not a D81 image: {0} bytes, expected 819200")]
    WrongSize(usize),
    #[error("file name {0:?} is empty or longer than 16 characters")]
    BadName(String),
    #[error("file name {0:?} has a character that cannot be written in a directory entry")]
    BadNameChar(String),
    #[error("a file named {0:?} is already on the disk")]
    Exists(String),
    #[error("disk full: {name:?} needs {needed} blocks, {free} free")]
    DiskFull {
        name: String,
        needed: u32,
        free: u32,
    },
    #[error("directory full (track 40 has no free sector)")]
    DirectoryFull,
    #[error("no file named {0:?} on the disk")]
    NotFound(String),
    #[error("corrupt image: {0}")]
    Corrupt(String),
}

/// File types of a directory entry (low 3 bits of the type byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    Del,
    Seq,
    Prg,
    Usr,
    Rel,
    Other(u8),
}

impl FileType {
    fn code(self) -> u8 {
        match self {
            FileType::Del => d81::TYPE_DEL,
            FileType::Seq => d81::TYPE_SEQ,
            FileType::Prg => d81::TYPE_PRG,
            FileType::Usr => d81::TYPE_USR,
            FileType::Rel => d81::TYPE_REL,
            FileType::Other(c) => c & d81::TYPE_MASK,
        }
    }
    fn from_code(c: u8) -> FileType {
        match c & d81::TYPE_MASK {
            d81::TYPE_DEL => FileType::Del,
            d81::TYPE_SEQ => FileType::Seq,
            d81::TYPE_PRG => FileType::Prg,
            d81::TYPE_USR => FileType::Usr,
            d81::TYPE_REL => FileType::Rel,
            c => FileType::Other(c),
        }
    }
}

/// One directory entry as read from the image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// Name as ASCII (PETSCII `$41–$5A` shown as upper-case letters, padding removed).
    pub name: String,
    pub file_type: FileType,
    pub closed: bool,
    pub first_track: u8,
    pub first_sector: u8,
    /// Size in 256-byte blocks as recorded in the entry.
    pub blocks: u16,
}

/// A whole D81 image in memory.
#[derive(Clone)]
pub struct D81 {
    bytes: Vec<u8>,
}

fn offset(track: u8, sector: u8) -> usize {
    ((track as usize - 1) * SECTORS_PER_TRACK as usize + sector as usize) * SECTOR_SIZE
}

fn valid_ts(track: u8, sector: u8) -> bool {
    (1..=TRACKS).contains(&track) && sector < SECTORS_PER_TRACK
}

/// ASCII → PETSCII for a directory name; letters of either case map to `$41–$5A`.
pub fn name_to_petscii(name: &str) -> Result<Vec<u8>, DiskError> {
    if name.is_empty() || name.len() > NAME_LEN {
        return Err(DiskError::BadName(name.to_string()));
    }
    name.bytes()
        .map(|b| match b {
            b'a'..=b'z' => Ok(b - 0x20),
            0x20..=0x5F => Ok(b),
            _ => Err(DiskError::BadNameChar(name.to_string())),
        })
        .collect()
}

/// PETSCII directory name → ASCII (letters upper case; anything unprintable as `?`).
pub fn petscii_to_name(raw: &[u8]) -> String {
    raw.iter()
        .take_while(|&&b| b != PAD)
        .map(|&b| match b {
            0x20..=0x5F => b as char,
            0xC1..=0xDA => (b - 0x80) as char,
            _ => '?',
        })
        .collect()
}

impl D81 {
    /// A freshly formatted, empty disk.
    pub fn new(disk_name: &str, id: [u8; 2]) -> Result<D81, DiskError> {
        let mut d = D81 {
            bytes: vec![0; D81_SIZE],
        };
        let name = name_to_petscii(disk_name)?;
        let h = offset(DIR_TRACK, 0);
        let hdr = &mut d.bytes[h..h + SECTOR_SIZE];
        hdr[0] = DIR_TRACK;
        hdr[1] = d81::DIR_SECTOR;
        hdr[2] = 0x44;
        hdr[4..4 + NAME_LEN].fill(PAD);
        hdr[4..4 + name.len()].copy_from_slice(&name);
        hdr[0x14] = PAD;
        hdr[0x15] = PAD;
        hdr[0x16] = id[0];
        hdr[0x17] = id[1];
        hdr[0x18] = PAD;
        hdr[0x19] = b'3';
        hdr[0x1A] = b'D';
        hdr[0x1B] = PAD;
        hdr[0x1C] = PAD;
        for (bam_sector, link) in [(1u8, [DIR_TRACK, 2]), (2u8, [0, 0xFF])] {
            let b = offset(DIR_TRACK, bam_sector);
            let bam = &mut d.bytes[b..b + SECTOR_SIZE];
            bam[0] = link[0];
            bam[1] = link[1];
            bam[2] = 0x44;
            bam[3] = 0xBB;
            bam[4] = id[0];
            bam[5] = id[1];
            bam[6] = 0xC0;
            for t in 0..40 {
                let e = 0x10 + t * 6;
                bam[e] = 40;
                bam[e + 1..e + 6].fill(0xFF);
            }
        }
        for s in 0..4 {
            d.mark_used(DIR_TRACK, s);
        }
        let dir = offset(DIR_TRACK, d81::DIR_SECTOR);
        d.bytes[dir] = 0;
        d.bytes[dir + 1] = 0xFF;
        Ok(d)
    }

    /// Wrap an existing image (checks the size and the directory track's basic shape).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<D81, DiskError> {
        if bytes.len() != D81_SIZE {
            return Err(DiskError::WrongSize(bytes.len()));
        }
        let d = D81 { bytes };
        let h = offset(DIR_TRACK, 0);
        if d.bytes[h] != DIR_TRACK || d.bytes[h + 2] != 0x44 {
            return Err(DiskError::Corrupt(
                "track 40 sector 0 is not a 1581 header (expected 28 xx 44)".into(),
            ));
        }
        Ok(d)
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// One 256-byte logical sector (track 1–80, sector 0–39).
    pub fn sector(&self, track: u8, sector: u8) -> Result<&[u8], DiskError> {
        if !valid_ts(track, sector) {
            return Err(DiskError::Corrupt(format!("no sector {track}/{sector}")));
        }
        let o = offset(track, sector);
        Ok(&self.bytes[o..o + SECTOR_SIZE])
    }

    /// Disk name from the header (ASCII).
    pub fn disk_name(&self) -> String {
        let h = offset(DIR_TRACK, 0);
        petscii_to_name(&self.bytes[h + 4..h + 4 + NAME_LEN])
    }

    fn bam_entry(&self, track: u8) -> usize {
        let (sector, t0) = if track <= 40 { (1, 1) } else { (2, 41) };
        offset(DIR_TRACK, sector) + 0x10 + (track - t0) as usize * 6
    }

    pub fn is_free(&self, track: u8, sector: u8) -> bool {
        let e = self.bam_entry(track);
        self.bytes[e + 1 + sector as usize / 8] & (1 << (sector % 8)) != 0
    }

    fn mark_used(&mut self, track: u8, sector: u8) {
        if self.is_free(track, sector) {
            let e = self.bam_entry(track);
            self.bytes[e + 1 + sector as usize / 8] &= !(1 << (sector % 8));
            self.bytes[e] -= 1;
        }
    }

    /// Free blocks outside the directory track (what BASIC's DIR shows as "BLOCKS FREE").
    pub fn free_blocks(&self) -> u32 {
        (1..=TRACKS)
            .filter(|&t| t != DIR_TRACK)
            .map(|t| self.bytes[self.bam_entry(t)] as u32)
            .sum()
    }

    /// Blocks a file of `len` bytes occupies (at least one).
    pub fn blocks_for(len: usize) -> u32 {
        len.div_ceil(BLOCK_DATA).max(1) as u32
    }

    fn data_sectors_free(&self) -> impl Iterator<Item = (u8, u8)> + '_ {
        (1..DIR_TRACK)
            .rev()
            .chain(DIR_TRACK + 1..=TRACKS)
            .flat_map(|t| (0..SECTORS_PER_TRACK).map(move |s| (t, s)))
            .filter(|&(t, s)| self.is_free(t, s))
    }

    /// Add a file; fails without changing the image if it does not fit.
    pub fn add_file(
        &mut self,
        name: &str,
        file_type: FileType,
        data: &[u8],
    ) -> Result<(), DiskError> {
        let pet = name_to_petscii(name)?;
        let key = petscii_to_name(&pet);
        if self.files()?.iter().any(|e| e.name == key) {
            return Err(DiskError::Exists(key));
        }
        let needed = Self::blocks_for(data.len());
        let free = self.free_blocks();
        if needed > free {
            return Err(DiskError::DiskFull {
                name: key,
                needed,
                free,
            });
        }
        let slot = self.free_dir_slot()?;
        let chain: Vec<(u8, u8)> = self.data_sectors_free().take(needed as usize).collect();
        for (i, &(t, s)) in chain.iter().enumerate() {
            let start = i * BLOCK_DATA;
            let piece = &data[start.min(data.len())..(start + BLOCK_DATA).min(data.len())];
            let o = offset(t, s);
            let sec = &mut self.bytes[o..o + SECTOR_SIZE];
            sec.fill(0);
            match chain.get(i + 1) {
                Some(&(nt, ns)) => {
                    sec[0] = nt;
                    sec[1] = ns;
                }
                None => {
                    sec[0] = 0;
                    sec[1] = (piece.len() + 1) as u8;
                }
            }
            sec[2..2 + piece.len()].copy_from_slice(piece);
            self.mark_used(t, s);
        }
        let e = &mut self.bytes[slot..slot + ENTRY_SIZE];
        e[TYPE] = d81::TYPE_CLOSED | file_type.code();
        e[d81::ENTRY_TRACK] = chain[0].0;
        e[d81::ENTRY_SECTOR] = chain[0].1;
        e[NAME..NAME + NAME_LEN].fill(PAD);
        e[NAME..NAME + pet.len()].copy_from_slice(&pet);
        e[NAME + NAME_LEN..BLOCKS].fill(0);
        e[BLOCKS..BLOCKS + 2].copy_from_slice(&(needed as u16).to_le_bytes());
        Ok(())
    }

    /// Byte offset of a free 32-byte directory entry, extending the chain on track 40 if needed.
    fn free_dir_slot(&mut self) -> Result<usize, DiskError> {
        let mut sector = d81::DIR_SECTOR;
        for _ in 0..SECTORS_PER_TRACK {
            let o = offset(DIR_TRACK, sector);
            for i in 0..ENTRIES {
                if self.bytes[o + i * ENTRY_SIZE + TYPE] == 0 {
                    return Ok(o + i * ENTRY_SIZE);
                }
            }
            let (nt, ns) = (self.bytes[o], self.bytes[o + 1]);
            if nt == 0 {
                let next = (4..SECTORS_PER_TRACK)
                    .find(|&s| self.is_free(DIR_TRACK, s))
                    .ok_or(DiskError::DirectoryFull)?;
                self.mark_used(DIR_TRACK, next);
                self.bytes[o] = DIR_TRACK;
                self.bytes[o + 1] = next;
                let n = offset(DIR_TRACK, next);
                self.bytes[n..n + SECTOR_SIZE].fill(0);
                self.bytes[n + 1] = 0xFF;
                return Ok(n);
            }
            if nt != DIR_TRACK || ns >= SECTORS_PER_TRACK {
                return Err(DiskError::Corrupt(format!(
                    "directory chain leaves track 40 ({nt}/{ns})"
                )));
            }
            sector = ns;
        }
        Err(DiskError::Corrupt("directory chain loops".into()))
    }

    /// All used directory entries, in directory order.
    pub fn files(&self) -> Result<Vec<DirEntry>, DiskError> {
        let mut out = Vec::new();
        let (mut t, mut s) = (DIR_TRACK, d81::DIR_SECTOR);
        for _ in 0..SECTORS_PER_TRACK {
            if !valid_ts(t, s) {
                return Err(DiskError::Corrupt(format!(
                    "directory chain points at {t}/{s}"
                )));
            }
            let o = offset(t, s);
            for i in 0..ENTRIES {
                let e = &self.bytes[o + i * ENTRY_SIZE..o + (i + 1) * ENTRY_SIZE];
                if e[TYPE] == 0 {
                    continue;
                }
                out.push(DirEntry {
                    name: petscii_to_name(&e[NAME..NAME + NAME_LEN]),
                    file_type: FileType::from_code(e[TYPE]),
                    closed: e[TYPE] & d81::TYPE_CLOSED != 0,
                    first_track: e[d81::ENTRY_TRACK],
                    first_sector: e[d81::ENTRY_SECTOR],
                    blocks: u16::from_le_bytes([e[BLOCKS], e[BLOCKS + 1]]),
                });
            }
            let (nt, ns) = (self.bytes[o], self.bytes[o + 1]);
            if nt == 0 {
                return Ok(out);
            }
            t = nt;
            s = ns;
        }
        Err(DiskError::Corrupt("directory chain loops".into()))
    }

    /// Follow a file's sector chain and return its bytes.
    pub fn read_chain(&self, track: u8, sector: u8) -> Result<Vec<u8>, DiskError> {
        let mut out = Vec::new();
        let (mut t, mut s) = (track, sector);
        for _ in 0..(TRACKS as usize * SECTORS_PER_TRACK as usize) {
            if !valid_ts(t, s) {
                return Err(DiskError::Corrupt(format!("file chain points at {t}/{s}")));
            }
            let sec = self.sector(t, s)?;
            if sec[0] == 0 {
                let last = sec[1] as usize;
                if last < 1 {
                    return Err(DiskError::Corrupt(format!(
                        "last sector {t}/{s} has end index 0"
                    )));
                }
                out.extend_from_slice(&sec[2..last + 1]);
                return Ok(out);
            }
            out.extend_from_slice(&sec[2..]);
            t = sec[0];
            s = sec[1];
        }
        Err(DiskError::Corrupt("file chain loops".into()))
    }

    /// Contents of the file with this name (ASCII, letters compared case-insensitively).
    pub fn read_file(&self, name: &str) -> Result<Vec<u8>, DiskError> {
        let want = name.to_ascii_uppercase();
        let e = self
            .files()?
            .into_iter()
            .find(|e| e.name == want && e.file_type != FileType::Del)
            .ok_or_else(|| DiskError::NotFound(name.to_string()))?;
        self.read_chain(e.first_track, e.first_sector)
    }
}

#[cfg(test)]
mod tests;
