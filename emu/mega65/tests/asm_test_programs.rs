//! MEGA65 test programs in emu/mega65/tests/asm, assembled at test time (emu/build.mk) and run on the
//! headless MEGA65: DMA (held destination into the SSNAIL load port), hypervisor file reading,
//! F011 sectors from a D81 built here, the keyboard queue with timed keys, screen capture and the
//! exit port.

use std::path::Path;
use std::process::Command;

use ssnail_core::{Machine as CoreMachine, Ssnail};
use ssnail_mega65::prg::first_prg_on_disk;
use ssnail_mega65::{KeyScript, Machine, StopReason, CPU_HZ};

/// tests/asm/<name>.s as a PRG, made by `make -f emu/build.mk emu-asm-<name>` (ca65/ld65; the
/// makefile has the flags); fails clearly if make or cc65 is missing.
fn assemble(name: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("make")
        .arg("-s")
        .arg("-f")
        .arg(repo.join("emu/build.mk"))
        .arg(format!("SSNAIL_BUILD={}", dir.path().display()))
        .arg(format!("emu-asm-{name}"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run make ({e})"));
    assert!(
        out.status.success(),
        "make emu-asm-{name} failed (needs cc65: apt-get install cc65, see tools/debian-packages.txt):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(dir.path().join(format!("emu/asm/{name}.prg"))).unwrap()
}

fn start(m: &mut Machine, prg: &[u8]) {
    let (load, entry) = m.load_prg(prg, None).unwrap();
    assert_eq!(
        (load, entry),
        (0x2001, 0x2011),
        "BASIC stub 10 BANK0:SYS8209"
    );
    m.start_at(entry);
}

fn chip(m: &mut Machine, addr: u32, len: usize) -> Vec<u8> {
    m.peek_phys(addr, len)
}

fn pattern() -> Vec<u8> {
    (0..512u32).map(|i| (3 + 7 * i) as u8).collect()
}

#[test]
fn exit_port_and_serial_output() {
    let mut m = Machine::new();
    start(&mut m, &assemble("exit"));
    assert_eq!(m.run(CPU_HZ), StopReason::Exit(7));
    assert_eq!(m.serial, b"HI");
    // Cycle count from the 40.5 MHz table: the program is straight-line code.
    assert!(m.cycles > 100 && m.cycles < 1000, "{}", m.cycles);
}

#[test]
fn dma_lists_and_held_destination_into_the_load_port() {
    let mut m = Machine::new();
    m.attach_ssnail(Ssnail::new(CoreMachine::new(1 << 20)));
    start(&mut m, &assemble("dma"));
    assert_eq!(m.run(CPU_HZ), StopReason::Exit(0));
    let pat = pattern();
    assert_eq!(chip(&mut m, 0x6000, 512), pat, "pattern");
    assert_eq!(chip(&mut m, 0x4000, 512), pat, "F018A enhanced copy");
    assert_eq!(chip(&mut m, 0x5000, 256), vec![0xAA; 256], "F018B fill");
    assert_eq!(chip(&mut m, 0x5100, 16), pat[..16], "chained F018B copy");
    assert_eq!(chip(&mut m, 0x5110, 1), [0], "copy stops at its count");
    assert_eq!(chip(&mut m, 0x5200, 16), vec![0x55; 16], "inline job");
    assert_eq!(chip(&mut m, 0x5300, 8), pat[..8], "plain $D700 job");
    // Every byte of the three held-destination copies reached the port in order.
    let dev = m.ssnail.device.as_ref().unwrap();
    let mem = &dev.machine.mem()[0x1000..0x1000 + 3 * 512];
    for k in 0..3 {
        assert_eq!(
            &mem[k * 512..(k + 1) * 512],
            &pat[..],
            "copy {k} into $FFD7518"
        );
    }
    assert_eq!(dev.machine.mem()[0x1600], 0, "nothing past the 1536 bytes");
    assert_eq!(dev.machine.mem()[0x0FFF], 0, "nothing before the pointer");
    // The CPU's view of SSNAIL memory through flat addressing agrees.
    assert_eq!(m.peek_phys(0x800_1000, 4), pat[..4]);
}

#[test]
fn hypervisor_reads_a_multi_sector_file() {
    let sd = tempfile::tempdir().unwrap();
    std::fs::create_dir(sd.path().join("SUB")).unwrap();
    let data: Vec<u8> = (0..1300u32).map(|i| (i * 31 + i / 256) as u8).collect();
    std::fs::write(sd.path().join("SUB/DATA.BIN"), &data).unwrap();
    std::fs::write(sd.path().join("SUB/lower.bin"), b"never found").unwrap();
    std::fs::write(sd.path().join("DATA.BIN"), b"wrong directory").unwrap();
    let mut m = Machine::new();
    m.set_sd_dir(sd.path().to_path_buf());
    start(&mut m, &assemble("hyppo"));
    assert_eq!(m.run(CPU_HZ), StopReason::Exit(0));
    let counts = chip(&mut m, 0x3F00, 3);
    assert_eq!(
        u16::from_le_bytes([counts[0], counts[1]]),
        1300,
        "bytes read"
    );
    assert_eq!(counts[2], 3, "512 + 512 + 276, then a zero count");
    assert_eq!(chip(&mut m, 0x4000, 1300), data);
}

#[test]
fn f011_reads_sectors_of_the_d81_the_program_was_started_from() {
    let prg = assemble("f011");
    let mut disk = ssnail_disk::D81::new("TEST DISK", *b"T1").unwrap();
    disk.add_file("F011TEST", ssnail_disk::FileType::Prg, &prg)
        .unwrap();
    let mut image = disk.into_bytes();
    // Mark logical sectors of tracks 1, 6 and 80 (the file lives on track 39) with (track, sector).
    for t in [1u8, 6, 80] {
        for s in 0..40u8 {
            let off = ((t as usize - 1) * 40 + s as usize) * 256;
            for i in 0..256 {
                image[off + i] = match i {
                    0 => t,
                    1 => s,
                    _ => (i as u8) ^ t ^ s,
                };
            }
        }
    }
    let (name, loaded) = first_prg_on_disk(image.clone()).unwrap();
    assert_eq!((name.as_str(), &loaded), ("F011TEST", &prg));
    let mut m = Machine::new();
    m.mount_d81(image);
    start(&mut m, &loaded);
    assert_eq!(m.run(CPU_HZ), StopReason::Exit(0));
    // A 512-byte F011 sector holds two 1581 logical sectors: side 0 = 0–19, side 1 = 20–39.
    let expect = |t: u8, s: u8| -> Vec<u8> {
        (0..256usize)
            .map(|i| match i {
                0 => t,
                1 => s,
                _ => (i as u8) ^ t ^ s,
            })
            .collect()
    };
    let got = chip(&mut m, 0x4000, 3 * 512);
    assert_eq!(got[0..256], expect(1, 0)[..], "track 0 sector 1 side 0");
    assert_eq!(got[256..512], expect(1, 1)[..]);
    assert_eq!(got[512..768], expect(6, 24)[..], "track 5 sector 3 side 1");
    assert_eq!(got[768..1024], expect(6, 25)[..]);
    assert_eq!(
        got[1024..1280],
        expect(80, 38)[..],
        "track 79 sector 10 side 1"
    );
    assert_eq!(got[1280..1536], expect(80, 39)[..]);
    assert_eq!(
        chip(&mut m, 0x3F00, 1)[0] & 0x10,
        0x10,
        "sector 11: record not found"
    );
}

#[test]
fn keyboard_queue_with_timed_keys() {
    let mut m = Machine::new();
    let script = KeyScript::parse("ab{WAIT 1.5}Cd{DOWN}{RETURN}").unwrap();
    m.keys.schedule(&script, 0);
    start(&mut m, &assemble("keys"));
    assert_eq!(m.run(5 * CPU_HZ), StopReason::Exit(0));
    assert_eq!(chip(&mut m, 0x3F00, 1)[0], 6);
    assert_eq!(
        chip(&mut m, 0x4000, 6),
        [b'a', b'b', b'C', b'd', 0x11, 0x0D]
    );
    // CIA 1 TOD (BCD seconds, tenths) when each key was read: 'C' waited 1.5 emulated seconds.
    let secs = chip(&mut m, 0x4100, 6);
    let tenths = chip(&mut m, 0x4200, 6);
    assert_eq!((secs[1], tenths[1]), (0, 0));
    assert_eq!(
        (secs[2], tenths[2]),
        (0x01, 5),
        "TOD 1.5 s when 'C' arrived"
    );
    assert_eq!(m.serial, b"abCd");
    assert_eq!(m.screen_text(), "abCd\n");
    assert!(m.seconds() >= 1.5 && m.seconds() < 1.6, "{}", m.seconds());
}

#[test]
fn screen_capture_80x25_and_80x50() {
    let prg = assemble("screen");
    let mut m = Machine::new();
    m.keys.schedule(&KeyScript::parse("x").unwrap(), 0);
    start(&mut m, &prg);
    assert_eq!(m.run(CPU_HZ), StopReason::Exit(3));
    let text = m.screen_text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 25);
    assert_eq!(lines[0], "Hello, MEGA65! 80x25 at $0800");
    assert_eq!(lines[24], format!("{}END", " ".repeat(70)));
    let png_bytes = m.screen_png();
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (80 * 8 + 32, 25 * 8 + 32));
    // 'H' has its left stroke in glyph column 1: green (colour 5) on blue (6); a space is blue.
    let px = |x: u32, y: u32| {
        let i = ((y * info.width + x) * 3) as usize;
        [buf[i], buf[i + 1], buf[i + 2]]
    };
    assert_eq!(px(16 + 1, 16 + 3), [0x55, 0xCE, 0x58]);
    assert_eq!(px(16, 16 + 3), [0x1D, 0x0E, 0x97]);
    assert_eq!(px(0, 0), [0x1D, 0x0E, 0x97], "border colour 6");

    let mut m = Machine::new();
    m.keys.schedule(&KeyScript::parse("5").unwrap(), 0);
    start(&mut m, &prg);
    assert_eq!(m.run(CPU_HZ), StopReason::Exit(3));
    let text = m.screen_text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 50, "{text}");
    assert_eq!(lines[0], "TOP");
    assert_eq!(lines[49], "Row 49!");
}

