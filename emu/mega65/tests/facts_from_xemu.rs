//! Behaviours where xemu and the headless MEGA65 disagreed (docs/FINDINGS.md, "xemu and the
//! headless MEGA65") and the hardware's sources decided: each test fails on the headless
//! MEGA65's old behaviour.

use ssnail_mega65::{Machine, StopReason};

/// Runs `code` at $2000 until it writes the exit port (the code must end with an exit).
fn run(m: &mut Machine, code: &[u8]) -> StopReason {
    m.poke_phys(0x2000, code);
    m.pc = 0x2000;
    m.run(10_000_000)
}

const EXIT: [u8; 10] = [0xA9, 0x00, 0x8D, 0xCF, 0xD6, 0xA9, 0x42, 0x8D, 0xCF, 0xD6];

/// A DOS call: LDA #function : STA $D640 : NOP (X, Y set before).
fn dos(function: u8) -> [u8; 6] {
    [0xA9, function, 0x8D, 0x40, 0xD6, 0xEA]
}

/// PHP : PLA : STA $abs (the flags after the call; bit 0 = C = success) and STX $abs+1.
fn save_flags_and_x(at: u16) -> Vec<u8> {
    let [lo, hi] = at.to_le_bytes();
    let [lo1, hi1] = (at + 1).to_le_bytes();
    vec![0x08, 0x68, 0x8D, lo, hi, 0x8E, lo1, hi1]
}

/// opendir, readdir (the folder's one file), then openfile and closedir in the given order,
/// then readfile; returns (readfile succeeded, its byte count low byte).
fn readfile_after(close_dir_first: bool) -> (bool, u8) {
    let sd = tempfile::tempdir().unwrap();
    std::fs::write(sd.path().join("DATA.BIN"), [0x5A; 300]).unwrap();
    let mut m = Machine::new();
    m.set_sd_dir(sd.path().to_path_buf());
    let mut code = Vec::new();
    code.extend(dos(0x12)); // opendir: A = descriptor
    code.extend([0x85, 0x40]); // STA $40
    code.extend([0xA6, 0x40, 0xA0, 0x05]); // LDX $40 : LDY #$05 (record at $0500)
    code.extend(dos(0x14)); // readdir: DATA.BIN
    let closedir: Vec<u8> = [0xA6, 0x40].into_iter().chain(dos(0x16)).collect(); // LDX $40
    if close_dir_first {
        code.extend(&closedir);
        code.extend(dos(0x18));
    } else {
        code.extend(dos(0x18));
        code.extend(&closedir);
    }
    code.extend(dos(0x1A)); // readfile
    code.extend(save_flags_and_x(0x4000));
    code.extend(EXIT);
    assert_eq!(run(&mut m, &code), StopReason::Exit(0));
    let got = m.peek_phys(0x4000, 2);
    (got[0] & 1 != 0, got[1])
}

#[test]
fn readfile_reads_the_descriptor_named_last_so_a_closedir_after_openfile_leaves_it_nothing() {
    // Hyppo stores the X of readdir/closefile/closedir as its current descriptor (dos.asm
    // trap_dos_readdir, trap_dos_closefile), and readfile reads that one.
    assert_eq!(
        readfile_after(true),
        (true, 300u16 as u8),
        "closedir, openfile, readfile"
    );
    let (ok, _) = readfile_after(false);
    assert!(
        !ok,
        "openfile, closedir, readfile must fail (the directory is current)"
    );
}

#[test]
fn the_undecoded_i2c_window_and_the_ssnail_page_without_a_core_read_ff() {
    // iomapper.vhdl decodes only $FFD71xx/$FFD73xx/$FFD74xx on R3-R6; xemu reads $FF there.
    let mut m = Machine::new();
    let mut code = Vec::new();
    for (i, addr) in [0xFFD_7500u32, 0xFFD_7000, 0xFFD_75FF]
        .into_iter()
        .enumerate()
    {
        // flat read through [$F0],Z: LDA #b0..b3 -> $F0..$F3; LDZ #0; EA LDA ($F0),Z; STA $4000+i
        for (k, b) in addr.to_le_bytes().into_iter().enumerate() {
            code.extend([0xA9, b, 0x85, 0xF0 + k as u8]);
        }
        code.extend([0xA3, 0x00, 0xEA, 0xB2, 0xF0, 0x8D, i as u8, 0x40]);
    }
    code.extend(EXIT);
    assert_eq!(run(&mut m, &code), StopReason::Exit(0));
    assert_eq!(m.peek_phys(0x4000, 3), [0xFF; 3]);
}
