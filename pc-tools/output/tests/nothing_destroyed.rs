//! Outputs never destroy anything: not a device, not an input, not a link,
//! not half a file after a signal; new files get the umask's permissions.

use ssnail_output::{write, write_with};
use std::path::Path;
use std::process::Command;

fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".ssnail-"))
        .collect()
}

#[cfg(unix)]
#[test]
fn writing_to_dev_null_writes_through_and_leaves_it_a_device() {
    use std::os::unix::fs::FileTypeExt;
    write(Path::new("/dev/null"), b"image bytes", &[]).unwrap();
    let ft = std::fs::metadata("/dev/null").unwrap().file_type();
    assert!(ft.is_char_device());
}

#[test]
fn an_output_that_is_one_of_the_inputs_is_refused_and_the_input_kept() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("model.gguf");
    std::fs::write(&input, b"GGUF model").unwrap();
    // The same file under another spelling.
    let other = d.path().join(".").join("model.gguf");
    let e = write(&other, b"image", &[&input]).unwrap_err().to_string();
    assert!(e.contains("is also an input"), "{e}");
    assert_eq!(std::fs::read(&input).unwrap(), b"GGUF model");
    // A link to the input is the input too.
    #[cfg(unix)]
    {
        let link = d.path().join("link.gguf");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        assert!(write(&link, b"image", &[&input]).is_err());
    }
    assert!(temp_files(d.path()).is_empty());
}

#[cfg(unix)]
#[test]
fn a_link_output_replaces_the_file_it_points_to_and_stays_a_link() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("real.ssnail");
    std::fs::write(&target, b"old").unwrap();
    let link = d.path().join("out.ssnail");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    write(&link, b"new", &[]).unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), b"new");
}

#[cfg(unix)]
#[test]
fn a_fifo_is_written_directly_not_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("pipe");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let f2 = fifo.clone();
    let reader = std::thread::spawn(move || std::fs::read(&f2).unwrap());
    write(&fifo, b"through the pipe", &[]).unwrap();
    assert_eq!(reader.join().unwrap(), b"through the pipe");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn a_directory_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let e = write(d.path(), b"x", &[]).unwrap_err().to_string();
    assert!(e.contains("is a directory"), "{e}");
}

#[cfg(unix)]
#[test]
fn new_outputs_get_the_umask_permissions_and_replaced_ones_keep_theirs() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    // What the umask gives a new file (as a shell redirection would).
    let probe = d.path().join("probe");
    std::fs::File::create(&probe).unwrap();
    let umask_mode = std::fs::metadata(&probe).unwrap().permissions().mode() & 0o777;
    let out = d.path().join("new.ssnail");
    write(&out, b"x", &[]).unwrap();
    assert_eq!(
        std::fs::metadata(&out).unwrap().permissions().mode() & 0o777,
        umask_mode
    );
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    write(&out, b"y", &[]).unwrap();
    assert_eq!(
        std::fs::metadata(&out).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn a_failed_write_leaves_the_old_file_and_no_temporary() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out.ssnail");
    std::fs::write(&out, b"old").unwrap();
    let r = write_with(&out, &[], |w| {
        w.write_all(b"half")?;
        Err(std::io::Error::other("the converter failed"))
    });
    assert!(r.is_err());
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
    assert!(temp_files(d.path()).is_empty());
}

/// The child half of the signal test: start a write that never finishes.
#[test]
fn child_writer_that_waits_forever() {
    let Ok(dir) = std::env::var("SSNAIL_OUTPUT_CHILD_DIR") else {
        return;
    };
    let out = Path::new(&dir).join("out.ssnail");
    let _ = write_with(&out, &[], |w| {
        w.write_all(&vec![7u8; 1 << 20])?;
        w.flush()?;
        std::fs::write(Path::new(&dir).join("started"), b"")?;
        std::thread::sleep(std::time::Duration::from_secs(60));
        Ok(())
    });
}

#[cfg(unix)]
#[test]
fn sigint_or_sigterm_during_a_write_removes_the_temporary_file() {
    for sig in ["INT", "TERM"] {
        let d = tempfile::tempdir().unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child_writer_that_waits_forever", "--nocapture"])
            .env("SSNAIL_OUTPUT_CHILD_DIR", d.path())
            .spawn()
            .unwrap();
        let t0 = std::time::Instant::now();
        while !d.path().join("started").exists() {
            assert!(
                t0.elapsed().as_secs() < 30,
                "the child never started writing"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(
            temp_files(d.path()).len(),
            1,
            "a temporary file while writing"
        );
        let pid = child.id().to_string();
        assert!(Command::new("kill")
            .args(["-s", sig, &pid])
            .status()
            .unwrap()
            .success());
        let status = child.wait().unwrap();
        assert!(!status.success(), "SIG{sig}: the child ended by the signal");
        assert!(
            temp_files(d.path()).is_empty(),
            "SIG{sig}: {:?}",
            temp_files(d.path())
        );
        assert!(!d.path().join("out.ssnail").exists());
    }
}
