//! The CPU's attic window at $8000000 and $D7FE (ssnail_mega65::attic, from mega65-core's
//! gs4510.vhdl, iomap.txt, mega65r4.vhdl and sdram_controller.vhdl): which RAM the CPU sees on
//! each board, and the line cache and prefetch serving bytes SSNAIL has since changed.

use ssnail_core::{Board, Machine as Core, Ssnail};
use ssnail_mega65::Machine;

const WINDOW: u32 = 0x800_0000;
const D7FE: u32 = 0xFFD_37FE;

fn board(mib: usize, board: Board) -> Machine {
    let mut m = Machine::new();
    let mut core = Core::new(mib << 20);
    let mem = core.mem_mut();
    mem[0x10] = 0x11; // SDRAM (R4-R6) or HyperRAM (R3) at SSNAIL $8000010
    if mem.len() > 0x400_0010 {
        mem[0x400_0010] = 0x22; // HyperRAM at SSNAIL $C000010 (72 MiB)
    }
    m.attach_ssnail(Ssnail::with_board(core, board));
    m
}

fn ssnail_mem(m: &mut Machine) -> &mut [u8] {
    m.ssnail.device.as_mut().unwrap().machine.mem_mut()
}

#[test]
fn d7fe_resets_to_the_line_cache_on_and_hyperram() {
    let mut m = Machine::new();
    assert_eq!(m.read_phys(D7FE), 0x04);
    m.write_phys(D7FE, 0xFF);
    assert_eq!(m.read_phys(D7FE), 0x7F, "bit 7 (HWRNG not ready) reads 0");
}

#[test]
fn an_r4_board_shows_hyperram_until_selsdram_is_set() {
    let mut m = board(72, Board::R4);
    m.write_phys(D7FE, 0x00); // no caches: only the RAM choice is tested here
    assert_eq!(
        m.read_phys(WINDOW + 0x10),
        0x22,
        "HyperRAM = SSNAIL's $C000000 region"
    );
    m.write_phys(D7FE, 0x10);
    assert_eq!(
        m.read_phys(WINDOW + 0x10),
        0x11,
        "SDRAM = SSNAIL's $8000000"
    );
    assert_eq!(
        m.read_phys(WINDOW + (64 << 20)),
        0xFF,
        "64 MiB of SDRAM, nothing beyond"
    );
    m.write_phys(WINDOW + 0x20, 0x33);
    assert_eq!(ssnail_mem(&mut m)[0x20], 0x33, "CPU writes reach SDRAM too");
    m.write_phys(D7FE, 0x00);
    m.write_phys(WINDOW + 0x20, 0x44);
    assert_eq!(
        ssnail_mem(&mut m)[0x400_0020],
        0x44,
        "and HyperRAM without SELSDRAM"
    );
}

#[test]
fn on_a_64_mib_board_hyperram_is_not_ssnail_memory() {
    let mut m = board(64, Board::R4);
    m.write_phys(D7FE, 0x00);
    assert_eq!(m.read_phys(WINDOW + 0x10), 0x00);
    m.write_phys(WINDOW + 0x10, 0x55);
    assert_eq!(
        m.read_phys(WINDOW + 0x10),
        0x55,
        "HyperRAM holds what the CPU wrote"
    );
    assert_eq!(
        ssnail_mem(&mut m)[0x10],
        0x11,
        "SSNAIL's SDRAM is untouched"
    );
    m.write_phys(D7FE, 0x10);
    assert_eq!(m.read_phys(WINDOW + 0x10), 0x11);
}

#[test]
fn an_r3_board_has_no_sdram_to_select() {
    let mut m = board(8, Board::R3);
    m.write_phys(D7FE, 0x00);
    assert_eq!(m.read_phys(WINDOW + 0x10), 0x11);
    m.write_phys(D7FE, 0x10);
    assert_eq!(m.read_phys(WINDOW + 0x10), 0x11);
}

