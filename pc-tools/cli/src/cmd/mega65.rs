//! `ssnail mega65`: run a MEGA65 program on the headless emulator. By default the machine is a
//! stock board, as MEGA65 owners have it (no SSNAIL FPGA core: the program's software core runs
//! the models); `--fpga` or `--ssnail-mib N` attaches the SSNAIL device.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{anyhow, bail, Context};
use clap::Parser;
use ssnail_core::{Board, Machine as CoreMachine, Numerics, Ssnail};
use ssnail_mega65::prg::first_prg_on_disk;
use ssnail_mega65::{KeyScript, Machine, StopReason, CPU_HZ};

const KEYS_HELP: &str = "Keys typed into the $D610 queue (several arguments are joined). \
Plain characters are typed as given; {RETURN} (or a newline), {STOP}, {UP}, {DOWN}, {LEFT}, \
{RIGHT}, {DEL}, {HOME}, {CLR}, {ESC}, {TAB}, {F1}..{F14}, {$xx} (raw code), {{ (a literal '{'); \
{WAIT s} delays the following keys by s emulated seconds. Example: --keys '{WAIT 0.5}/test{RETURN}'";

/// Run a MEGA65 program (PRG or the first PRG of a D81) headless, as BASIC 65's RUN would start it.
#[derive(Parser, Debug)]
#[command(
    after_help = "The run ends when the program writes $42 to $D6CF (exit status = the value \
written before), when RTS returns to BASIC (status 0), or when the budget is used up. Default \
budget: 60 emulated seconds. Time is real MEGA65 time: 40.5 MHz cycles from the measured timing \
table; programs can time themselves with the CIA timers (1 MHz) or TOD clock."
)]
pub struct Args {
    /// D81 image mounted in drive 0 (F011); without --prg its first PRG is loaded and run.
    #[arg(long, value_name = "DISK")]
    pub d81: Option<PathBuf>,
    /// Host directory playing the SD card for hypervisor file calls (upper-case names match).
    #[arg(long, value_name = "DIR")]
    pub sd: Option<PathBuf>,
    /// PRG file to load at its load address and start.
    #[arg(long, value_name = "FILE")]
    pub prg: Option<PathBuf>,
    /// Start address ($xxxx or decimal) instead of the SYS address of the BASIC stub.
    #[arg(long, value_name = "ADDR", value_parser = parse_addr)]
    pub start: Option<u16>,
    #[arg(long, num_args = 1.., value_name = "TEXT", help = KEYS_HELP)]
    pub keys: Vec<String>,
    /// Run until the program exits, without a budget (on a terminal the screen is shown as it
    /// changes).
    #[arg(long, conflicts_with_all = ["cycles", "seconds"])]
    pub until_exit: bool,
    /// Use the program as in an emulator window: keys typed on the terminal (or piped into
    /// stdin) go to the MEGA65 as they arrive, and the screen is printed whenever it changes.
    /// Return, Backspace (DEL), the cursor keys, Esc and Tab map to their MEGA65 keys, Ctrl-C
    /// is RUN/STOP; Ctrl-] quits. Without --seconds/--cycles it runs until the program exits.
    #[arg(long)]
    pub interactive: bool,
    /// Budget in 40.5 MHz cycles.
    #[arg(long, value_name = "N", conflicts_with = "seconds")]
    pub cycles: Option<u64>,
    /// Budget in emulated seconds.
    // A negative value is a number to check (the range message), not an option.
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    pub seconds: Option<f64>,
    /// Also write the final screen to this file: PNG if it ends in .png (in the MEGA65's pixel
    /// aspect: in 80 columns a pixel is twice as tall as wide), text otherwise.
    #[arg(long, value_name = "FILE")]
    pub screen: Vec<PathBuf>,
    /// SSNAIL memory bandwidth in MB/s (sets how fast jobs run in emulated time).
    #[arg(
        long,
        value_name = "MBPS",
        default_value_t = ssnail_format::registers::DEFAULT_BANDWIDTH_MBPS,
        allow_negative_numbers = true
    )]
    pub bandwidth: f64,
    /// Attach the SSNAIL FPGA core (which no public bitstream provides yet) with the board's
    /// memory: 8 MiB on an R3, 72 MiB on R4-R6. Without it the board is stock and the program's
    /// software core runs the models on the 45GS02.
    #[arg(long)]
    pub fpga: bool,
    /// The FPGA core with this much SSNAIL memory at $8000000 in MiB (0 = no SSNAIL device, the
    /// default). Up to 8: an R3 board (HyperRAM only); more: an R4-R6 board (64 MiB SDRAM +
    /// 8 MiB HyperRAM at $C000000 = 72).
    #[arg(long, value_name = "MIB")]
    pub ssnail_mib: Option<usize>,
    /// The board: r3 (8 MiB HyperRAM), r4, r5 or r6 (64 MiB SDRAM + 8 MiB HyperRAM; the same
    /// attic RAM here). auto: r6, or r3 with an FPGA core of at most 8 MiB. The program's
    /// software core uses the board's attic RAM.
    #[arg(long, value_name = "BOARD", default_value = "auto",
          value_parser = ["auto", "r3", "r4", "r5", "r6"])]
    pub board: String,
    /// SSNAIL numerics: the FPGA's bit-exact hardware rules or the float reference.
    #[arg(long, value_name = "MODE", default_value = "hardware", value_parser = ["hardware", "float"])]
    pub numerics: String,
    /// Don't print the final screen on stdout.
    #[arg(long)]
    pub no_screen: bool,
    /// Print the first N instructions (address, bytes, disassembly, registers, cycles) on stderr.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub trace: u64,
}

