//! I/O registers a program without KERNAL uses: the hardware multiplier/divider, the $D02F
//! knock, CPU speed, the CIA timers and the CPU port.

use ssnail_mega65::{Machine, StopReason};

/// Runs `code` at $2000 until it writes the exit port (the code must end with an exit).
fn run(m: &mut Machine, code: &[u8]) -> StopReason {
    m.poke_phys(0x2000, code);
    m.pc = 0x2000;
    m.run(10_000_000)
}

const EXIT: [u8; 10] = [0xA9, 0x00, 0x8D, 0xCF, 0xD6, 0xA9, 0x42, 0x8D, 0xCF, 0xD6];

#[test]
fn multiplier_and_divider() {
    let mut m = Machine::new();
    let a: u32 = 123_456_789;
    let b: u32 = 1000;
    let mut code = Vec::new();
    for (i, byte) in a
        .to_le_bytes()
        .into_iter()
        .chain(b.to_le_bytes())
        .enumerate()
    {
        code.extend([0xA9, byte, 0x8D, 0x70 + i as u8, 0xD7]); // LDA # : STA $D770+i
    }
    for i in 0..24u8 {
        code.extend([0xAD, 0x68 + i, 0xD7, 0x8D, i, 0x40]); // LDA $D768+i : STA $4000+i
    }
    code.extend(EXIT);
    assert_eq!(run(&mut m, &code), StopReason::Exit(0));
    let out = m.peek_phys(0x4000, 24);
    let div = u64::from_le_bytes(out[0..8].try_into().unwrap());
    assert_eq!(
        out[8..16],
        code[1..].iter().step_by(5).copied().collect::<Vec<u8>>()[..8],
        "inputs read back"
    );
    let mul = u64::from_le_bytes(out[16..24].try_into().unwrap());
    assert_eq!(mul, a as u64 * b as u64);
    assert_eq!(div >> 32, (a / b) as u64, "integer part of A/B");
    assert_eq!(
        div,
        ((a as u128) << 32).checked_div(b as u128).unwrap() as u64,
        "32.32 quotient"
    );
}

#[test]
fn knock_selects_the_personality() {
    // In the C64 personality $D640 is not a trap and $D6CF not the exit port; after the
    // $47,$53 knock both work again.
    let mut m = Machine::new();
    let mut code = vec![
        0xA9, 0x00, 0x8D, 0x2F, 0xD0, // knock: anything else -> C64 (VIC-II) personality
        0xA9, 0x41, 0x8D, 0x43, 0xD6, 0xEA, // serial write: ignored
        0xA9, 0x42, 0x8D, 0xCF, 0xD6, // no exit here
        0xA9, 0x47, 0x8D, 0x2F, 0xD0, 0xA9, 0x53, 0x8D, 0x2F, 0xD0, // MEGA65 personality
        0xA9, 0x42, 0x8D, 0x43, 0xD6, 0xEA, // serial 'B'
    ];
    code.extend(EXIT);
    assert_eq!(run(&mut m, &code), StopReason::Exit(0));
    assert_eq!(m.serial, b"B");
}

#[test]
fn slow_speeds_stretch_the_cycle_count() {
    // 1000 × (DEX + BNE) at 40.5 MHz and at 1 MHz ($D031 FAST off, force-fast off).
    let lp = [0xA2, 0x00, 0xA0, 0x04, 0xCA, 0xD0, 0xFD, 0x88, 0xD0, 0xFA];
    let mut fast = Machine::new();
    let mut code = lp.to_vec();
    code.extend(EXIT);
    run(&mut fast, &code);
    let mut slow = Machine::new();
    let mut code = vec![0xA9, 0x00, 0x8D, 0x31, 0xD0, 0xA9, 0x40, 0x85, 0x00];
    code.extend(lp);
    code.extend(EXIT);
    run(&mut slow, &code);
    let ratio = slow.cycles as f64 / fast.cycles as f64;
    assert!(ratio > 25.0 && ratio < 60.0, "1 MHz vs 40.5 MHz: {ratio}");
}

