//! `ssnail mega65`: run a MEGA65 program on the headless emulator with the SSNAIL device attached.

use std::io::Write;
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
    /// Run until the program exits, without a budget.
    #[arg(long, conflicts_with_all = ["cycles", "seconds"])]
    pub until_exit: bool,
    /// Budget in 40.5 MHz cycles.
    #[arg(long, value_name = "N", conflicts_with = "seconds")]
    pub cycles: Option<u64>,
    /// Budget in emulated seconds.
    #[arg(long, value_name = "S")]
    pub seconds: Option<f64>,
    /// Also write the final screen to this file: PNG if it ends in .png, text otherwise.
    #[arg(long, value_name = "FILE")]
    pub screen: Vec<PathBuf>,
    /// SSNAIL memory bandwidth in MB/s (sets how fast jobs run in emulated time).
    #[arg(long, value_name = "MBPS", default_value_t = 130.0)]
    pub bandwidth: f64,
    /// SSNAIL memory at $8000000 in MiB (0 = no SSNAIL device). Up to 8: an R3 board (HyperRAM
    /// only); more: an R4-R6 board (64 MiB SDRAM + 8 MiB HyperRAM at $C000000 = 72).
    #[arg(long, value_name = "MIB", default_value_t = 72)]
    pub ssnail_mib: usize,
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
    if args.ssnail_mib > 128 {
        bail!("--ssnail-mib: at most 128 (the 28-bit space above $8000000)");
    }
    if args.ssnail_mib > 0 {
        let mut core = CoreMachine::new(args.ssnail_mib << 20);
        core.numerics = if args.numerics == "float" {
            Numerics::Float
        } else {
            Numerics::Hardware
        };
        let board = if args.ssnail_mib <= 8 {
            Board::R3
        } else {
            Board::R4
        };
        m.attach_ssnail(Ssnail::with_board(core, board));
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
    eprintln!(
        "[loaded ${load:04X}-${:04X}, starting at ${entry:04X}]",
        load as usize + prg.len() - 3
    );

    let keys = args.keys.join("");
    let script = KeyScript::parse(&keys).map_err(|e| anyhow!("--keys: {e}"))?;
    m.keys.schedule(&script, 0);
    m.start_at(entry);

    let budget = if args.until_exit {
        u64::MAX
    } else if let Some(c) = args.cycles {
        c
    } else {
        let s = args.seconds.unwrap_or(60.0);
        if !(s > 0.0 && s.is_finite()) {
            bail!("--seconds: must be a positive number");
        }
        (s * CPU_HZ as f64) as u64
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
    let reason = m.run(budget.saturating_sub(m.cycles));
    let host = t0.elapsed().as_secs_f64();

    let text = m.screen_text();
    for path in &args.screen {
        let data = if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("png"))
        {
            m.screen_png()
        } else {
            text.clone().into_bytes()
        };
        ssnail_output::write(path, &data, &[])?;
    }
    if !args.no_screen {
        print!("{text}");
    }
    if !m.serial.is_empty() {
        println!("--- serial output ---");
        println!("{}", String::from_utf8_lossy(&m.serial).trim_end());
    }
    let stats = m.stats();
    let how = match reason {
        StopReason::Exit(v) => format!("exit {v}"),
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