fn parse_addr(s: &str) -> Result<u16, String> {
    let r = if let Some(h) = s.strip_prefix('$').or_else(|| s.strip_prefix("0x")) {
        u16::from_str_radix(h, 16)
    } else {
        s.parse::<u16>()
    };
    r.map_err(|_| format!("bad address {s:?}: use $xxxx, 0xXXXX or decimal 0-65535"))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut m = Machine::new();
    if args.bandwidth <= 0.0 || !args.bandwidth.is_finite() {
        bail!("--bandwidth: must be a positive number of MB/s");
    }
    m.ssnail.bandwidth = args.bandwidth * 1e6;
    if args.seconds.is_some_and(|s| !(s > 0.0 && s.is_finite())) {
        bail!("--seconds: must be a positive number");
    }
    let ssnail_mib = match (args.ssnail_mib, args.fpga) {
        (Some(n), _) => n,
        (None, true) if args.board == "r3" => 8,
        (None, true) => 72,
        (None, false) => 0,
    };
    if ssnail_mib > 128 {
        bail!("--ssnail-mib: at most 128 (the 28-bit space above $8000000)");
    }
    let board = match args.board.as_str() {
        "auto" if ssnail_mib > 0 && ssnail_mib <= 8 => Board::R3,
        "auto" => Board::R4,
        "r3" if ssnail_mib > 8 => bail!(
            "--board r3: an R3 board has 8 MiB of HyperRAM, so --ssnail-mib can be at most 8 \
             (got {ssnail_mib})"
        ),
        "r3" => Board::R3,
        _ => Board::R4,
    };
    let board_name = match (args.board.as_str(), board) {
        ("auto", Board::R3) => "R3",
        ("auto", _) => "R6",
        (b, _) => &b.to_ascii_uppercase(),
    };
    // Said once the program is loaded, so that bad input stays a one-line error.
    let machine = if ssnail_mib > 0 {
        format!("[an {board_name} board with the SSNAIL FPGA core, {ssnail_mib} MiB]")
    } else {
        format!(
            "[a stock {board_name} board: no SSNAIL FPGA core, so the program's software core \
             runs the models (--fpga adds the core)]"
        )
    };
    if ssnail_mib > 0 {
        let mut core = CoreMachine::new(ssnail_mib << 20);
        core.numerics = if args.numerics == "float" {
            Numerics::Float
        } else {
            Numerics::Hardware
        };
        m.attach_ssnail(Ssnail::with_board(core, board));
    } else {
        m.set_board(board);
    }
    if let Some(dir) = &args.sd {
        if !dir.is_dir() {
            bail!("{}: not a directory", dir.display());
        }
        m.set_sd_dir(dir.clone());
    }

    let mut disk_prg = None;
    if let Some(path) = &args.d81 {
        let image = std::fs::read(path).with_context(|| format!("{}", path.display()))?;
        if image.len() != ssnail_mega65::f011::D81_SIZE {
            bail!(
                "{}: not a D81 image ({} bytes, expected 819200)",
                path.display(),
                image.len()
            );
        }
        if args.prg.is_none() {
            let (name, data) =
                first_prg_on_disk(image.clone()).map_err(|e| anyhow!("{}: {e}", path.display()))?;
            eprintln!("[loading \"{name}\" from {}]", path.display());
            disk_prg = Some((PathBuf::from(name), data));
        }
        m.mount_d81(image);
    }
    let (prg_name, prg) = match (&args.prg, disk_prg) {
        (Some(p), _) => (
            p.clone(),
            std::fs::read(p).with_context(|| format!("{}", p.display()))?,
        ),
        (None, Some(d)) => d,
        (None, None) => bail!("nothing to run: give --prg FILE or --d81 DISK"),
    };
    let (load, entry) = m
        .load_prg(&prg, args.start)
        .map_err(|e| anyhow!("{}: {e}", prg_name.display()))?;
    eprintln!("{machine}");
    eprintln!(
        "[loaded ${load:04X}-${:04X}, starting at ${entry:04X}]",
        load as usize + prg.len() - 3
    );

    let keys = args.keys.join("");
    let script = KeyScript::parse(&keys).map_err(|e| anyhow!("--keys: {e}"))?;
    m.keys.schedule(&script, 0);
    m.start_at(entry);

    let budget = if args.until_exit
        || (args.interactive && args.cycles.is_none() && args.seconds.is_none())
    {
        u64::MAX
    } else if let Some(c) = args.cycles {
        c
    } else {
        (args.seconds.unwrap_or(60.0) * CPU_HZ as f64) as u64
    };
    let t0 = Instant::now();
    let mut traced = 0;
    while traced < args.trace && m.cycles < budget {
        eprintln!("{}", m.trace_line());
        if let Some(reason) = m.run_one() {
            eprintln!("[trace stopped: {reason:?}]");
            break;
        }
        traced += 1;
    }
    let live = args.interactive || (args.until_exit && std::io::stdout().is_terminal());
    let (reason, quit, slept) = if live {
        live_run(&mut m, budget, args.interactive)
    } else {
        (m.run(budget.saturating_sub(m.cycles)), false, 0.0)
    };
    let host = t0.elapsed().as_secs_f64();

    let text = m.screen_text();
    for path in &args.screen {
        let data = if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("png"))
        {
            m.screen_png_aspect()
        } else {
            text.clone().into_bytes()
        };
        ssnail_output::write(path, &data, &[])?;
    }
    if !args.no_screen && !live {
        print!("{text}");
    }
    if !m.serial.is_empty() {
        println!("--- serial output ---");
        println!("{}", String::from_utf8_lossy(&m.serial).trim_end());
    }
    let stats = m.stats();
    let how = match reason {
        StopReason::Exit(v) => format!("exit {v}"),
        StopReason::Budget if quit => "quit (Ctrl-])".to_string(),
        StopReason::Budget => "budget used up".to_string(),
    };
    eprintln!(
        "[{how}: {} instructions, {} cycles, {:.6} s emulated at 40.5 MHz, {:.3} s host, {:.1} host MIPS, {:.1} M emulated cycles per host second]",
        stats.instructions,
        stats.cycles,
        m.seconds(),
        host,
        stats.instructions as f64 / host / 1e6,
        stats.cycles as f64 / host / 1e6,
    );
    if live {
        eprintln!("[live view: {slept:.3} s host slept while the program waited for a key]");
    }
    if m.ssnail.jobs > 0 {
        let d = m.ssnail.device.as_ref().expect("jobs imply a device");
        eprintln!(
            "[SSNAIL: {} jobs, {} instructions, {:.1} MB moved at {} MB/s]",
            m.ssnail.jobs,
            d.machine.instructions,
            d.machine.traffic.total() as f64 / 1e6,
            args.bandwidth
        );
    }
    if let StopReason::Exit(v) = reason {
        if v != 0 {
            std::io::stdout().flush().ok();
            std::process::exit(v as i32);
        }
    }
    Ok(())
}

