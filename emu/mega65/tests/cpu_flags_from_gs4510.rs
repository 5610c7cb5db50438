//! 45GS02 flag behaviours that differ from the 6502/65C02, each checked against mega65-core's
//! gs4510.vhdl (76fac1b): BIT #imm sets N and V (lines 1056, 7428, 7714, 8551-8555); TSY, TBA,
//! TAZ, TZA and NEG set N/Z, TYS and TAB set no flag (lines 6950-7017); ASR A shifts bit 0 into C
//! and sets N/Z (line 6991-6996); PLP loads every flag but E (lines 3764-3774); BITQ sets N and V
//! from bits 31 and 30 of the operand (lines 8422-8424).

use ssnail_mega65::{flag, Machine, StopReason};

const EXIT: [u8; 10] = [0xA9, 0x00, 0x8D, 0xCF, 0xD6, 0xA9, 0x42, 0x8D, 0xCF, 0xD6];

/// Runs `code` at $2000 with the flags `p`, then stores A at $4001 and P at $4000 (STA; PHP;
/// PLA; STA) and exits; returns that P and the machine with A as the code left it.
fn flags_after(p: u8, code: &[u8]) -> (u8, Machine) {
    let mut m = Machine::new();
    let mut prog = code.to_vec();
    prog.extend([0x8D, 0x01, 0x40, 0x08, 0x68, 0x8D, 0x00, 0x40]);
    prog.extend(EXIT);
    m.poke_phys(0x2000, &prog);
    m.pc = 0x2000;
    m.p = p;
    assert_eq!(m.run(1_000_000), StopReason::Exit(0));
    let got = m.peek_phys(0x4000, 2);
    m.a = got[1];
    (got[0], m)
}

const NVZ: u8 = flag::N | flag::V | flag::Z;

#[test]
fn bit_immediate_sets_n_and_v_from_the_operand_as_the_other_bit_modes() {
    // LDA #$01 : BIT #$C0 -> N=1 V=1 Z=1 (A AND $C0 = 0)
    let (p, _) = flags_after(flag::E | flag::I, &[0xA9, 0x01, 0x89, 0xC0]);
    assert_eq!(p & NVZ, flag::N | flag::V | flag::Z);
    // LDA #$FF : BIT #$01 with N and V set before -> both cleared, Z=0
    let (p, _) = flags_after(
        flag::E | flag::I | flag::N | flag::V,
        &[0xA9, 0xFF, 0x89, 0x01],
    );
    assert_eq!(p & NVZ, 0);
    // the same as BIT $nn on the same operand
    let (q, _) = flags_after(
        flag::E | flag::I,
        &[0xA9, 0x40, 0x8D, 0x10, 0x40, 0xA9, 0x01, 0x2C, 0x10, 0x40],
    );
    let (p, _) = flags_after(flag::E | flag::I, &[0xA9, 0x01, 0x89, 0x40]);
    assert_eq!(p & NVZ, q & NVZ);
    assert_eq!(p & NVZ, flag::V | flag::Z);
}

#[test]
fn register_transfers_set_n_and_z_except_tys_and_tab() {
    let base = flag::E | flag::I;
    // LDY #$80 : TYS (SPH = $80), then TSY after LDY #0: N from SPH
    let (p, m) = flags_after(base, &[0xA0, 0x80, 0x2B, 0xA0, 0x00, 0x0B]);
    assert_eq!(m.y, 0x80);
    assert_eq!(p & (flag::N | flag::Z), flag::N, "TSY sets N/Z");
    // LDY #$00 (Z=1) : LDA #$80 would change flags, so: LDA #$80 : LDY #$00 : TYS -> Z stays 1
    let (p, _) = flags_after(base, &[0xA9, 0x80, 0xA0, 0x00, 0x2B]);
    assert_eq!(p & (flag::N | flag::Z), flag::Z, "TYS sets no flag");
    // LDA #$00 : TAB (Z stays 1) ... then LDA #$80 : TBA -> A = 0, Z=1 N=0 from B
    let (p, _) = flags_after(base, &[0xA9, 0x80, 0x5B]);
    assert_eq!(
        p & (flag::N | flag::Z),
        flag::N,
        "TAB sets no flag (N from LDA)"
    );
    let (p, m) = flags_after(base, &[0xA9, 0x00, 0x5B, 0xA9, 0x80, 0x7B]);
    assert_eq!(m.a, 0);
    assert_eq!(p & (flag::N | flag::Z), flag::Z, "TBA sets N/Z");
    // TAZ / TZA
    let (p, _) = flags_after(base, &[0xA9, 0x00, 0xA2, 0x01, 0x4B]);
    assert_eq!(p & flag::Z, flag::Z, "TAZ sets Z");
    let (p, _) = flags_after(base, &[0xA3, 0x90, 0xA9, 0x01, 0x6B]);
    assert_eq!(p & (flag::N | flag::Z), flag::N, "TZA sets N");
}

#[test]
fn neg_and_asr_set_their_flags() {
    let base = flag::E | flag::I;
    let (p, m) = flags_after(base, &[0xA9, 0x01, 0x42]);
    assert_eq!(m.a, 0xFF);
    assert_eq!(p & (flag::N | flag::Z), flag::N, "NEG");
    // ASR A of $81: $C0, C = 1, N = 1
    let (p, m) = flags_after(base, &[0x18, 0xA9, 0x81, 0x43]);
    assert_eq!(m.a, 0xC0);
    assert_eq!(
        p & (flag::N | flag::Z | flag::C),
        flag::N | flag::C,
        "ASR A"
    );
}

#[test]
fn plp_loads_every_flag_but_e() {
    // LDA #$00 : PHA : PLP with E set: E stays 1, the rest from the byte (0)
    let (p, _) = flags_after(flag::E | flag::I | flag::N, &[0xA9, 0x00, 0x48, 0x28]);
    assert_eq!(p & flag::E, flag::E);
    assert_eq!(p & (flag::N | flag::I | flag::C), 0);
}

#[test]
fn bitq_sets_n_and_v_from_bits_31_and_30() {
    // $4010..$4013 = $00 $00 $00 $C0; Q = 1 (A=1, X=Y=Z=0); NEG NEG BIT $4010
    let code = [
        0xA9, 0xC0, 0x8D, 0x13, 0x40, 0xA9, 0x01, 0xA2, 0x00, 0xA0, 0x00, 0xA3, 0x00, 0x42, 0x42,
        0x2C, 0x10, 0x40,
    ];
    let (p, _) = flags_after(flag::E | flag::I, &code);
    assert_eq!(p & NVZ, flag::N | flag::V | flag::Z);
}