#[test]
fn the_line_cache_serves_bytes_ssnail_changed_until_it_is_switched_off() {
    let mut m = board(72, Board::R4);
    m.write_phys(D7FE, 0x14); // SDRAM, line cache on (the reset state of bit 2)
    assert_eq!(m.read_phys(WINDOW + 0x10), 0x11);
    ssnail_mem(&mut m)[0x10] = 0x99; // SSNAIL writes (a token, the generated count)
    ssnail_mem(&mut m)[0x17] = 0x98;
    assert_eq!(
        m.read_phys(WINDOW + 0x10),
        0x11,
        "stale: served from the cached line"
    );
    assert_eq!(
        m.read_phys(WINDOW + 0x17),
        0x00,
        "the whole 8-byte line is cached"
    );
    assert_eq!(
        m.read_phys(WINDOW + 0x18),
        0x00,
        "the next line is read from RAM"
    );
    assert_eq!(
        m.read_phys(WINDOW + 0x10),
        0x99,
        "... which replaced the cached line"
    );
    ssnail_mem(&mut m)[0x10] = 0x97;
    m.write_phys(WINDOW + 0x13, 0x01); // a CPU write into the line drops it
    assert_eq!(m.read_phys(WINDOW + 0x10), 0x97);
    ssnail_mem(&mut m)[0x10] = 0x96;
    m.write_phys(D7FE, 0x10); // cache off: every read goes to the RAM
    assert_eq!(m.read_phys(WINDOW + 0x10), 0x96);
    ssnail_mem(&mut m)[0x10] = 0x95;
    assert_eq!(m.read_phys(WINDOW + 0x10), 0x95);
}

#[test]
fn the_prefetch_serves_the_next_byte_as_it_was_when_fetched() {
    let mut m = board(72, Board::R4);
    m.write_phys(D7FE, 0x11); // SDRAM, prefetch on, line cache off
    assert_eq!(m.read_phys(WINDOW + 0x0F), 0x00);
    ssnail_mem(&mut m)[0x10] = 0x77;
    assert_eq!(
        m.read_phys(WINDOW + 0x10),
        0x11,
        "the byte guessed and fetched before"
    );
    m.write_phys(D7FE, 0x10);
    assert_eq!(m.read_phys(WINDOW + 0x10), 0x77);
}

#[test]
fn cache_advance_loads_the_next_line_ahead() {
    let mut m = board(72, Board::R4);
    m.write_phys(D7FE, 0x1C); // SDRAM, line cache + advance
    for a in 0x10..0x18 {
        m.read_phys(WINDOW + a); // ascending to the line's last byte
    }
    ssnail_mem(&mut m)[0x18] = 0x66;
    assert_eq!(
        m.read_phys(WINDOW + 0x18),
        0x00,
        "the next line was loaded at the 7th byte"
    );
}

const M65MODEL: u32 = 0xFFD_3629;

#[test]
fn without_a_device_an_r3_board_has_8_mib_of_hyperram_and_reads_model_3() {
    let mut m = Machine::new();
    assert_eq!(m.read_phys(M65MODEL), 3, "R3 unless told otherwise");
    m.write_phys(D7FE, 0x00);
    m.write_phys(WINDOW + 0x7F_FFFF, 0x5A);
    assert_eq!(m.read_phys(WINDOW + 0x7F_FFFF), 0x5A, "last byte of 8 MiB");
    m.write_phys(WINDOW + (8 << 20), 0x5A);
    assert_eq!(m.read_phys(WINDOW + (8 << 20)), 0xFF, "no RAM past 8 MiB");
    m.write_phys(D7FE, 0x10);
    assert_eq!(
        m.read_phys(WINDOW + 0x7F_FFFF),
        0x5A,
        "R3 has no SDRAM: SELSDRAM changes nothing"
    );
}

#[test]
fn without_a_device_an_r4_board_has_sdram_with_selsdram_and_hyperram_without() {
    let mut m = Machine::new();
    m.set_board(Board::R4);
    assert_eq!(m.read_phys(M65MODEL), 4);
    m.write_phys(D7FE, 0x10);
    m.write_phys(WINDOW + 0x10, 0x11);
    m.write_phys(WINDOW + (64 << 20) - 1, 0x12);
    assert_eq!(
        m.read_phys(WINDOW + (64 << 20) - 1),
        0x12,
        "64 MiB of SDRAM"
    );
    assert_eq!(m.read_phys(WINDOW + (64 << 20)), 0xFF, "nothing beyond");
    m.write_phys(D7FE, 0x00);
    assert_eq!(
        m.read_phys(WINDOW + 0x10),
        0x00,
        "HyperRAM is another RAM: SDRAM's byte is not there"
    );
    m.write_phys(WINDOW + 0x10, 0x22);
    assert_eq!(m.read_phys(WINDOW + (8 << 20)), 0xFF, "8 MiB of HyperRAM");
    m.write_phys(D7FE, 0x10);
    assert_eq!(m.read_phys(WINDOW + 0x10), 0x11, "SDRAM kept its byte");
}

#[test]
fn an_attached_device_brings_its_board_model() {
    assert_eq!(board(72, Board::R4).read_phys(M65MODEL), 4);
    assert_eq!(board(8, Board::R3).read_phys(M65MODEL), 3);
}