/// One thing typed on the terminal, in MEGA65 terms.
#[derive(Debug, PartialEq, Eq)]
enum Typed {
    /// An ASCII code for the $D610 queue (as `--keys` types them).
    Key(u8),
    /// Ctrl-]: leave.
    Quit,
}

/// Terminal bytes to MEGA65 keys: Return, Backspace/DEL → INST/DEL, the ANSI cursor keys,
/// Esc, Tab, Ctrl-C → RUN/STOP; printable ASCII as typed; anything else is dropped. Escape
/// sequences may arrive split across reads.
#[derive(Default)]
struct KeyDecoder {
    esc: Vec<u8>,
    /// A key decoded along with the previous one (Esc followed by a plain key).
    pending: Option<Typed>,
}

impl KeyDecoder {
    fn push(&mut self, b: u8) -> Option<Typed> {
        if !self.esc.is_empty() {
            self.esc.push(b);
            let code = match self.esc.as_slice() {
                [0x1B, b'['] | [0x1B, b'O'] => return None,
                [0x1B, b'[' | b'O', b'A'] => Some(0x91),
                [0x1B, b'[' | b'O', b'B'] => Some(0x11),
                [0x1B, b'[' | b'O', b'C'] => Some(0x1D),
                [0x1B, b'[' | b'O', b'D'] => Some(0x9D),
                [0x1B, b'[' | b'O', b'H'] => Some(0x13),
                // Esc, then something that is no cursor key: the Esc key, then that byte.
                [0x1B, c] if *c != b'[' && *c != b'O' => {
                    let c = *c;
                    self.esc.clear();
                    self.pending = self.push(c);
                    return Some(Typed::Key(0x1B));
                }
                [0x1B, b'[', c, ..] if !(0x40..=0x7E).contains(c) && self.esc.len() < 8 => {
                    return None
                }
                _ => None,
            };
            self.esc.clear();
            return code.map(Typed::Key);
        }
        match b {
            0x1B => {
                self.esc.push(b);
                None
            }
            0x1D => Some(Typed::Quit),
            b'\r' | b'\n' => Some(Typed::Key(0x0D)),
            0x7F | 0x08 => Some(Typed::Key(0x14)),
            0x03 => Some(Typed::Key(0x03)),
            b'\t' => Some(Typed::Key(0x09)),
            b' '..=b'~' => Some(Typed::Key(b)),
            _ => None,
        }
    }
}

