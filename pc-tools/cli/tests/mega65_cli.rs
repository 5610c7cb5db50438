//! `ssnail mega65`: a PRG and a D81 run headless; outputs, exit status, statistics and errors.

mod common;

use common::{ssnail, ssnail_command};
use std::path::Path;
use std::process::{Command, Output};

/// A PRG with the stub `10 BANK0:SYS8209` whose code waits for a key, writes "Ok" to the top
/// left of the screen and the key to the serial monitor, then exits with status 5.
fn program() -> Vec<u8> {
    let mut p = vec![
        0x01, 0x20, 0x0F, 0x20, 0x0A, 0x00, 0xFE, 0x02, b'0', b':', 0x9E,
    ];
    p.extend(b"8209\0\0\0");
    p.extend([
        0xAD, 0x10, 0xD6, 0xF0, 0xFB, // wait: LDA $D610 : BEQ wait
        0x8D, 0x43, 0xD6, 0xB8, // STA $D643 : CLV
        0xA9, 0x4F, 0x8D, 0x00, 0x08, // "O" (screen code $4F in the lower-case set)
        0xA9, 0x0B, 0x8D, 0x01, 0x08, // "k" (lower case: $0B)
        0xA9, 0x05, 0x8D, 0xCF, 0xD6, 0xA9, 0x42, 0x8D, 0xCF, 0xD6, // exit 5
    ]);
    p
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn runs_a_prg_with_keys_and_writes_the_screen() {
    let dir = tempfile::tempdir().unwrap();
    let prg = dir.path().join("ok.prg");
    std::fs::write(&prg, program()).unwrap();
    let png = dir.path().join("screen.png");
    let txt = dir.path().join("screen.txt");
    let o = ssnail(&[
        "mega65",
        "--prg",
        prg.to_str().unwrap(),
        "--keys",
        "{WAIT 0.25}",
        "x",
        "--screen",
        png.to_str().unwrap(),
        "--screen",
        txt.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("Ok\n"), "{out}");
    assert!(out.contains("--- serial output ---\nx"), "{out}");
    let err = stderr(&o);
    assert!(err.contains("[exit 5: "), "{err}");
    assert!(err.contains("host MIPS") && err.contains("M emulated cycles per host second"));
    // The key arrived after 0.25 s of emulated time.
    let secs: f64 = err
        .split(" s emulated")
        .next()
        .unwrap()
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((0.25..0.26).contains(&secs), "{secs}");
    assert_eq!(std::fs::read_to_string(&txt).unwrap(), "Ok\n");
    assert_eq!(&std::fs::read(&png).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
}

#[test]
fn runs_the_first_prg_of_a_d81() {
    let dir = tempfile::tempdir().unwrap();
    let mut disk = ssnail_disk::D81::new("DEMO", *b"D1").unwrap();
    disk.add_file("README", ssnail_disk::FileType::Seq, b"not a program")
        .unwrap();
    disk.add_file("OKPROG", ssnail_disk::FileType::Prg, &program())
        .unwrap();
    let d81 = dir.path().join("demo.d81");
    std::fs::write(&d81, disk.into_bytes()).unwrap();
    let o = ssnail(&[
        "mega65",
        "--d81",
        d81.to_str().unwrap(),
        "--keys",
        "y",
        "--no-screen",
    ]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(stderr(&o).contains("loading \"OKPROG\""), "{}", stderr(&o));
}

#[test]
fn budget_and_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let prg = dir.path().join("ok.prg");
    std::fs::write(&prg, program()).unwrap();
    // No key ever comes: the cycle budget ends the run.
    let o = ssnail(&[
        "mega65",
        "--prg",
        prg.to_str().unwrap(),
        "--cycles",
        "1000000",
        "--no-screen",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("[budget used up: "), "{}", stderr(&o));

    // --trace prints the first instructions with their disassembly.
    let o = ssnail(&[
        "mega65",
        "--prg",
        prg.to_str().unwrap(),
        "--cycles",
        "100",
        "--trace",
        "2",
        "--no-screen",
    ]);
    let err = stderr(&o);
    assert!(err.contains("2011  AD 10 D6        LDA $D610"), "{err}");
    assert!(err.contains("2014  F0 FB           BEQ $2011"), "{err}");

    let missing = dir.path().join("missing.prg");
    let o = ssnail(&["mega65", "--prg", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.starts_with("ssnail: ") && err.contains("missing.prg"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    let bad = dir.path().join("bad.d81");
    std::fs::write(&bad, [0u8; 1000]).unwrap();
    let o = ssnail(&["mega65", "--d81", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("bad.d81: not a D81 image"),
        "{}",
        stderr(&o)
    );

    let o = ssnail(&[
        "mega65",
        "--prg",
        prg.to_str().unwrap(),
        "--keys",
        "{BOGUS}",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("unknown key {BOGUS}"), "{}", stderr(&o));

    // A failed screen write leaves no file behind and reports the path.
    let out = Path::new("/nonexistent-dir/screen.txt");
    let o = ssnail(&[
        "mega65",
        "--prg",
        prg.to_str().unwrap(),
        "--keys",
        "z",
        "--screen",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("/nonexistent-dir/screen.txt"),
        "{}",
        stderr(&o)
    );
}

/// A negative budget or bandwidth gets the range message whether it follows the option as its
/// own argument or after `=` (the parser took `-1` for an option and said "unexpected argument").
#[test]
fn negative_seconds_and_bandwidth_get_the_range_message_in_both_spellings() {
    let dir = tempfile::tempdir().unwrap();
    let prg = dir.path().join("ok.prg");
    std::fs::write(&prg, program()).unwrap();
    let p = prg.to_str().unwrap();
    for (args, want) in [
        (
            vec!["--seconds", "-1"],
            "--seconds: must be a positive number",
        ),
        (vec!["--seconds=-1"], "--seconds: must be a positive number"),
        (
            vec!["--bandwidth", "-5"],
            "--bandwidth: must be a positive number of MB/s",
        ),
        (
            vec!["--bandwidth=-5"],
            "--bandwidth: must be a positive number of MB/s",
        ),
    ] {
        let mut all = vec!["mega65", "--prg", p, "--no-screen"];
        all.extend(&args);
        let o = ssnail(&all);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = stderr(&o);
        assert_eq!(err.trim_end(), format!("ssnail: {want}"), "{args:?}");
    }
}

/// `--interactive`: bytes on stdin are typed into the MEGA65 as they arrive (here a pipe; on a
/// terminal, keys), the screen is printed each time it changes, and the run ends when the
/// program exits; the PNG is in the MEGA65's pixel aspect (80 columns: twice as tall).
#[test]
fn interactive_types_stdin_and_prints_the_screen_as_it_changes() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let prg = dir.path().join("ok.prg");
    std::fs::write(&prg, program()).unwrap();
    let png = dir.path().join("screen.png");
    let mut child = ssnail_command()
        .args([
            "mega65",
            "--prg",
            prg.to_str().unwrap(),
            "--interactive",
            "--screen",
        ])
        .arg(&png)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    stdin.write_all(b"\r").unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    // First the empty screen, then (after the key) "Ok": two screens, each with its time.
    let screens: Vec<&str> = out.split("--- screen at ").skip(1).collect();
    assert!(screens.len() >= 2, "{out}");
    assert!(screens.last().unwrap().contains(" s ---\nOk\n"), "{out}");
    // The key was Return ($0D), echoed by the program to the serial monitor.
    assert!(out.contains("--- serial output ---\n"), "{out}");
    let data = std::fs::read(&png).unwrap();
    let (w, h) = (
        u32::from_be_bytes(data[16..20].try_into().unwrap()),
        u32::from_be_bytes(data[20..24].try_into().unwrap()),
    );
    // 80×25 characters of 8×8 (H640, V200) with a 16-pixel border, rows drawn twice.
    assert_eq!((w, h), (80 * 8 + 32, (25 * 8 + 32) * 2));
}

/// A PRG that exits with the board's model number, $D629 (3 on R3, 4 on R4-R6).
fn model_program() -> Vec<u8> {
    let mut p = vec![
        0x01, 0x20, 0x0F, 0x20, 0x0A, 0x00, 0xFE, 0x02, b'0', b':', 0x9E,
    ];
    p.extend(b"8209\0\0\0");
    p.extend([
        0xAD, 0x29, 0xD6, 0x8D, 0xCF, 0xD6, // LDA $D629 : STA $D6CF
        0xA9, 0x42, 0x8D, 0xCF, 0xD6, // exit with it
    ]);
    p
}

#[test]
fn a_stock_board_is_the_default_and_the_fpga_core_and_the_board_are_options() {
    let dir = tempfile::tempdir().unwrap();
    let prg = dir.path().join("model.prg");
    std::fs::write(&prg, model_program()).unwrap();
    let p = prg.to_str().unwrap();
    // Without a flag: a stock R6 board (what owners have); the FPGA core is a flag.
    for (args, model, machine) in [
        (&[][..], 4, "a stock R6 board: no SSNAIL FPGA core"),
        (
            &["--board", "r3"][..],
            3,
            "a stock R3 board: no SSNAIL FPGA core",
        ),
        (&["--board", "r6"][..], 4, "a stock R6 board"),
        (&["--ssnail-mib", "0"][..], 4, "a stock R6 board"),
        (
            &["--ssnail-mib", "0", "--board", "r4"][..],
            4,
            "a stock R4 board",
        ),
        (
            &["--fpga"][..],
            4,
            "an R6 board with the SSNAIL FPGA core, 72 MiB",
        ),
        (
            &["--fpga", "--board", "r3"][..],
            3,
            "an R3 board with the SSNAIL FPGA core, 8 MiB",
        ),
        (
            &["--ssnail-mib", "8"][..],
            3,
            "an R3 board with the SSNAIL FPGA core, 8 MiB",
        ),
        (
            &["--ssnail-mib", "8", "--board", "r5"][..],
            4,
            "an R5 board with the SSNAIL FPGA core",
        ),
    ] {
        let mut all = vec!["mega65", "--prg", p, "--no-screen"];
        all.extend(args);
        let o = ssnail(&all);
        assert_eq!(o.status.code(), Some(model), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(machine), "{args:?}: {}", stderr(&o));
    }
    let o = ssnail(&["mega65", "--prg", p, "--board", "r3", "--ssnail-mib", "72"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("--board r3") && err.contains("at most 8") && err.trim().lines().count() == 1,
        "{err}"
    );
}

/// LDA #count : STA $FB, then count × 65536 rounds of INX/INY loops (about 3.5 cycles each).
fn busy(count: u8) -> Vec<u8> {
    vec![
        0xA9, count, 0x85, 0xFB, // LDA #count : STA $FB
        0xE8, 0xD0, 0xFD, // loop: INX : BNE loop
        0xC8, 0xD0, 0xFA, // INY : BNE loop
        0xC6, 0xFB, 0xD0, 0xF6, // DEC $FB : BNE loop
    ]
}

/// The BASIC stub `10 BANK0:SYS8209`, then `code`, then exit 5.
fn prg_with(code: &[u8]) -> Vec<u8> {
    let mut p = vec![
        0x01, 0x20, 0x0F, 0x20, 0x0A, 0x00, 0xFE, 0x02, b'0', b':', 0x9E,
    ];
    p.extend(b"8209\0\0\0");
    p.extend(code);
    p.extend([0xA9, 0x05, 0x8D, 0xCF, 0xD6, 0xA9, 0x42, 0x8D, 0xCF, 0xD6]);
    p
}

/// The live view's line: host seconds slept while the program waited for a key.
fn slept(err: &str) -> f64 {
    err.split("[live view: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap_or_else(|| panic!("no live view line: {err}"))
        .parse()
        .unwrap()
}

#[test]
fn interactive_view_sleeps_only_while_the_program_waits_for_a_key() {
    let dir = tempfile::tempdir().unwrap();
    // About 1.4 s of computing with the screen unchanged and no key polled: never a nap.
    let prg = dir.path().join("busy.prg");
    std::fs::write(&prg, prg_with(&busy(0))).unwrap();
    let o = ssnail_command()
        .args(["mega65", "--prg", prg.to_str().unwrap(), "--interactive"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert_eq!(slept(&stderr(&o)), 0.0, "{}", stderr(&o));
    // Waiting at LDA $D610 for a key that comes after 0.3 s: it naps meanwhile.
    let wait = dir.path().join("wait.prg");
    std::fs::write(&wait, program()).unwrap();
    let mut child = ssnail_command()
        .args(["mega65", "--prg", wait.to_str().unwrap(), "--interactive"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::io::Write::write_all(&mut stdin, b"\r").unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(slept(&stderr(&o)) >= 0.05, "{}", stderr(&o));
}

/// On an 80×24 terminal (a pseudo-terminal from util-linux `script`, `stty rows 24`): a screen
/// using its first 24 rows is drawn whole with no line feed after the last row (which would
/// scroll the top line away), and reversed cells show in reverse video.
#[test]
fn interactive_view_fits_an_80x24_terminal_and_shows_reverse_video() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux script(1) not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut code = vec![
        0xA9, 0x4F, 0x8D, 0x00, 0x08, // "O" at row 0
        0xA9, 0x0B, 0x8D, 0x01, 0x08, // "k"
        0xA9, 0x98, 0x8D, 0x50, 0x08, // a reversed "x" at row 1 ($18 + $80)
        0xA9, 0x1A, 0x8D, 0x30, 0x0F, // "z" at row 23 ($0800 + 23 * 80)
    ];
    code.extend(busy(32));
    code.extend([0xA9, 0x4B, 0x8D, 0x01, 0x08]); // "K": the screen changes, drawn again
    code.extend(busy(32));
    let prg = dir.path().join("screen.prg");
    std::fs::write(&prg, prg_with(&code)).unwrap();
    let cmd = format!(
        "stty rows 24 cols 80; '{}' mega65 --prg '{}' --interactive",
        env!("CARGO_BIN_EXE_ssnail"),
        prg.display()
    );
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("TERM", "xterm")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let draws: Vec<&str> = out.split("\x1b[H\x1b[2J").skip(1).collect();
    assert!(draws.len() >= 2, "{out:?}");
    let first = draws[0];
    assert!(first.starts_with("Ok\r\n"), "{first:?}");
    assert!(
        first.contains("\x1b[7mx\x1b[0m"),
        "reverse video: {first:?}"
    );
    // 24 rows: 23 line breaks, the last row ("z") directly followed by the next draw.
    assert_eq!(first.matches('\n').count(), 23, "{first:?}");
    assert!(first.ends_with('z'), "{first:?}");
}
