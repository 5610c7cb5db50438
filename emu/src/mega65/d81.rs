//! Reading files from a D81 (1581) image (spec §8.3): directory on track 40 from sector 3, files
//! as chains of 256-byte sectors (2-byte link + 254 data bytes).

use super::f011::D81_SIZE;

/// One directory entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// Name in PETSCII with the $A0 padding removed.
    pub name: Vec<u8>,
    /// File type byte ($82 = closed PRG).
    pub file_type: u8,
    pub track: u8,
    pub sector: u8,
    pub blocks: u16,
}

impl DirEntry {
    /// Name as text (PETSCII letters shown as ASCII).
    pub fn name_text(&self) -> String {
        self.name
            .iter()
            .map(|&b| match b {
                0x41..=0x5A => (b + 0x20) as char,
                0xC1..=0xDA => (b - 0x80) as char,
                0x20..=0x7E => b as char,
                _ => '?',
            })
            .collect()
    }

    pub fn is_prg(&self) -> bool {
        self.file_type & 0x07 == 2 && self.file_type & 0x80 != 0
    }
}

fn sector(image: &[u8], t: u8, s: u8) -> Result<&[u8], String> {
    if !(1..=80).contains(&t) || s >= 40 {
        return Err(format!("bad sector link {t}/{s}"));
    }
    let off = ((t as usize - 1) * 40 + s as usize) * 256;
    Ok(&image[off..off + 256])
}

fn check(image: &[u8]) -> Result<(), String> {
    if image.len() != D81_SIZE {
        return Err(format!(
            "not a D81 image: {} bytes, expected {D81_SIZE}",
            image.len()
        ));
    }
    Ok(())
}

/// Lists the directory.
pub fn directory(image: &[u8]) -> Result<Vec<DirEntry>, String> {
    check(image)?;
    let mut out = Vec::new();
    let (mut t, mut s) = (40u8, 3u8);
    let mut seen = 0;
    while t != 0 {
        seen += 1;
        if seen > 40 {
            return Err("directory chain loops".into());
        }
        let sec = sector(image, t, s)?;
        for e in sec.chunks(32) {
            if e[2] == 0 {
                continue;
            }
            let name: Vec<u8> = e[5..21]
                .iter()
                .copied()
                .take_while(|&b| b != 0xA0)
                .collect();
            out.push(DirEntry {
                name,
                file_type: e[2],
                track: e[3],
                sector: e[4],
                blocks: u16::from_le_bytes([e[30], e[31]]),
            });
        }
        (t, s) = (sec[0], sec[1]);
    }
    Ok(out)
}

/// Reads a file's bytes by following its sector chain.
pub fn read_file(image: &[u8], entry: &DirEntry) -> Result<Vec<u8>, String> {
    check(image)?;
    let mut out = Vec::new();
    let (mut t, mut s) = (entry.track, entry.sector);
    let mut steps = 0;
    loop {
        steps += 1;
        if steps > 80 * 40 {
            return Err("file chain loops".into());
        }
        let sec = sector(image, t, s)?;
        if sec[0] == 0 {
            let last = sec[1] as usize;
            if last < 1 {
                return Err("bad last-sector byte count".into());
            }
            out.extend_from_slice(&sec[2..=last]);
            return Ok(out);
        }
        out.extend_from_slice(&sec[2..]);
        (t, s) = (sec[0], sec[1]);
    }
}

/// The first PRG on the disk (what DLOAD/RUN of the first file loads).
pub fn first_prg(image: &[u8]) -> Result<(DirEntry, Vec<u8>), String> {
    let dir = directory(image)?;
    let entry = dir
        .into_iter()
        .find(|e| e.is_prg())
        .ok_or_else(|| "the disk holds no PRG file".to_string())?;
    let data = read_file(image, &entry)?;
    Ok((entry, data))
}