/// The terminal with line mode, echo and signals off (keys arrive one by one, Ctrl-C as a
/// byte); put back as it was when dropped. termios by hand: no crate here does "raw input,
/// normal output" on a tty we do not otherwise own.
struct RawTerminal(libc::termios);

impl RawTerminal {
    fn new() -> Option<RawTerminal> {
        // SAFETY: termios is plain data, filled by tcgetattr.
        unsafe {
            if libc::isatty(0) != 1 {
                return None;
            }
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return None;
            }
            let saved = t;
            t.c_lflag &= !(libc::ICANON | libc::ECHO | libc::ISIG);
            t.c_cc[libc::VMIN] = 1;
            t.c_cc[libc::VTIME] = 0;
            libc::tcsetattr(0, libc::TCSANOW, &t);
            Some(RawTerminal(saved))
        }
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        // SAFETY: the settings tcgetattr gave.
        unsafe {
            libc::tcsetattr(0, libc::TCSANOW, &self.0);
        }
    }
}

/// Reads of an empty $D610 queue in one 1/50 s slice above which the program is taken to be
/// waiting for a key: the MEGA65 program's kbd_wait loop (LDA $D610, a few instructions) reads
/// it tens of thousands of times a slice, while an answer being computed checks it once a
/// token (kbd_stop_pressed).
const WAITING_POLLS: u64 = 1000;