#[test]
fn cia_timer_counts_microseconds_and_cpu_port_reads_back() {
    let mut m = Machine::new();
    let mut code = vec![
        0xA9, 0xFF, 0x8D, 0x04, 0xDC, 0x8D, 0x05, 0xDC, // latch $FFFF
        0xA9, 0x11, 0x8D, 0x0E, 0xDC, // force load, start
        0xA2, 0x00, 0xCA, 0xD0, 0xFD, // 256 × (DEX 1 + BNE 4) cycles
        0xAD, 0x05, 0xDC, 0x8D, 0x01, 0x40, 0xAD, 0x04, 0xDC, 0x8D, 0x00,
        0x40, // timer hi, lo
        0xA9, 0x34, 0x85, 0x01, 0xA5, 0x01, 0x8D, 0x02, 0x40, // $01 = $34, read back
        0xA9, 0x77, 0x8D, 0x20, 0xD0, // all RAM: $D020 is RAM now
        0xA9, 0x35, 0x85, 0x01, // I/O back
    ];
    code.extend(EXIT);
    assert_eq!(run(&mut m, &code), StopReason::Exit(0));
    let t = m.peek_phys(0x4000, 3);
    let elapsed = 0xFFFF - u16::from_le_bytes([t[0], t[1]]) as u32;
    // ~256 × 5 + 16 cycles at 40.5 MHz ≈ 32 µs.
    assert!((30..=35).contains(&elapsed), "{elapsed} µs");
    assert_eq!(t[2], 0x34);
    assert_eq!(
        m.peek_phys(0xD020, 1),
        [0x77],
        "$01 = $34 showed RAM at $D020"
    );
    assert_ne!(
        m.peek_phys(0xFFD_3020, 1),
        [0x77],
        "the border register was not written"
    );
}

#[test]
fn sector_buffer_window_at_de00() {
    // Select the SD buffer, map it at $DE00 (command $81), read a byte, then a trap unmaps it.
    let mut m = Machine::new();
    let mut code = vec![
        0xA9, 0x80, 0x8D, 0x89, 0xD6, // $D689 bit 7: SD buffer
        0xA9, 0x81, 0x8D, 0x80, 0xD6, // map at $DE00
        0xA9, 0x99, 0x8D, 0x05, 0xDE, // STA $DE05
        0xAD, 0x05, 0xDE, 0x8D, 0x00, 0x40, // LDA $DE05 : STA $4000
        0xA9, 0x04, 0x8D, 0x40, 0xD6, 0xEA, // getcurrentdrive trap
        0xAD, 0x05, 0xDE, 0x8D, 0x01, 0x40, // $DE05 is cartridge I/O again
    ];
    code.extend(EXIT);
    assert_eq!(run(&mut m, &code), StopReason::Exit(0));
    let got = m.peek_phys(0x4000, 2);
    assert_eq!(got[0], 0x99);
    assert_ne!(got[1], 0x99);
    assert_eq!(
        m.peek_phys(0xFFD_6E05, 1),
        [0x99],
        "the SD buffer at $FFD6E00"
    );
    assert_eq!(
        m.peek_phys(0xFFD_6005, 1),
        [0x99],
        "mirrored across $FFD6000-$FFD6FFF"
    );
}

#[test]
fn raster_line_advances_with_the_clock() {
    // Wait for raster line 0 twice (bit 8 in $D011 clear, $D012 = 0): one PAL frame = 20 ms.
    let mut m = Machine::new();
    let wait = [
        0xAD, 0x12, 0xD0, 0xD0, 0xFB, // wait until $D012 = 0
        0x2C, 0x11, 0xD0, 0x30, 0xF6, // ... and $D011 bit 7 = 0
        0xAD, 0x12, 0xD0, 0xF0, 0xFB, // leave line 0
    ];
    let mut code = Vec::new();
    code.extend(wait);
    code.extend(wait);
    code.extend(EXIT);
    assert_eq!(run(&mut m, &code), StopReason::Exit(0));
    let ms = m.seconds() * 1000.0;
    assert!((20.0..20.2).contains(&ms), "{ms} ms");
}

