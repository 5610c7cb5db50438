//! The unchanged MEGA65 program (cc65 build) in stock xemu, the independent MEGA65 emulator,
//! against the headless MEGA65 (docs/xemu.md): the same SD folder and D81, no SSNAIL
//! core, and the two serial transcripts must be equal.
//!
//! xemu is built from source by tools/build-xemu.sh into the cache (once; about a minute):
//! from $XEMU_SRC when set, else from the xemu tarball in the shared folder beside the
//! repository, else from the pinned commit fetched from xemu's git repository (checked and
//! cached). Without any of them the xemu tests fail with the script's message; everything else
//! it needs (cc65, libsdl2-dev from tools/debian-packages.txt) must be there. xemu runs headless
//! without the closed MEGA65 ROM: our loader (xemu/onboard.s, in xemu's on-boarding slot) loads
//! SSNAIL.PRG from the hypervisor folder and starts it as BASIC 65's SYS would. xemu refuses to
//! run as root, so as root it runs as nobody (setpriv) with its own HOME.

use ssnail_mega65_program as common;
use ssnail_mega65_program::test_images::{
    bert, gpt2, huge_attn, llama, with_one_weight_byte_flipped,
};
use ssnail_mega65_program::{answer, capi_lib, ovl, prg, program_disk, reference, soft_core};
use ssnail_testkit::images::with_description;

use ssnail_core::{Board, Machine as Core, NoHost, Numerics, Ssnail};
use ssnail_disk::D81;
use ssnail_mega65::{KeyScript, Machine, CPU_HZ};
use ssnail_tokenizer::image::image_memory;
use ssnail_tokenizer::ImageTokenizer;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// On the program's last line after listing the models (the keys help): the transcript is
/// compared up to the end of that line.
const LISTED: &str = "R: look again";

fn repo() -> PathBuf {
    common::mega65_dir().parent().unwrap().to_path_buf()
}

/// The cache tools/build-xemu.sh builds into (SSNAIL_CACHE, else cache/ in the repository).
fn cache() -> PathBuf {
    std::env::var_os("SSNAIL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("cache"))
}

/// Runs tools/build-xemu.sh, the one place that knows where xemu's source is ($XEMU_SRC, the
/// shared tarball, else a verified fetch of the pinned commit, cached). Without a source the
/// test fails with the script's one-line message: a comparison that silently did not run
/// would pass without proving anything.
fn build_xemu(cmd: &mut Command) {
    let out = cmd.output().expect("running tools/build-xemu.sh");
    let err = String::from_utf8_lossy(&out.stderr);
    eprint!("{err}");
    assert!(out.status.success(), "tools/build-xemu.sh failed: {err}");
}

/// tools/build-xemu.sh into the cache: the stock xmega65 binary.
fn stock_xemu() -> PathBuf {
    let out = cache().join("xemu/stock");
    build_xemu(Command::new(repo().join("tools/build-xemu.sh")).arg(&out));
    out.join("xmega65")
}

/// tools/build-xemu.sh with no XEMU_SRC, a tarball that is not there, `url` as xemu's git
/// repository and `cache` as the cache.
fn build_xemu_fetching(url: &Path, cache: &Path) -> Command {
    let mut cmd = Command::new(repo().join("tools/build-xemu.sh"));
    cmd.env_remove("XEMU_SRC")
        .env("XEMU_TARBALL", cache.join("no-such-tarball.tar.xz"))
        .env("XEMU_GIT_URL", url)
        .env("SSNAIL_CACHE", cache);
    cmd
}

/// A git repository at `dir` holding the xemu source tools/build-xemu.sh finds here (the shared
/// tarball in CI, else its cached fetch), one commit whose id is not upstream's (other author,
/// date and history) but whose tree is: a stand-in for xemu's public repository, offline.
/// `change` edits the files before they are committed.
fn xemu_mirror(dir: &Path, change: impl FnOnce(&Path)) {
    let out = Command::new(repo().join("tools/build-xemu.sh"))
        .arg("--source-tree")
        .arg(dir)
        .output()
        .expect("running tools/build-xemu.sh --source-tree");
    assert!(
        out.status.success(),
        "tools/build-xemu.sh --source-tree: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    change(dir);
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "core.autocrlf=false",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git is needed");
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    git(&["init", "-q"]);
    // -f: the tree's own .gitignore files must not keep files out of the commit.
    git(&["add", "-A", "-f"]);
    git(&["commit", "-q", "-m", "xemu mirror"]);
}

/// Every file under `dir` (relative name) with its bytes, .git left out.
fn files_of(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.file_name() == Some(".git".as_ref()) {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.insert(p.strip_prefix(root).unwrap().to_path_buf(), bytes);
            }
        }
    }
    let mut out = Default::default();
    walk(dir, dir, &mut out);
    out
}

#[test]
fn without_xemu_src_or_the_tarball_the_pinned_xemu_commit_is_fetched_checked_and_cached() {
    let work = tempfile::tempdir().unwrap();
    let mirror = work.path().join("mirror");
    xemu_mirror(&mirror, |_| {});
    let cache = work.path().join("cache");
    let got = work.path().join("got");
    let out = build_xemu_fetching(&mirror, &cache)
        .arg("--source-tree")
        .arg(&got)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("fetching xemu 40dfef0d"), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "xemu source: git tree e91a651450c6c47ced6f9bc6d5085e6d96330ec0"
    );
    assert!(
        files_of(&got) == files_of(&mirror),
        "the fetched source differs from the mirror's"
    );
    assert!(cache.join("xemu/git-40dfef0d").is_dir());
    // Offline now: the cached fetch is used, nothing is fetched again.
    std::fs::remove_dir_all(&mirror).unwrap();
    let again = work.path().join("again");
    let out = build_xemu_fetching(&mirror, &cache)
        .arg("--source-tree")
        .arg(&again)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("fetching"), "{err}");
    assert!(files_of(&again) == files_of(&got));
}