/// A slice the live view may sleep after: the screen did not change, nothing was typed, and
/// the program spent it polling an empty key queue. A program computing (however long the
/// screen stays the same) runs at full speed.
fn waiting_for_a_key(screen_changed: bool, typed: bool, empty_polls: u64) -> bool {
    !screen_changed && !typed && empty_polls >= WAITING_POLLS
}

/// The screen for a terminal of `rows` rows: trailing blank rows left out, then (if it is
/// still taller) the top rows, so that the last row is never followed by a line feed that
/// would scroll the first off; reversed cells in reverse video (SGR 7).
fn render(cells: &[Vec<(char, bool)>], rows: usize) -> String {
    let blank = |row: &Vec<(char, bool)>| row.iter().all(|&(c, r)| c == ' ' && !r);
    let mut end = cells.len();
    while end > 0 && blank(&cells[end - 1]) {
        end -= 1;
    }
    let start = end.saturating_sub(rows.max(1));
    let mut out = String::from("\x1b[H\x1b[2J");
    for (i, row) in cells[start..end].iter().enumerate() {
        if i > 0 {
            // The terminal's output processing (ONLCR, left on) returns the carriage.
            out.push('\n');
        }
        // Trailing plain spaces left out; reversed ones (a highlight bar) kept.
        let len = row
            .iter()
            .rposition(|&(c, r)| c != ' ' || r)
            .map_or(0, |p| p + 1);
        let mut reversed = false;
        for &(c, r) in &row[..len] {
            if r != reversed {
                out.push_str(if r { "\x1b[7m" } else { "\x1b[0m" });
                reversed = r;
            }
            out.push(c);
        }
        if reversed {
            out.push_str("\x1b[0m");
        }
    }
    out
}

/// The rows of the terminal on stdout (25 when it does not say).
fn terminal_rows() -> usize {
    // SAFETY: the TIOCGWINSZ ioctl fills a local winsize.
    unsafe {
        let mut ws: libc::winsize = std::mem::zeroed();
        if libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) == 0 && ws.ws_row > 0 {
            ws.ws_row as usize
        } else {
            25
        }
    }
}

