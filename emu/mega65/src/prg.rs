//! Starting a program as BASIC 65's `RUN` would (spec §M8.1): the PRG is loaded at its load address
//! and, for a BASIC stub such as `10 BANK0:SYS8210`, execution starts at the SYS address parsed
//! from the tokenised line.

use super::machine::Machine;

/// BASIC token for SYS.
const TOKEN_SYS: u8 = 0x9E;

/// Where RTS from the started program lands: a stub in the (otherwise empty) KERNAL area that ends
/// the run with exit status 0, as returning to BASIC's READY would end a test.
const RETURN_STUB_PHYS: u32 = 0x3_FF00;
const RETURN_STUB_CPU: u16 = 0xFF00;

/// Splits a PRG into load address and data.
pub fn split_prg(prg: &[u8]) -> Result<(u16, &[u8]), String> {
    if prg.len() < 3 {
        return Err(format!("PRG too short ({} bytes)", prg.len()));
    }
    let load = u16::from_le_bytes([prg[0], prg[1]]);
    if load as usize + prg.len() - 2 > 0x1_0000 {
        return Err(format!(
            "PRG at ${load:04X} with {} bytes runs past $FFFF",
            prg.len() - 2
        ));
    }
    Ok((load, &prg[2..]))
}

/// The SYS address of a BASIC stub: the first `SYS` followed by decimal digits in the program's
/// lines (spaces allowed), following the line links.
pub fn sys_address(load: u16, data: &[u8]) -> Option<u16> {
    let at = |addr: u16| -> Option<u8> { data.get(addr.checked_sub(load)? as usize).copied() };
    let mut line = load;
    for _ in 0..64 {
        let link = u16::from_le_bytes([at(line)?, at(line.checked_add(1)?)?]);
        if link == 0 {
            return None;
        }
        let mut p = line + 4;
        let end = link;
        while p < end {
            if at(p)? == TOKEN_SYS {
                let mut q = p + 1;
                while at(q)? == b' ' {
                    q += 1;
                }
                let mut value: u32 = 0;
                let mut digits = 0;
                while let Some(d @ b'0'..=b'9') = at(q) {
                    value = value * 10 + (d - b'0') as u32;
                    digits += 1;
                    q += 1;
                    if value > 0xFFFF {
                        return None;
                    }
                }
                return (digits > 0).then_some(value as u16);
            }
            p += 1;
        }
        if link <= line {
            return None;
        }
        line = link;
    }
    None
}

impl Machine {
    /// Loads a PRG into bank 0 and returns (load address, start address). The start is `start`
    /// if given, else the SYS address of the BASIC stub, else the load address.
    pub fn load_prg(&mut self, prg: &[u8], start: Option<u16>) -> Result<(u16, u16), String> {
        let (load, data) = split_prg(prg)?;
        self.poke_phys(load as u32, data);
        let entry = match start {
            Some(s) => s,
            None => match sys_address(load, data) {
                Some(s) => s,
                None if load == 0x2001 || load == 0x0801 => {
                    return Err(
                        "the BASIC program has no SYS line to start; give a start address".into(),
                    )
                }
                None => load,
            },
        };
        Ok((load, entry))
    }

    /// Starts execution at `entry` as BASIC's SYS does, with RTS ending the run (exit status 0).
    pub fn start_at(&mut self, entry: u16) {
        // LDA #0 : STA $D6CF : LDA #$42 : STA $D6CF : JMP *
        let stub = [
            0xA9, 0x00, 0x8D, 0xCF, 0xD6, 0xA9, 0x42, 0x8D, 0xCF, 0xD6, 0x4C, 0x0A, 0xFF,
        ];
        self.poke_phys(RETURN_STUB_PHYS, &stub);
        let ret = RETURN_STUB_CPU - 1;
        self.push((ret >> 8) as u8);
        self.push(ret as u8);
        self.pc = entry;
    }
}

/// The first closed PRG on a D81 image (what DLOAD/RUN of the first file loads): its name and bytes.
pub fn first_prg_on_disk(image: Vec<u8>) -> Result<(String, Vec<u8>), String> {
    let disk = ssnail_disk::D81::from_bytes(image).map_err(|e| e.to_string())?;
    let files = disk.files().map_err(|e| e.to_string())?;
    let entry = files
        .iter()
        .find(|e| e.file_type == ssnail_disk::FileType::Prg && e.closed)
        .ok_or_else(|| "the disk holds no PRG file".to_string())?;
    let data = disk
        .read_chain(entry.first_track, entry.first_sector)
        .map_err(|e| format!("{}: {e}", entry.name))?;
    Ok((entry.name.clone(), data))
}