#[test]
fn a_fetched_xemu_whose_tree_is_not_the_pinned_commits_is_refused_and_not_cached() {
    let work = tempfile::tempdir().unwrap();
    let mirror = work.path().join("mirror");
    xemu_mirror(&mirror, |dir| {
        let f = dir.join("targets/mega65/Makefile");
        let mut text = std::fs::read(&f).unwrap();
        text.extend_from_slice(b"# changed\n");
        std::fs::write(&f, text).unwrap();
    });
    let cache = work.path().join("cache");
    let out = build_xemu_fetching(&mirror, &cache)
        .arg("--source-tree")
        .arg(work.path().join("got"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let last = err.lines().last().unwrap_or("");
    assert!(
        last.contains("not the tree e91a651450c6c47ced6f9bc6d5085e6d96330ec0"),
        "{err}"
    );
    assert!(!cache.join("xemu/git-40dfef0d").exists());
}

#[test]
fn without_any_xemu_source_the_build_names_both_ways_in_one_line() {
    let work = tempfile::tempdir().unwrap();
    let cache = work.path().join("cache");
    let out = build_xemu_fetching(&work.path().join("nowhere"), &cache)
        .arg(work.path().join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let last = err.lines().last().unwrap_or("");
    assert!(
        last.starts_with("build-xemu: no xemu source: set XEMU_SRC=DIR"),
        "{err}"
    );
    assert!(last.contains("no-such-tarball.tar.xz"), "{err}");
    assert!(last.contains("fetching it failed (git fetch"), "{err}");
    assert!(last.contains("nowhere"), "{err}");
}

/// `make xemu-onboard` into `dir`: the loader's bytes.
fn onboard(dir: &Path) -> Vec<u8> {
    let out = Command::new("make")
        .args(["-s", "-C"])
        .arg(repo())
        .arg("xemu-onboard")
        .arg(format!("SSNAIL_BUILD={}", dir.display()))
        .output()
        .expect("running make xemu-onboard");
    assert!(
        out.status.success(),
        "make xemu-onboard: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(dir.join("xemu/onboard.prg")).unwrap()
}

/// Files under `dir` (parents created), readable by everyone (xemu may run as nobody).
fn write_tree(dir: &Path, files: &[(&str, &[u8])]) {
    for (name, data) in files {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, data).unwrap();
    }
}

fn open_to_all(dir: &Path) {
    let status = Command::new("chmod")
        .args(["-R", "a+rwX"])
        .arg(dir)
        .status()
        .unwrap();
    assert!(status.success());
}

fn running_as_root() -> bool {
    let out = Command::new("id")
        .arg("-u")
        .output()
        .expect("running id -u");
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

/// Starts xmega65 headless with `sd` as the hypervisor folder and `d81` in drive 0; its
/// hypervisor serial output goes to `serial`; its UART monitor listens on run/uartmon.sock. `timeout` bounds the run (100 s, or `bound`) even if the test dies.
fn start_xemu(
    xemu: &Path,
    run: &Path,
    sd: &Path,
    d81: &Path,
    serial: &Path,
    extra: &[String],
) -> Child {
    start_xemu_for(xemu, run, sd, d81, serial, extra, 100)
}

fn start_xemu_for(
    xemu: &Path,
    run: &Path,
    sd: &Path,
    d81: &Path,
    serial: &Path,
    extra: &[String],
    bound: u32,
) -> Child {
    // A copy beside the run: the cache may sit where nobody cannot reach (e.g. under /root).
    let xemu_copy = run.join("xmega65");
    std::fs::copy(xemu, &xemu_copy).expect("copying xmega65");
    let home = run.join("home");
    let empty = run.join("sdimg");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&empty).unwrap();
    open_to_all(run);
    let mut cmd = Command::new("timeout");
    cmd.args(["-s", "INT", &bound.to_string()]);
    if running_as_root() {
        cmd.args([
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
        ]);
    }
    cmd.arg("env")
        .arg(format!("HOME={}", home.display()))
        .arg(&xemu_copy)
        .args(["-skipconfigfile", "-headless", "-sleepless", "-testing"])
        .args(["-romfromsd", "-virtsd", "-sdimg"])
        .arg(&empty)
        .arg("-hdosvirt")
        .arg("-hdosdir")
        .arg(sd)
        .arg("-extonboard")
        .arg(run.join("onboard.prg"))
        .arg("-8")
        .arg(d81)
        .arg("-hyperserialfile")
        .arg(serial)
        .arg("-uartmon")
        .arg(run.join("uartmon.sock"))
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::from(
            std::fs::File::create(run.join("xemu.log")).unwrap(),
        ));
    cmd.spawn().expect("starting xmega65")
}

/// Ends xemu: SIGINT to `timeout`, which passes it on (xemu writes each serial byte as it
/// comes, so the file is complete).
fn stop_xemu(mut child: Child) {
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

/// Keys typed into xemu through its UART monitor (`-uartmon`, a Unix socket): the monitor's
/// `s` command writes memory, and a write to $D615 presses the key with that matrix number
/// ($7F releases it; iomap.txt "$D615 virtual key 1", xemu input_devices.c virtkey), which
/// xemu's keyboard scanner turns into a $D610 queue entry as a real key press would.
struct XemuKeys {
    mon: std::os::unix::net::UnixStream,
}

/// Matrix numbers (the C64 8x8 matrix, mega65-core iomap.txt $D615): RETURN 1, CRSR DOWN 7, R 17.
const KEY_RETURN: u8 = 1;
const KEY_DOWN: u8 = 7;
const KEY_R: u8 = 17;

/// The matrix number of an unshifted key (the C64 matrix, rows of eight).
fn matrix_key(ch: char) -> Option<u8> {
    const ROWS: [&str; 8] = [
        "\u{14}\r",
        "3wa4zse",
        "5rd6cftx",
        "7yg8bhuv",
        "9ij0mkon",
        "+pl-.:@,",
        "\u{a3}*;",
        "1\u{2190}\u{0}2 ",
    ];
    if ch == '=' {
        return Some(53);
    }
    if ch == '/' {
        return Some(55);
    }
    ROWS.iter()
        .enumerate()
        .find_map(|(r, row)| row.chars().position(|c| c == ch).map(|c| (r * 8 + c) as u8))
}

impl XemuKeys {
    fn connect(socket: &Path) -> XemuKeys {
        let t0 = Instant::now();
        loop {
            match std::os::unix::net::UnixStream::connect(socket) {
                Ok(mon) => {
                    mon.set_read_timeout(Some(Duration::from_millis(100)))
                        .unwrap();
                    return XemuKeys { mon };
                }
                Err(e) if t0.elapsed() > Duration::from_secs(20) => {
                    panic!("xemu's UART monitor {}: {e}", socket.display())
                }
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    }

    /// Sends one monitor command and returns its answer (up to the "." prompt line).
    fn command(&mut self, c: &str) -> String {
        use std::io::{Read, Write};
        self.mon.write_all(format!("{c}\n").as_bytes()).unwrap();
        let mut answer = Vec::new();
        let t0 = Instant::now();
        while !answer.ends_with(b"\r\n.\r\n") && t0.elapsed() < Duration::from_secs(5) {
            let mut buf = [0u8; 512];
            if let Ok(n) = self.mon.read(&mut buf) {
                answer.extend_from_slice(&buf[..n]);
            }
        }
        String::from_utf8_lossy(&answer).into_owned()
    }

    /// The byte at the head of the $D610 key queue (0 = empty), read through the monitor
    /// (reading $D610 does not take the key off the queue).
    fn queue_head(&mut self) -> Option<u8> {
        let a = self.command("m ffd3610");
        let line = a.lines().find(|l| l.starts_with(":0FFD3610:"))?;
        u8::from_str_radix(line.get(10..12)?, 16).ok()
    }

    /// `len` bytes of the 28-bit address space from `addr`, through the monitor's `M` command
    /// (16 lines of `:AAAAAAAA:` and 16 bytes in hex; xemu uart_monitor.c lines 123-134, 321-330).
    fn peek(&mut self, addr: u32, len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len + 256);
        let mut at = addr;
        while out.len() < len {
            let answer = self.command(&format!("M {at:x}"));
            let lines: Vec<&str> = answer
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with(':') && l.len() == 42)
                .collect();
            assert_eq!(lines.len(), 16, "monitor answer to M {at:x}: {answer}");
            for l in lines {
                for i in 0..16 {
                    out.push(u8::from_str_radix(&l[10 + 2 * i..12 + 2 * i], 16).unwrap());
                }
            }
            at += 256;
        }
        out.truncate(len);
        out
    }

    /// Types `text` (lower-case letters, digits, space, `/ . , - + = : ;`) key by key.
    fn type_text(&mut self, text: &str) {
        for ch in text.chars() {
            let key = matrix_key(ch).unwrap_or_else(|| panic!("no key for {ch:?}"));
            self.tap(key);
        }
    }

    /// Presses and releases one key, then waits for the program to take it off the queue (the queue holds only 5 keys, and a busy
    /// host can leave xemu several taps behind).
    fn tap(&mut self, key: u8) {
        self.command(&format!("s ffd3615 {key:x}"));
        std::thread::sleep(Duration::from_millis(50));
        self.command("s ffd3615 7f");
        let t0 = Instant::now();
        while self.queue_head() != Some(0) && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Waits until the serial file holds `until` `times` times (a whole line), or `limit` passes.
fn wait_serial(serial: &Path, until: &str, times: usize, limit: Duration) -> String {
    let t0 = Instant::now();
    loop {
        let text = String::from_utf8_lossy(&std::fs::read(serial).unwrap_or_default()).into_owned();
        if text.matches(until).count() >= times && text.ends_with('\n') || t0.elapsed() > limit {
            return text;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The headless MEGA65 with the same folder and disk, no SSNAIL core, `keys` typed, run until
/// `until` appeared `times` times (a whole line).
fn headless_transcript(
    prg: &[u8],
    sd: &Path,
    d81: &[u8],
    keys: &str,
    until: &str,
    times: usize,
) -> String {
    let mut m = Machine::new();
    m.mount_d81(d81.to_vec());
    m.set_sd_dir(sd.to_path_buf());
    let (_, entry) = m.load_prg(prg, None).unwrap();
    m.keys.schedule(&KeyScript::parse(keys).unwrap(), 0);
    m.start_at(entry);
    for _ in 0..300 {
        m.run(CPU_HZ / 10);
        let t = String::from_utf8_lossy(&m.serial);
        if t.matches(until).count() >= times && t.ends_with('\n') {
            break;
        }
    }
    String::from_utf8_lossy(&m.serial).into_owned()
}

#[test]
fn stock_xemu_lists_the_sd_folder_and_d81_models_and_answers_keys_as_the_headless_mega65_does() {
    let xemu = stock_xemu();
    let work = tempfile::tempdir().unwrap();
    let prg = prg();
    let loader = onboard(&work.path().join("build"));

    let llama = with_description(&llama(), "A llama in the SSNAIL folder of the card");
    let sd = work.path().join("sd");
    write_tree(
        &sd,
        &[
            ("SSNAIL.PRG", prg),
            ("SSNAIL.OVL", ovl()),
            ("SSNAIL/LLAMA.SSNAIL", &llama),
            ("TINYBERT.SSNAIL", &bert()),
        ],
    );
    let d81 = program_disk(prg, false, &[("gpt2.ssnail", &gpt2())]);
    let run = work.path().join("run");
    write_tree(
        &run,
        &[("small.d81", d81.as_slice()), ("onboard.prg", &loader)],
    );
    open_to_all(work.path());

    let serial = run.join("serial.txt");
    let child = start_xemu(&xemu, &run, &sd, &run.join("small.d81"), &serial, &[]);
    let limit = Duration::from_secs(60);
    // Listed; then the browser: DOWN to the second model, RETURN (no core: cannot load), R
    // (look again: the list once more).
    let listed = wait_serial(&serial, LISTED, 1, limit);
    if listed.contains(LISTED) {
        let mut keys = XemuKeys::connect(&run.join("uartmon.sock"));
        keys.tap(KEY_DOWN);
        keys.tap(KEY_RETURN);
        wait_serial(&serial, "cannot load", 1, limit);
        keys.tap(KEY_R);
        wait_serial(&serial, LISTED, 2, limit);
    }
    stop_xemu(child);
    let x = String::from_utf8_lossy(&std::fs::read(&serial).unwrap_or_default()).into_owned();
    let h = headless_transcript(prg, &sd, &d81, "{WAIT 2}{DOWN}{RETURN}{WAIT 1}r", LISTED, 2);
    let log = std::fs::read_to_string(run.join("xemu.log")).unwrap_or_default();
    assert!(
        x.contains(LISTED),
        "xemu did not list the models; serial:\n{x}\nxemu log (end):\n{}",
        &log[log.len().saturating_sub(3000)..]
    );
    // What the comparison covers: the core probe, both SD folders, the D81, the descriptions.
    for want in [
        "SSNAIL core not found",
        "LLAMA.SSNAIL",
        "SD /SSNAIL",
        "A llama in the SSNAIL folder of the card",
        "TINYBERT.SSNAIL",
        "TinyBert",
        "gpt2.ssnail",
        "TinyGpt",
        "3 models",
    ] {
        assert!(x.contains(want), "xemu transcript lacks {want:?}:\n{x}");
    }
    assert!(!x.contains("not an SSNAIL image"), "{x}");
    assert!(
        x.contains("LLAMA.SSNAIL: no SSNAIL core, cannot load"),
        "{x}"
    );
    assert_eq!(x.matches(LISTED).count(), 2, "{x}");
    assert_eq!(x, h, "xemu (left) vs headless MEGA65 (right)");
}

/// The headless MEGA65 finds a host file only when its name is upper case (Hyppo's findfile);
/// the program then finds it by reading the directory and opens what readdir left in the dirent.
/// The program once closed the directory after openfile, which leaves Hyppo's
/// readfile on the closed directory: the image read as "not an SSNAIL image".
#[test]
fn an_sd_image_found_only_by_the_directory_scan_is_read_after_closedir() {
    let work = tempfile::tempdir().unwrap();
    let sd = work.path().join("sd");
    write_tree(
        &sd,
        &[("SSNAIL/Mixed.ssnail", &gpt2()), ("SSNAIL.OVL", ovl())],
    );
    let d81 = D81::new("EMPTY", *b"65").unwrap().into_bytes();
    let t = headless_transcript(prg(), &sd, &d81, "", LISTED, 1);
    assert!(t.contains("Mixed.ssnail"), "{t}");
    assert!(t.contains("TinyGpt"), "{t}");
    assert!(!t.contains("not an SSNAIL image"), "{t}");
}

// ---- Patched xemu with the SSNAIL core ----

/// xmega65 with the SSNAIL patch and the ssnail-capi library (tools/build-xemu.sh into the
/// cache; rebuilt when the library, the patch or the xemu source change).
fn patched_xemu() -> PathBuf {
    let out = cache().join("xemu/ssnail");
    build_xemu(
        Command::new(repo().join("tools/build-xemu.sh"))
            .arg(&out)
            .arg(repo().join("xemu/ssnail-xemu-40dfef0d.patch"))
            .env("SSNAIL_CAPI_LIB", capi_lib())
            .env("SSNAIL_CAPI_INCLUDE", repo().join("emu/capi/include")),
    );
    out.join("xmega65")
}

/// Waits until `done(serial text)` holds or `limit` passes; the text.
fn wait_for(serial: &Path, limit: Duration, done: impl Fn(&str) -> bool) -> String {
    let t0 = Instant::now();
    loop {
        let text = String::from_utf8_lossy(&std::fs::read(serial).unwrap_or_default()).into_owned();
        if done(&text) || t0.elapsed() > limit {
            return text;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The chat prompt the program prints when it waits for a line.
const PROMPT: &str = "\n> ";

/// Where the session's one image is: `SSNAIL/<name>` in the SD folder, or on the D81.
#[derive(Clone, Copy)]
enum Place {
    Sd,
    D81,
}

/// The D81 of a session: the program, and the image when it is there.
fn session_d81(place: Place, name: &str, img: &[u8]) -> Vec<u8> {
    let name = name.to_lowercase();
    let files: &[(&str, &[u8])] = match place {
        Place::D81 => &[(&name, img)],
        Place::Sd => &[],
    };
    program_disk(prg(), false, files)
}

/// The program in patched xemu with an SSNAIL core of `mib` MiB and one image (SD folder or
/// D81): RETURN loads it, then each line is typed (after the prompt) and answered.
fn xemu_session(
    xemu: &Path,
    place: Place,
    name: &str,
    img: &[u8],
    mib: usize,
    lines: &[&str],
) -> String {
    let work = tempfile::tempdir().unwrap();
    let sd = work.path().join("sd");
    write_tree(&sd, &[("SSNAIL.PRG", prg()), ("SSNAIL.OVL", ovl())]);
    if let Place::Sd = place {
        write_tree(&sd, &[(&format!("SSNAIL/{name}"), img)]);
    }
    let run = work.path().join("run");
    let loader = onboard(&work.path().join("build"));
    let d81 = session_d81(place, name, img);
    write_tree(
        &run,
        &[("empty.d81", d81.as_slice()), ("onboard.prg", &loader)],
    );
    open_to_all(work.path());
    let serial = run.join("serial.txt");
    let extra = ["-ssnailmib".to_string(), mib.to_string()];
    let child = start_xemu(xemu, &run, &sd, &run.join("empty.d81"), &serial, &extra);
    let limit = Duration::from_secs(60);
    let listed = wait_serial(&serial, LISTED, 1, limit);
    if listed.contains(LISTED) {
        type_lines_in_xemu(&run, &serial, lines, limit, limit);
    }
    stop_xemu(child);
    String::from_utf8_lossy(&std::fs::read(&serial).unwrap_or_default()).into_owned()
}

/// The same in the headless MEGA65 (the keys typed at once wait in its queue).
fn headless_session(place: Place, name: &str, img: &[u8], mib: usize, lines: &[&str]) -> String {
    let work = tempfile::tempdir().unwrap();
    let sd = work.path().join("sd");
    std::fs::create_dir_all(&sd).unwrap();
    std::fs::write(sd.join("SSNAIL.OVL"), ovl()).unwrap(); // beside the program, as in xemu
    if let Place::Sd = place {
        write_tree(&sd, &[(&format!("SSNAIL/{name}"), img)]);
    }
    let mut m = Machine::new();
    let mut core = Core::new(mib << 20);
    core.numerics = Numerics::Hardware;
    let board = if mib <= 8 { Board::R3 } else { Board::R4 };
    m.attach_ssnail(Ssnail::with_board(core, board));
    m.mount_d81(session_d81(place, name, img));
    m.set_sd_dir(sd);
    type_lines_headless(&mut m, lines, 120)
}

/// In xemu (the program has listed its models): RETURN loads the first, then each line is typed
/// at the next prompt; waits `last` for the prompt after the last answer. The keys, for peeks.
fn type_lines_in_xemu(
    run: &Path,
    serial: &Path,
    lines: &[&str],
    limit: Duration,
    last: Duration,
) -> XemuKeys {
    let mut keys = XemuKeys::connect(&run.join("uartmon.sock"));
    keys.tap(KEY_RETURN);
    for (i, line) in lines.iter().enumerate() {
        // The prompt after loading, then one more after each answered line.
        wait_for(serial, limit, |t| {
            t.matches(PROMPT).count() > i && t.ends_with(PROMPT)
        });
        keys.type_text(line);
        keys.tap(KEY_RETURN);
    }
    wait_for(serial, last, |t| {
        t.matches(PROMPT).count() > lines.len() && t.ends_with(PROMPT)
    });
    keys
}

/// The same in the headless MEGA65: the program started, RETURN and the lines typed at once
/// (they wait in its key queue), run until the prompt after the last answer or `seconds` of
/// MEGA65 time; the serial transcript.
fn type_lines_headless(m: &mut Machine, lines: &[&str], seconds: u64) -> String {
    let mut keys = String::from("{RETURN}");
    for l in lines {
        keys.push_str(&format!("{l}{{RETURN}}"));
    }
    let (_, entry) = m.load_prg(prg(), None).unwrap();
    m.keys.schedule(&KeyScript::parse(&keys).unwrap(), 0);
    m.start_at(entry);
    for _ in 0..seconds * 10 {
        m.run(CPU_HZ / 10);
        let t = String::from_utf8_lossy(&m.serial);
        if t.matches(PROMPT).count() > lines.len() && t.ends_with(PROMPT) {
            break;
        }
    }
    String::from_utf8_lossy(&m.serial).into_owned()
}

/// The transcript without its timings: a number before `s`, `s,`, `s]`, `tokens/s]` or
/// `tokens/s)]` (after a `(`) becomes `T` (load seconds, prompt and answer seconds, tokens per
/// second), which depend on each emulator's CPU timing, not on the program.
fn untimed(t: &str) -> String {
    t.split('\n')
        .map(|line| {
            let words: Vec<&str> = line.split(' ').collect();
            let mut out: Vec<&str> = Vec::with_capacity(words.len());
            for (i, w) in words.iter().enumerate() {
                let unit = words.get(i + 1).copied().unwrap_or("");
                let timed = matches!(unit, "s" | "s," | "s]" | "tokens/s]" | "tokens/s)]")
                    && w.trim_start_matches(['[', '(']).parse::<f64>().is_ok();
                out.push(if timed { "T" } else { w });
            }
            out.join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Tokens per second the program reported for the first answer.
fn tokens_per_second(t: &str) -> f64 {
    let line = t
        .lines()
        .find(|l| l.ends_with("tokens/s]"))
        .unwrap_or_else(|| panic!("no tokens/s line:\n{t}"));
    let words: Vec<&str> = line.split(' ').collect();
    words[words.len() - 2].parse().unwrap()
}

/// The patched xmega65.
fn patched() -> PathBuf {
    patched_xemu()
}

const LLAMA_PROMPT: &str = "the cat sat on the mat";
/// Greedy answers, as `ssnail run --greedy` (the program may sample by default; a program
/// without the command answers it with a message, the same in both emulators).
const GREEDY: &str = "/temp 0";
/// The program's default seed comes from CIA timers at start-up, which differ between emulators;
/// the transcripts (which show the seed) are compared with a fixed one.
const SEED: &str = "/seed 1";

#[test]
fn llama_in_patched_xemu_on_r3_and_72_mb_boards_prints_what_the_headless_mega65_and_ssnail_run_print(
) {
    let xemu = patched();
    let img = llama();
    let want = reference(&img, LLAMA_PROMPT, 24);
    for (mib, board) in [(8, "R3: HyperRAM"), (72, "R4-R6: SDRAM + HyperRAM")] {
        let lines = [SEED, GREEDY, "/n 24", LLAMA_PROMPT];
        let x = xemu_session(&xemu, Place::Sd, "LLAMA.SSNAIL", &img, mib, &lines);
        let h = headless_session(Place::Sd, "LLAMA.SSNAIL", &img, mib, &lines);
        assert!(x.contains(&format!("{mib} MB ({board})")), "{x}");
        assert!(x.contains("Loaded LLAMA.SSNAIL"), "{x}");
        assert_eq!(answer(&x, LLAMA_PROMPT), want, "xemu, {board}:\n{x}");
        assert_eq!(
            untimed(&x),
            untimed(&h),
            "xemu (left) vs headless MEGA65 (right), {board}"
        );
        let (tx, th) = (tokens_per_second(&x), tokens_per_second(&h));
        eprintln!("llama, {board}: xemu {tx} tokens/s, headless MEGA65 {th} tokens/s");
        // The same time model (jobs advance with the CPU clock at 130 MB/s) in both emulators.
        assert!(
            (tx - th).abs() <= 0.05 * th,
            "{board}: {tx} vs {th} tokens/s"
        );
    }
}

#[test]
fn bert_in_patched_xemu_shows_the_cosines_the_headless_mega65_shows() {
    let xemu = patched();
    let img = bert();
    let lines = ["the cat sat", "the dog ran", "a happy cat", "/stats"];
    let x = xemu_session(&xemu, Place::Sd, "TINYBERT.SSNAIL", &img, 72, &lines);
    let h = headless_session(Place::Sd, "TINYBERT.SSNAIL", &img, 72, &lines);
    assert!(x.contains("[bert encoder, context 32"), "{x}");
    assert!(
        x.contains("  [") && x.contains("-dimensional embedding stored]"),
        "{x}"
    );
    assert!(x.contains("  +"), "no cosine shown:\n{x}");
    assert_eq!(
        untimed(&x),
        untimed(&h),
        "xemu (left) vs headless MEGA65 (right)"
    );
}

#[test]
fn a_flipped_weight_byte_changes_the_answer_in_patched_xemu() {
    let xemu = patched();
    let img = llama();
    let prompt = "the cat";
    let original = reference(&img, prompt, 16);
    // A byte in the middle of the weights whose flip changes the greedy text on the PC.
    let flipped = with_one_weight_byte_flipped(&img, |f| reference(f, prompt, 16) != original);
    let lines = [SEED, GREEDY, "/n 16", prompt];
    let a = xemu_session(&xemu, Place::Sd, "M.SSNAIL", &img, 72, &lines);
    let b = xemu_session(&xemu, Place::Sd, "M.SSNAIL", &flipped, 72, &lines);
    assert_eq!(answer(&a, prompt), original, "{a}");
    assert_eq!(answer(&b, prompt), reference(&flipped, prompt, 16), "{b}");
    assert_ne!(answer(&a, prompt), answer(&b, prompt));
}

#[test]
fn gpt2_from_the_d81_in_patched_xemu_answers_and_takes_commands_as_in_the_headless_mega65() {
    let xemu = patched();
    let img = gpt2();
    let prompt = "the cat";
    let lines = [
        SEED,
        GREEDY,
        "/n 8",
        prompt,
        "/stats",
        "/tokens the cat",
        "/reset",
        prompt,
    ];
    let x = xemu_session(&xemu, Place::D81, "GPT2.SSNAIL", &img, 72, &lines);
    let h = headless_session(Place::D81, "GPT2.SSNAIL", &img, 72, &lines);
    assert!(x.contains("Loaded gpt2.ssnail"), "{x}");
    assert!(x.contains("[context cleared]"), "{x}");
    assert_eq!(answer(&x, prompt), reference(&img, prompt, 8), "{x}");
    assert_eq!(
        untimed(&x),
        untimed(&h),
        "xemu (left) vs headless MEGA65 (right)"
    );
}

// ---- Stock xemu with the software core ----

/// Stock xemu has no SSNAIL core, so the program loads the software core (`ssnail.core`, cc65
/// build) from the D81 and xemu's 45GS02 runs the model on its 8 MB of attic RAM (model 3, R3):
/// the answer must be `ssnail run --hw`'s, the final logits in xemu's attic RAM (read through
/// its monitor) ssnail_core's in hardware numerics bit for bit, and the whole transcript the
/// headless MEGA65's (without the SSNAIL device) with timings replaced. xemu checks the
/// program's MAP window, the DMA into and out of attic RAM and the flat accesses on an
/// independent 45GS02.
#[test]
fn stock_xemu_runs_the_software_core_from_the_d81_and_answers_as_ssnail_run_hw() {
    let xemu = stock_xemu();
    let work = tempfile::tempdir().unwrap();
    let img = llama();
    let prompt = "the cat";
    let lines = [SEED, GREEDY, "/n 2", prompt];
    let d81 = program_disk(
        prg(),
        false,
        &[
            (common::SOFT_CORE_FILE, soft_core()),
            ("tinyllama.ssnail", &img),
        ],
    );

    let sd = work.path().join("sd");
    write_tree(&sd, &[("SSNAIL.PRG", prg()), ("SSNAIL.OVL", ovl())]);
    let run = work.path().join("run");
    let loader = onboard(&work.path().join("build"));
    write_tree(
        &run,
        &[("soft.d81", d81.as_slice()), ("onboard.prg", &loader)],
    );
    open_to_all(work.path());
    let serial = run.join("serial.txt");
    let h = ssnail_format::image::Header::parse(&img).unwrap();
    let logits_len = 4 * h.out_dim as usize;
    let mut logits = Vec::new();
    let child = start_xemu_for(&xemu, &run, &sd, &run.join("soft.d81"), &serial, &[], 900);
    let limit = Duration::from_secs(60);
    let listed = wait_serial(&serial, LISTED, 1, limit);
    if listed.contains(LISTED) {
        // A token takes seconds of MEGA65 time on the software core.
        let mut keys = type_lines_in_xemu(&run, &serial, &lines, limit, Duration::from_secs(800));
        logits = keys.peek(h.output, logits_len);
    }
    stop_xemu(child);
    let x = String::from_utf8_lossy(&std::fs::read(&serial).unwrap_or_default()).into_owned();
    assert!(
        x.contains("The software core runs models up to 8 MB on the 45GS02"),
        "{x}"
    );
    assert_eq!(answer(&x, prompt), reference(&img, prompt, 2), "{x}");
    let mem = image_memory(&img).unwrap();
    let (mut dev, _) = Ssnail::load_bytes(&img, None).unwrap();
    dev.machine.numerics = Numerics::Hardware;
    let toks = ImageTokenizer::new(&mem).unwrap().encode(prompt, true);
    dev.generate(&toks, 2, &mut NoHost).unwrap();
    let at = (h.output - ssnail_format::image::BASE) as usize;
    assert!(
        logits == dev.machine.mem()[at..at + logits_len],
        "the last logits in xemu's attic RAM differ from ssnail_core's"
    );

    let mut m = Machine::new();
    m.mount_d81(d81);
    let h = type_lines_headless(&mut m, &lines, 1200);
    assert_eq!(
        untimed(&x),
        untimed(&h),
        "xemu (left) vs headless MEGA65 (right)"
    );
}

/// The model trained here (model/ssnail-qa.gguf, converted as `make disk` converts it) on the
/// D81 with the software core, in stock xemu (an R3 without the SSNAIL core): greedy, `/reset`
/// between questions, each answer on the screen is the one `make model` recorded under hardware
/// numerics (model/answers/hw.tsv), folded as the program prints it and ended by the EOS.
/// SSNAIL_QA_GGUF names another GGUF (one with a weight changed makes this fail).
#[test]
fn stock_xemu_gives_the_trained_models_recorded_answers_on_the_software_core_from_the_d81() {
    use ssnail_mega65_program::trained_model::{image, recorded_answer};
    const QUESTIONS: [&str; 2] = ["explain the mega65", "tell me about the software core"];
    let xemu = stock_xemu();
    let work = tempfile::tempdir().unwrap();
    let img = image();
    let d81 = program_disk(
        prg(),
        false,
        &[
            (common::SOFT_CORE_FILE, soft_core()),
            ("ssnail-qa.ssnail", &img),
        ],
    );
    let (dev, _) = Ssnail::load_bytes(&img, None).unwrap();
    let want: Vec<String> = QUESTIONS.iter().map(|q| recorded_answer(&dev, q)).collect();

    let sd = work.path().join("sd");
    write_tree(&sd, &[("SSNAIL.PRG", prg()), ("SSNAIL.OVL", ovl())]);
    let run = work.path().join("run");
    let loader = onboard(&work.path().join("build"));
    write_tree(
        &run,
        &[("soft.d81", d81.as_slice()), ("onboard.prg", &loader)],
    );
    open_to_all(work.path());
    let serial = run.join("serial.txt");
    let lines = [GREEDY, QUESTIONS[0], "/reset", QUESTIONS[1]];
    let child = start_xemu_for(&xemu, &run, &sd, &run.join("soft.d81"), &serial, &[], 900);
    let limit = Duration::from_secs(60);
    if wait_serial(&serial, LISTED, 1, limit).contains(LISTED) {
        let answer_time = Duration::from_secs(400);
        type_lines_in_xemu(&run, &serial, &lines, answer_time, answer_time);
    }
    stop_xemu(child);
    let x = String::from_utf8_lossy(&std::fs::read(&serial).unwrap_or_default()).into_owned();
    assert!(x.contains("Loaded ssnail-qa.ssnail"), "{x}");
    for (q, w) in QUESTIONS.iter().zip(&want) {
        assert_eq!(answer(&x, q), w.as_str(), "{q:?}:\n{x}");
        let echo = format!("> {q}\n{w}\n[end of text]");
        assert!(x.contains(&echo), "{q:?}: not ended by the EOS:\n{x}");
        eprintln!("xemu: {q} ->{w}");
    }
    // The speed stock xemu's MEGA65 gives (its own timing, not the headless MEGA65's).
    for l in x.lines().filter(|l| l.contains("tokens/s")) {
        eprintln!("xemu: {l}");
    }
}

/// RUN/STOP (matrix key 63) in stock xemu while the software core is inside one ATTN of 500,000
/// heads (hours of work) ends the job: `[stopped]`, and the prompt is back. The core reads the
/// keyboard inside the instruction; before, RUN/STOP was only read between instructions.
#[test]
fn stock_xemu_stops_a_software_core_job_inside_one_huge_attn_at_run_stop() {
    const KEY_STOP: u8 = 63;
    let xemu = stock_xemu();
    let work = tempfile::tempdir().unwrap();
    let d81 = program_disk(
        prg(),
        false,
        &[
            (common::SOFT_CORE_FILE, soft_core()),
            ("attn.ssnail", &huge_attn()),
        ],
    );
    let sd = work.path().join("sd");
    write_tree(&sd, &[("SSNAIL.PRG", prg()), ("SSNAIL.OVL", ovl())]);
    let run = work.path().join("run");
    let loader = onboard(&work.path().join("build"));
    write_tree(
        &run,
        &[("soft.d81", d81.as_slice()), ("onboard.prg", &loader)],
    );
    open_to_all(work.path());
    let serial = run.join("serial.txt");
    let child = start_xemu_for(&xemu, &run, &sd, &run.join("soft.d81"), &serial, &[], 300);
    let limit = Duration::from_secs(60);
    let listed = wait_serial(&serial, LISTED, 1, limit);
    let mut stopped_in = None;
    if listed.contains(LISTED) {
        let mut keys = type_lines_in_xemu(&run, &serial, &[], limit, limit);
        keys.type_text("the cat");
        keys.tap(KEY_RETURN);
        wait_for(&serial, limit, |t| t.contains("> the cat\n"));
        std::thread::sleep(Duration::from_secs(3));
        let t0 = Instant::now();
        keys.tap(KEY_STOP);
        wait_for(&serial, limit, |t| {
            t.contains("[stopped]") && t.ends_with(PROMPT)
        });
        stopped_in = Some(t0.elapsed());
    }
    stop_xemu(child);
    let x = String::from_utf8_lossy(&std::fs::read(&serial).unwrap_or_default()).into_owned();
    assert!(x.contains("> the cat\n"), "{x}");
    assert!(
        x.contains("[stopped]") && x.ends_with(PROMPT),
        "RUN/STOP did not stop the job: {x}"
    );
    eprintln!("stopped {stopped_in:?} after the key (host time)");
}

// ---- Stock xemu: what the program refuses before it runs anything ----

/// xemu with no SD images and `d81` in drive 0: waits for the list, then presses `keys`, after
/// each waiting for `after` to have appeared once more; the serial transcript and the 80 bytes
/// of the screen's top row ($0800) read at the end through the monitor.
fn stock_xemu_keys(d81: &[u8], keys: &[(u8, &str)]) -> (String, Vec<u8>) {
    let xemu = stock_xemu();
    let work = tempfile::tempdir().unwrap();
    let sd = work.path().join("sd");
    write_tree(&sd, &[("SSNAIL.PRG", prg()), ("SSNAIL.OVL", ovl())]);
    let run = work.path().join("run");
    let loader = onboard(&work.path().join("build"));
    write_tree(&run, &[("soft.d81", d81), ("onboard.prg", &loader)]);
    open_to_all(work.path());
    let serial = run.join("serial.txt");
    let child = start_xemu_for(&xemu, &run, &sd, &run.join("soft.d81"), &serial, &[], 300);
    let limit = Duration::from_secs(120);
    let mut top = Vec::new();
    if wait_serial(&serial, LISTED, 1, limit).contains(LISTED) {
        let mut k = XemuKeys::connect(&run.join("uartmon.sock"));
        for (key, after) in keys {
            let seen = String::from_utf8_lossy(&std::fs::read(&serial).unwrap_or_default())
                .matches(after)
                .count();
            k.tap(*key);
            wait_serial(&serial, after, seen + 1, limit);
        }
        top = k.peek(0x800, 80);
    }
    stop_xemu(child);
    let x = String::from_utf8_lossy(&std::fs::read(&serial).unwrap_or_default()).into_owned();
    (x, top)
}

/// An image whose token buffer (header $14) is $0000800, the screen, is refused with one line by
/// the program on stock xemu's 45GS02 with the software core, as in the headless MEGA65 (where
/// the prompt's tokens used to land on the screen's top row), the screen stays the browser's and
/// the next image loads.
#[test]
fn stock_xemu_refuses_an_image_whose_token_buffer_is_the_screen_as_the_headless_mega65_does() {
    let img = llama();
    let mut screen = img.clone();
    screen[0x14..0x18].copy_from_slice(&0x800u32.to_le_bytes());
    let d81 = program_disk(
        prg(),
        false,
        &[
            (common::SOFT_CORE_FILE, soft_core()),
            ("screen.ssnail", &screen),
            ("tinyllama.ssnail", &img),
        ],
    );
    let refused = "lies outside the image's memory";
    let (x, top) = stock_xemu_keys(
        &d81,
        &[
            (KEY_RETURN, refused),
            (KEY_DOWN, LISTED),
            (KEY_RETURN, PROMPT),
        ],
    );
    let line =
        "screen.ssnail: token buffer (header $14, $20) lies outside the image's memory ($38)";
    assert!(x.contains(line), "{x}");
    assert!(x.contains("Loaded tinyllama.ssnail"), "{x}");
    // After the second image loaded the chat screen's first row is its description.
    assert!(
        top.starts_with(b"[TinyLlama (llama) [General]]"),
        "{top:?}\n{x}"
    );
    let mut m = Machine::new();
    m.mount_d81(d81);
    let (_, entry) = m.load_prg(prg(), None).unwrap();
    m.keys.schedule(
        &KeyScript::parse("{RETURN}{WAIT 1}{DOWN}{RETURN}").unwrap(),
        0,
    );
    m.start_at(entry);
    for _ in 0..600 {
        m.run(CPU_HZ / 10);
        let t = String::from_utf8_lossy(&m.serial);
        if t.contains(PROMPT) && t.ends_with(PROMPT) {
            break;
        }
    }
    let h = String::from_utf8_lossy(&m.serial).into_owned();
    assert_eq!(
        untimed(&x),
        untimed(&h),
        "xemu (left) vs headless MEGA65 (right)"
    );
}

/// A software core file with 4 KB of its code scrambled (right magic, ABI and lengths) is named
/// in one line on stock xemu and the models are still listed, as in the headless MEGA65; it used
/// to load and hang at the first prompt.
#[test]
fn stock_xemu_names_a_damaged_core_file_and_lists_the_models_as_the_headless_mega65_does() {
    let mut scrambled = soft_core().to_vec();
    for (i, b) in scrambled[0x1000..0x2000].iter_mut().enumerate() {
        *b = b.rotate_left(3) ^ i as u8;
    }
    let d81 = program_disk(
        prg(),
        false,
        &[
            (common::SOFT_CORE_FILE, &scrambled),
            ("tinyllama.ssnail", &llama()),
        ],
    );
    let (x, _) = stock_xemu_keys(&d81, &[(KEY_RETURN, "cannot load")]);
    assert!(
        x.contains(
            "ssnail.core on the disk is not this program's software core. Models are listed."
        ),
        "{x}"
    );
    assert!(
        x.lines()
            .any(|l| l.starts_with("tinyllama.ssnail") && l.ends_with("no core")),
        "{x}"
    );
    assert!(
        x.contains("tinyllama.ssnail: no SSNAIL core, cannot load"),
        "{x}"
    );
    let sd = tempfile::tempdir().unwrap();
    let h = headless_transcript(prg(), sd.path(), &d81, "{WAIT 2}{RETURN}", "cannot load", 1);
    assert_eq!(x, h, "xemu (left) vs headless MEGA65 (right)");
}