/// Run in slices of 1/50 emulated second, feeding typed keys (with `keys`) and printing the
/// screen whenever it changes: redrawn in place on a terminal (fitted to its rows, reversed
/// cells in reverse video), appended with its time otherwise. A slice spent waiting for a key
/// ([`waiting_for_a_key`]) sleeps a little, so waiting at a prompt does not spin a core;
/// computing never sleeps. Returns why it stopped, whether Ctrl-] ended it, and the host
/// seconds slept.
fn live_run(m: &mut Machine, budget: u64, keys: bool) -> (StopReason, bool, f64) {
    let (tx, rx) = std::sync::mpsc::channel::<u8>();
    let raw = if keys { RawTerminal::new() } else { None };
    if keys {
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut b = [0u8; 1];
            while let Ok(1) = stdin.read(&mut b) {
                if tx.send(b[0]).is_err() {
                    break;
                }
            }
        });
    }
    let tty = std::io::stdout().is_terminal();
    if tty && keys {
        eprintln!("[typing goes to the MEGA65; Ctrl-C is RUN/STOP, Ctrl-] quits]");
    }
    let mut dec = KeyDecoder::default();
    let mut last = String::new();
    let mut last_cells = Vec::new();
    let slice = CPU_HZ / 50;
    let mut slept = std::time::Duration::ZERO;
    let reason = loop {
        let mut typed = false;
        let mut quit = false;
        while let Ok(b) = rx.try_recv() {
            let first = dec.push(b);
            for t in [first, dec.pending.take()].into_iter().flatten() {
                match t {
                    Typed::Key(code) => {
                        let now = m.cycles;
                        m.keys.schedule(
                            &KeyScript {
                                events: vec![(0, code)],
                            },
                            now,
                        );
                        typed = true;
                    }
                    Typed::Quit => quit = true,
                }
            }
        }
        if quit {
            break (StopReason::Budget, true);
        }
        let left = budget.saturating_sub(m.cycles);
        if left == 0 {
            break (StopReason::Budget, false);
        }
        let polls = m.keys.empty_polls();
        let r = m.run(slice.min(left));
        let polls = m.keys.empty_polls() - polls;
        let changed = if tty {
            let cells = m.screen_cells();
            let changed = cells != last_cells;
            if changed {
                // Home and clear, then the screen as far as the terminal's rows go.
                print!("{}", render(&cells, terminal_rows()));
                last_cells = cells;
            }
            changed
        } else {
            let text = m.screen_text();
            let changed = text != last;
            if changed {
                print!("--- screen at {:.2} s ---\n{text}", m.seconds());
                last = text;
            }
            changed
        };
        if changed {
            let _ = std::io::stdout().flush();
        }
        if let StopReason::Exit(_) = r {
            break (r, false);
        }
        if waiting_for_a_key(changed, typed, polls) {
            let nap = std::time::Duration::from_millis(5);
            std::thread::sleep(nap);
            slept += nap;
        }
    };
    drop(raw);
    if tty {
        println!();
    }
    (reason.0, reason.1, slept.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_screen_fits_a_24_row_terminal_without_a_final_line_feed() {
        let row = |t: &str| t.chars().map(|c| (c, false)).collect::<Vec<_>>();
        // 25 rows, all used: the top one goes; no line feed after the last.
        let full: Vec<_> = (0..25).map(|i| row(&format!("row {i}"))).collect();
        let out = render(&full, 24);
        assert!(
            !out.contains("row 0\n") && out.contains("row 1\n"),
            "{out:?}"
        );
        assert!(out.ends_with("row 24"), "{out:?}");
        assert_eq!(out.matches('\n').count(), 23);
        // Blank rows at the bottom go first: the top line stays.
        let mut short: Vec<_> = (0..20).map(|i| row(&format!("row {i}"))).collect();
        short.extend((0..5).map(|_| row("    ")));
        let out = render(&short, 24);
        assert!(out.starts_with("\x1b[H\x1b[2Jrow 0\n") && out.ends_with("row 19"));
    }

    #[test]
    fn reversed_cells_are_drawn_in_reverse_video() {
        let mut r: Vec<(char, bool)> = "  llama  ".chars().map(|c| (c, false)).collect();
        for cell in &mut r[1..8] {
            cell.1 = true;
        }
        let out = render(&[r], 24);
        assert_eq!(out, "\x1b[H\x1b[2J \x1b[7m llama \x1b[0m");
    }

    #[test]
    fn only_a_slice_spent_polling_an_empty_key_queue_sleeps() {
        assert!(waiting_for_a_key(false, false, 20_000));
        // Computing (the screen the same, a poll a token), a new screen, a key typed: no sleep.
        assert!(!waiting_for_a_key(false, false, 3));
        assert!(!waiting_for_a_key(true, false, 20_000));
        assert!(!waiting_for_a_key(false, true, 20_000));
    }

    #[test]
    fn terminal_keys_become_mega65_keys() {
        let mut d = KeyDecoder::default();
        let mut keys = |bytes: &[u8]| -> Vec<Typed> {
            let mut v = Vec::new();
            for &b in bytes {
                v.extend(d.push(b));
                v.extend(d.pending.take());
            }
            v
        };
        assert_eq!(
            keys(b"hi\r\x7f\x03\t"),
            [b'h', b'i', 0x0D, 0x14, 0x03, 0x09].map(Typed::Key)
        );
        // Cursor keys (also split across reads), Home, and a lone Esc.
        assert_eq!(
            keys(b"\x1b[A\x1b[B\x1b"),
            [Typed::Key(0x91), Typed::Key(0x11)]
        );
        assert_eq!(keys(b"[C\x1bOD\x1b[H"), [0x1D, 0x9D, 0x13].map(Typed::Key));
        assert_eq!(keys(b"\x1bx"), [Typed::Key(0x1B), Typed::Key(b'x')]);
        assert_eq!(keys(b"\x1d"), [Typed::Quit]);
        assert_eq!(keys(b"\x01\xc3"), []);
    }
}