#[test]
fn ssnail_job_from_a_mega65_program_matches_the_direct_core_run() {
    use ssnail_core::{loadport, NoHost};
    use ssnail_format::ggml::GgmlType;
    use ssnail_format::image::Header;

    // A small llama model from the test kit, converted by the converter.
    let dir = tempfile::tempdir().unwrap();
    let gguf_path = dir.path().join("m.gguf");
    let opts = ssnail_testkit::models::ModelOpts::llama().with_wtype(GgmlType::Q8_0);
    ssnail_testkit::models::write(&gguf_path, &ssnail_testkit::models::build(&opts));
    let gguf = ssnail_gguf::Gguf::open(&gguf_path).unwrap();
    let conv = ssnail_convert::Options {
        ctx: Some(64),
        ..Default::default()
    };
    let image = ssnail_convert::convert(&gguf, &conv).unwrap().image;
    let header = Header::parse(&image).unwrap();
    let mem = loadport::default_memory(&header);
    let prompt = [1u32, 17, 42, 99];

    // Direct run on the core emulator.
    let (mut direct, _) = Ssnail::load_bytes(&image, Some(mem)).unwrap();
    let want = direct.generate(&prompt, 8, &mut NoHost).unwrap();
    assert!(!want.tokens.is_empty());
    let traffic = direct.machine.traffic.total();

    // The same image loaded and run by the MEGA65 program.
    let sd = dir.path().join("sd");
    std::fs::create_dir(&sd).unwrap();
    std::fs::write(sd.join("MODEL.BIN"), &image).unwrap();
    let prompt_bytes: Vec<u8> = prompt.iter().flat_map(|t| t.to_le_bytes()).collect();
    std::fs::write(sd.join("PROMPT.BIN"), &prompt_bytes).unwrap();
    let mut m = Machine::new();
    m.set_sd_dir(sd);
    m.attach_ssnail(Ssnail::new(CoreMachine::new(mem)));
    start(&mut m, &assemble("ssnail"));
    assert_eq!(m.run(120 * CPU_HZ), StopReason::Exit(0));
    let res = chip(&mut m, 0x3F00, 4);
    assert_eq!(res[0] as usize, prompt.len(), "prompt length");
    assert_eq!(res[1] as usize, want.tokens.len(), "generated");
    assert_eq!(res[2] as u32, want.stop_reason, "stop reason");
    assert_eq!(res[3], 0, "SSNAIL error code");
    let toks: Vec<u32> = chip(&mut m, 0x5000, 256)
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(toks[..prompt.len()], prompt);
    assert_eq!(
        toks[prompt.len()..prompt.len() + want.tokens.len()],
        want.tokens[..]
    );
    let dev = m.ssnail.device.as_ref().unwrap();
    assert_eq!(
        dev.machine.traffic.total(),
        traffic,
        "same work as the direct run"
    );

    // Timing: tokens appear one by one; the whole job takes traffic / the default bandwidth
    // (130 MB/s) of emulated time.
    let stamps: Vec<u64> = chip(&mut m, 0x4800, 4 * want.tokens.len())
        .chunks(4)
        .map(|c| {
            let a = u16::from_le_bytes([c[0], c[1]]) as u64;
            let b = u16::from_le_bytes([c[2], c[3]]) as u64;
            (0xFFFF - b) * 65536 + (0xFFFF - a)
        })
        .collect();
    eprintln!("token stamps (µs): {stamps:?}");
    assert!(stamps.windows(2).all(|w| w[0] < w[1]), "{stamps:?}");
    let job_us = traffic as f64 / ssnail_mega65::ssnail::DEFAULT_BANDWIDTH * 1e6;
    let per_token = job_us / (want.tokens.len() as f64 + prompt.len() as f64 - 1.0);
    let gap = (stamps[stamps.len() - 1] - stamps[0]) as f64 / (stamps.len() - 1) as f64;
    assert!(
        (gap / per_token - 1.0).abs() < 0.2,
        "token gap {gap:.0} µs vs {per_token:.0} µs from the bandwidth model"
    );
}

#[test]
fn benchmark_loop_takes_the_cycles_the_timing_table_gives() {
    // One pass of loop.s: 256 × (LDA (zp),Y 7 + STA (zp),Y 6 + JSR 5 + CLC 1 + ADC zp 4 + EOR # 2
    // + STA zp 3 + INC abs 7 + RTS 5 + INY 1 + BNE taken 4) = 256 × 45, minus 2 for the last BNE,
    // plus 4 × (LDA # 2 + STA zp 3) + LDA # 2 + STA zp 3 + LDY # 2 + INW 8 + LDA abs 5 + CLC 1
    // + ADC zp 4 + STA abs 4 + BRA taken 6 = 11,573 cycles.
    let mut m = Machine::new();
    start(&mut m, &assemble("loop"));
    assert_eq!(m.run(1_000_000), StopReason::Budget);
    let passes = |m: &mut Machine| {
        let b = m.peek_phys(0xF6, 2);
        u16::from_le_bytes([b[0], b[1]])
    };
    let p0 = passes(&mut m);
    assert_eq!(m.run(100 * 11_573), StopReason::Budget);
    assert_eq!(passes(&mut m) - p0, 100);
}