#[test]
fn raster_interrupt_every_frame() {
    // IRQ at raster line 100, acknowledged with INC $D019 (the RMW dummy write acks); the
    // handler counts frames in $30. 0.2 s = 10 frames.
    let mut m = Machine::new();
    let code = [
        0xA9, 0x64, 0x8D, 0x12, 0xD0, // compare line 100
        0xA9, 0x1B, 0x8D, 0x11, 0xD0, // bit 7 = 0
        0xA9, 0x01, 0x8D, 0x1A, 0xD0, // enable raster IRQ
        0x58, // CLI
        0x80, 0xFE, // BRA *
    ];
    m.poke_phys(0x3000, &[0xE6, 0x30, 0xEE, 0x19, 0xD0, 0x40]); // INC $30 : INC $D019 : RTI
                                                                // IRQ vector at $FFFE: the start state maps $E000-$FFFF to $3E000.
    m.poke_phys(0x3_FFFE, &[0x00, 0x30]);
    m.p = 0x24;
    m.poke_phys(0x2000, &code);
    m.pc = 0x2000;
    assert_eq!(m.run(ssnail_mega65::CPU_HZ / 5), StopReason::Budget);
    assert_eq!(m.peek_phys(0x30, 1), [10]);
}

#[test]
fn cia2_nmi_ignores_i_and_is_edge_triggered() {
    // CIA 2 timer A every 1000 µs raises NMI even with I set. Handler A acknowledges ($DD0D
    // read) and counts; handler B does not acknowledge, so only one NMI arrives.
    for (ack, expect) in [(true, 10u8), (false, 1u8)] {
        let mut m = Machine::new();
        let code = [
            0xA9, 0xE8, 0x8D, 0x04, 0xDD, 0xA9, 0x03, 0x8D, 0x05, 0xDD, // latch 1000
            0xA9, 0x81, 0x8D, 0x0D, 0xDD, // enable timer A NMI
            0xA9, 0x11, 0x8D, 0x0E, 0xDD, // force load, start
            0x80, 0xFE, // BRA * (I stays set)
        ];
        let handler: &[u8] = if ack {
            &[0xE6, 0x30, 0xAD, 0x0D, 0xDD, 0x40] // INC $30 : LDA $DD0D : RTI
        } else {
            &[0xE6, 0x30, 0x40]
        };
        m.poke_phys(0x3000, handler);
        m.poke_phys(0x3_FFFA, &[0x00, 0x30]);
        m.p = 0x24;
        m.poke_phys(0x2000, &code);
        m.pc = 0x2000;
        assert_eq!(
            m.run(ssnail_mega65::CPU_HZ / 100 + 2000),
            StopReason::Budget
        );
        assert_eq!(m.peek_phys(0x30, 1), [expect], "acknowledge: {ack}");
    }
}

#[test]
fn a_dma_job_leaves_the_list_address_after_its_list_so_a_d705_write_alone_reads_the_next_page() {
    // gs4510.vhdl advances reg_dmagic_addr over every list byte and leaves it there: a list at
    // $30F5 (options $0B $00 and a 12-byte F018B entry) ends at $3103, so writing only $D705 =
    // $F5 again starts the job at $31F5, not at $30F5. The registers read back the address.
    let list = |value: u8, dst: u16| {
        let [lo, hi] = dst.to_le_bytes();
        // F018B, end of options; FILL 1 byte of `value` to `dst` in bank 0.
        vec![0x0B, 0x00, 0x03, 1, 0, value, 0, 0, lo, hi, 0, 0, 0, 0]
    };
    let mut m = Machine::new();
    m.poke_phys(0x30F5, &list(1, 0x4000));
    m.poke_phys(0x31F5, &list(2, 0x4001));
    let mut code = vec![
        0xA9, 0x00, 0x8D, 0x02, 0xD7, 0x8D, 0x04, 0xD7, // list bank and megabyte 0
        0xA9, 0x30, 0x8D, 0x01, 0xD7, // list address bits 8-15
        0xA9, 0xF5, 0x8D, 0x05, 0xD7, // the job at $30F5
        0xA9, 0xF5, 0x8D, 0x05, 0xD7, // only the low byte again
    ];
    for (i, reg) in [0x00u8, 0x01, 0x02, 0x04].into_iter().enumerate() {
        code.extend([0xAD, reg, 0xD7, 0x8D, 0x10 + i as u8, 0x40]); // LDA $D7rr : STA $401i
    }
    code.extend(EXIT);
    assert_eq!(run(&mut m, &code), StopReason::Exit(0));
    assert_eq!(
        m.peek_phys(0x4000, 2),
        [1, 2],
        "the second job's list was $31F5's"
    );
    assert_eq!(
        m.peek_phys(0x4010, 4),
        [0x03, 0x32, 0x00, 0x00],
        "$3203 read back"
    );
}
