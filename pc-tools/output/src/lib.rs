//! Writing an output file so that nothing is destroyed: the one place every
//! `ssnail` subcommand, `ssnail import` and `ssnail-d81` write their files.
//!
//! * A regular file (or a new path) is written to a temporary file in the
//!   same folder and renamed over the target only when complete, so a
//!   failure or an interrupt never leaves half a file. A symbolic link is
//!   followed: the file it points to is replaced, the link stays.
//! * Anything else is never renamed over: `-` is standard output, a
//!   character device (`/dev/null`) or a FIFO is opened and written
//!   directly; a directory, a block device or a socket is refused.
//! * An output that is the same file as one of the inputs is refused
//!   (`convert x.gguf -o x.gguf` would otherwise replace the model).
//! * Permissions follow one rule: a new file gets the umask's (0666 minus
//!   the umask, as `touch` or a shell redirection would); a replaced file
//!   keeps its own.
//! * Temporary files are removed when SIGINT or SIGTERM arrives during the
//!   write; the process then ends as the signal's default action would.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Why an output could not be written; the message names the file.
#[derive(Debug)]
pub struct OutputError {
    pub path: PathBuf,
    pub msg: String,
}

impl std::fmt::Display for OutputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.msg)
    }
}

impl std::error::Error for OutputError {}

fn err(path: &Path, msg: impl Into<String>) -> OutputError {
    OutputError {
        path: path.to_path_buf(),
        msg: msg.into(),
    }
}

/// Temporary files being written (removed on SIGINT/SIGTERM).
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Install, once, a thread that removes pending temporary files when
/// SIGINT or SIGTERM arrives and then ends the process as the signal would.
/// (signal-hook runs the handler outside signal context, so ordinary file
/// removal is allowed there.)
fn watch_signals() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(sig) = signals.forever().next() {
                remove_pending();
                let _ = signal_hook::low_level::emulate_default_handler(sig);
                std::process::exit(128 + sig);
            }
        });
    });
}

fn remove_pending() {
    let list = match PENDING.lock() {
        Ok(l) => l.clone(),
        Err(p) => p.into_inner().clone(),
    };
    for p in list {
        let _ = std::fs::remove_file(p);
    }
}

fn pending(p: &Path, add: bool) {
    let mut l = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    if add {
        l.push(p.to_path_buf());
    } else {
        l.retain(|x| x != p);
    }
}

/// (device, inode) of an existing file, following links.
#[cfg(unix)]
fn identity(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}
#[cfg(not(unix))]
fn identity(p: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(p).ok()
}

/// What is at an output path.
enum Kind {
    Stdout,
    /// A regular file or nothing: write by rename at this (resolved) path.
    Replace(PathBuf),
    /// A character device or FIFO: open and write.
    Direct,
}

fn kind(path: &Path) -> Result<Kind, OutputError> {
    if path.as_os_str() == "-" {
        return Ok(Kind::Stdout);
    }
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        // Nothing there (or a dangling link): a new file at this path.
        Err(_) => return Ok(Kind::Replace(path.to_path_buf())),
    };
    let ft = meta.file_type();
    if ft.is_file() {
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        return Ok(Kind::Replace(real));
    }
    if ft.is_dir() {
        return Err(err(path, "is a directory; give a file name"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_char_device() || ft.is_fifo() {
            return Ok(Kind::Direct);
        }
        if ft.is_block_device() {
            return Err(err(
                path,
                "is a block device; write to a file and copy it with a tool made for disks",
            ));
        }
    }
    Err(err(path, "is not a regular file, device or FIFO"))
}

/// Refuse an output that is the same file as one of `inputs`.
pub fn check_not_an_input(path: &Path, inputs: &[&Path]) -> Result<(), OutputError> {
    let Some(out) = identity(path) else {
        return Ok(());
    };
    for i in inputs {
        if identity(i).as_ref() == Some(&out) {
            return Err(err(
                path,
                format!(
                    "is also an input ({}); write the output to another file",
                    i.display()
                ),
            ));
        }
    }
    Ok(())
}

/// Write `bytes` to `path` by the rules above; `inputs` are the files the
/// output was made from.
pub fn write(path: &Path, bytes: &[u8], inputs: &[&Path]) -> Result<(), OutputError> {
    write_with(path, inputs, |w| w.write_all(bytes))
}

/// Like [`write`], the content produced by `fill` into a writer.
pub fn write_with(
    path: &Path,
    inputs: &[&Path],
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), OutputError> {
    check_not_an_input(path, inputs)?;
    let io = |e: std::io::Error| err(path, format!("cannot write: {e}"));
    match kind(path)? {
        Kind::Stdout => {
            let mut out = std::io::stdout().lock();
            fill(&mut out).and_then(|_| out.flush()).map_err(io)
        }
        Kind::Direct => {
            let mut f = OpenOptions::new().write(true).open(path).map_err(io)?;
            fill(&mut f).and_then(|_| f.flush()).map_err(io)
        }
        Kind::Replace(real) => replace(path, &real, fill),
    }
}

/// Like [`write`], creating the output's folder first if needed.
pub fn write_creating_dirs(path: &Path, bytes: &[u8], inputs: &[&Path]) -> Result<(), OutputError> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| err(dir, format!("cannot create the folder: {e}")))?;
    }
    write(path, bytes, inputs)
}

fn replace(
    shown: &Path,
    real: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), OutputError> {
    let io = |e: std::io::Error| err(shown, format!("cannot write: {e}"));
    let dir = match real.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    watch_signals();
    let mut b = tempfile::Builder::new();
    b.prefix(".ssnail-");
    // Mode 0666 at creation: the kernel applies the umask, as for any new file.
    #[cfg(unix)]
    b.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let tmp = b.tempfile_in(dir).map_err(io)?;
    pending(tmp.path(), true);
    let tmp_path = tmp.path().to_path_buf();
    let r = (|| {
        let mut tmp = tmp;
        {
            let mut w = std::io::BufWriter::new(tmp.as_file_mut());
            fill(&mut w)?;
            w.flush()?;
        }
        tmp.as_file().sync_all()?;
        // A replaced file keeps its permissions.
        if let Ok(m) = std::fs::metadata(real) {
            tmp.as_file().set_permissions(m.permissions())?;
        }
        tmp.persist(real).map_err(|e| e.error)?;
        Ok::<(), std::io::Error>(())
    })();
    pending(&tmp_path, false);
    r.map_err(io)
}

/// Testing hook: temporary files currently pending.
pub fn pending_count() -> usize {
    PENDING.lock().map(|l| l.len()).unwrap_or(0)
}
