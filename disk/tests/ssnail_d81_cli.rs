//! `ssnail-d81 build` (what `make disk` runs): the program twice (SSNAIL, AUTOBOOT.C65), the
//! images that fit, the rest in SDCARD/SSNAIL/ with a note; bad input is one error line and no
//! output file.

use ssnail_disk::{FileType, D81};
use std::process::Command;

fn tool() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ssnail-d81"))
}

/// An image file of `len` bytes: a header whose payload length says so,
/// then patterned payload bytes.
fn fake_image(len: usize, seed: u8) -> Vec<u8> {
    let h = ssnail_format::image::Header {
        payload_len: (len - ssnail_format::image::HEADER_LEN) as u32,
        ..Default::default()
    };
    let mut v: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(seed)).collect();
    v[..ssnail_format::image::HEADER_LEN].copy_from_slice(&h.to_bytes());
    v
}

#[test]
fn build_puts_what_fits_on_the_disk_and_the_rest_on_the_sd_card() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let prg = [&[0x01u8, 0x20][..], &[0xEA; 5000]].concat();
    std::fs::write(p("ssnail.prg"), &prg).unwrap();
    let small = fake_image(300_000, 3);
    let big = fake_image(900_000, 5);
    let long_name = fake_image(1000, 7);
    std::fs::write(p("small.ssnail"), &small).unwrap();
    std::fs::write(p("big.ssnail"), &big).unwrap();
    std::fs::write(p("a-very-long-model-name.ssnail"), &long_name).unwrap();
    let out = tool()
        .args(["build", "--out"])
        .arg(p("out/ssnail.d81"))
        .arg("--program")
        .arg(p("ssnail.prg"))
        .arg("--sdcard")
        .arg(p("sdcard"))
        .arg(p("small.ssnail"))
        .arg(p("big.ssnail"))
        .arg(p("a-very-long-model-name.ssnail"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d = D81::from_bytes(std::fs::read(p("out/ssnail.d81")).unwrap()).unwrap();
    let names: Vec<(String, FileType)> = d
        .files()
        .unwrap()
        .into_iter()
        .map(|e| (e.name, e.file_type))
        .collect();
    assert_eq!(
        names,
        vec![
            ("SSNAIL".into(), FileType::Prg),
            ("AUTOBOOT.C65".into(), FileType::Prg),
            ("SMALL.SSNAIL".into(), FileType::Seq),
            ("A-VERY-LO.SSNAIL".into(), FileType::Seq),
        ]
    );
    assert_eq!(d.read_file("autoboot.c65").unwrap(), prg);
    assert_eq!(d.read_file("small.ssnail").unwrap(), small);
    assert_eq!(std::fs::read(p("sdcard/SSNAIL/BIG.SSNAIL")).unwrap(), big);
    assert!(std::fs::read_to_string(p("sdcard/README.TXT"))
        .unwrap()
        .contains("BIG.SSNAIL"));
    assert!(text.contains("copied to"), "{text}");
}

#[test]
fn bad_input_is_one_line_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    std::fs::write(p("ssnail.prg"), [0x01, 0x20, 0xEA]).unwrap();
    std::fs::write(p("c64.prg"), [0x01, 0x08, 0xEA]).unwrap();
    std::fs::write(p("junk.ssnail"), b"not an image at all").unwrap();
    for (prg, img, want) in [
        ("c64.prg", None, "not a MEGA65 PRG"),
        ("ssnail.prg", Some("junk.ssnail"), "not an SSNAIL image"),
        ("missing.prg", None, "missing.prg"),
    ] {
        let mut cmd = tool();
        cmd.args(["build", "--out"])
            .arg(p("x.d81"))
            .arg("--program")
            .arg(p(prg));
        cmd.arg("--sdcard").arg(p("sd"));
        if let Some(i) = img {
            cmd.arg(p(i));
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
        assert!(!p("x.d81").exists());
    }
}

/// Build with these files in `dir`; (success, stderr).
fn build(dir: &std::path::Path, out: &str, program: &str, images: &[&str]) -> (bool, String) {
    let o = tool()
        .args(["build", "--out"])
        .arg(dir.join(out))
        .arg("--program")
        .arg(dir.join(program))
        .arg("--sdcard")
        .arg(dir.join("sd"))
        .args(images.iter().map(|i| dir.join(i)))
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn build_refuses_an_output_that_is_the_program_and_keeps_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let prg = [&[0x01u8, 0x20][..], &[0xEA; 100]].concat();
    std::fs::write(dir.path().join("p.prg"), &prg).unwrap();
    let (ok, err) = build(dir.path(), "p.prg", "p.prg", &[]);
    assert!(!ok && err.contains("is also an input"), "{err}");
    assert_eq!(std::fs::read(dir.path().join("p.prg")).unwrap(), prg);
}

#[test]
fn build_refuses_truncated_images_and_headers_that_claim_a_2_gb_payload() {
    let dir = tempfile::tempdir().unwrap();
    let prg = [&[0x01u8, 0x20][..], &[0xEA; 100]].concat();
    std::fs::write(dir.path().join("p.prg"), &prg).unwrap();
    let good = fake_image(5000, 3);
    std::fs::write(dir.path().join("cut.ssnail"), &good[..4000]).unwrap();
    let mut huge = good.clone();
    huge[ssnail_format::image::h::PAYLOAD_LEN..ssnail_format::image::h::PAYLOAD_LEN + 4]
        .copy_from_slice(&(2u32 << 30).to_le_bytes());
    std::fs::write(dir.path().join("huge.ssnail"), &huge).unwrap();
    for img in ["cut.ssnail", "huge.ssnail"] {
        let (ok, err) = build(dir.path(), "d.d81", "p.prg", &[img]);
        assert!(!ok, "{img} accepted");
        assert!(
            err.contains(img) && err.contains("truncated or corrupt"),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!dir.path().join("d.d81").exists());
    }
}

fn build_with(dir: &std::path::Path, images: &[&str]) -> std::process::Output {
    let mut c = tool();
    c.args(["build", "--out"])
        .arg(dir.join("ssnail.d81"))
        .arg("--program")
        .arg(dir.join("ssnail.prg"))
        .arg("--sdcard")
        .arg(dir.join("sdcard"));
    for i in images {
        c.arg(dir.join(i));
    }
    c.output().unwrap()
}

/// File names in a folder, sorted.
fn names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn the_sd_card_folder_holds_exactly_the_images_asked_for_and_no_host_paths() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    std::fs::write(p("ssnail.prg"), [0x01u8, 0x20, 0xEA]).unwrap();
    std::fs::write(p("one.ssnail"), fake_image(900_000, 3)).unwrap();
    std::fs::write(p("two.ssnail"), fake_image(900_000, 5)).unwrap();
    std::fs::write(p("small.ssnail"), fake_image(1000, 7)).unwrap();
    assert!(build_with(dir.path(), &["one.ssnail", "two.ssnail"])
        .status
        .success());
    assert_eq!(names(&p("sdcard/SSNAIL")), ["ONE.SSNAIL", "TWO.SSNAIL"]);
    // The user's own file in the folder stays.
    std::fs::write(p("sdcard/SSNAIL/CONFIG.TXT"), "two.ssnail\n").unwrap();
    let o = build_with(dir.path(), &["two.ssnail"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("ONE.SSNAIL: removed (an image from an earlier build)"),
        "{text}"
    );
    assert_eq!(names(&p("sdcard/SSNAIL")), ["CONFIG.TXT", "TWO.SSNAIL"]);
    let readme = std::fs::read_to_string(p("sdcard/README.TXT")).unwrap();
    assert!(
        readme.contains("did not fit on ssnail.d81:\nTWO.SSNAIL\n"),
        "{readme}"
    );
    assert!(
        !readme.contains(dir.path().to_str().unwrap()),
        "no host path: {readme}"
    );
    // Everything fits on the disk: the folder has no images and no note.
    assert!(build_with(dir.path(), &["small.ssnail"]).status.success());
    assert_eq!(names(&p("sdcard/SSNAIL")), ["CONFIG.TXT"]);
    assert!(!p("sdcard/README.TXT").exists());
}

#[test]
fn an_image_no_board_can_run_is_refused_and_sizes_name_their_boards() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    std::fs::write(p("ssnail.prg"), [0x01u8, 0x20, 0xEA]).unwrap();
    let with_need = |mb: u32, seed: u8| {
        let mut v = fake_image(2000, seed);
        v[0x38..0x3C].copy_from_slice(&(mb << 20).to_le_bytes());
        v
    };
    std::fs::write(p("r3.ssnail"), with_need(8, 3)).unwrap();
    std::fs::write(p("r4.ssnail"), with_need(64, 5)).unwrap();
    std::fs::write(p("emu.ssnail"), with_need(80, 7)).unwrap();
    let o = build_with(dir.path(), &["r3.ssnail", "emu.ssnail"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("emu.ssnail: needs 80.00 MB of SSNAIL memory, more than any MEGA65 board has"),
        "{err}"
    );
    assert!(!p("ssnail.d81").exists() && !p("sdcard").exists());
    let o = build_with(dir.path(), &["r3.ssnail", "r4.ssnail"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("r3.ssnail: on the disk as \"r3.ssnail\" (8 blocks; runs on every board)"),
        "{out}"
    );
    assert!(out.contains("runs on R4-R6 only (R3 has 8 MB)"), "{out}");
}

#[test]
fn build_puts_the_software_core_on_the_disk_after_the_program_and_refuses_other_files_as_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let prg = [&[0x01u8, 0x20][..], &[0xEA; 3000]].concat();
    std::fs::write(p("ssnail.prg"), &prg).unwrap();
    let core = [&b"SNLC"[..], &[0x4C; 34000]].concat();
    std::fs::write(p("ssnail.core"), &core).unwrap();
    std::fs::write(p("small.ssnail"), fake_image(5000, 3)).unwrap();
    let run = |core_file: &str, out: &str| {
        tool()
            .args(["build", "--out"])
            .arg(p(out))
            .arg("--program")
            .arg(p("ssnail.prg"))
            .arg("--core")
            .arg(p(core_file))
            .arg("--sdcard")
            .arg(p("sdcard"))
            .arg(p("small.ssnail"))
            .output()
            .unwrap()
    };
    let out = run("ssnail.core", "ok.d81");
    assert!(out.status.success(), "{out:?}");
    let d = D81::from_bytes(std::fs::read(p("ok.d81")).unwrap()).unwrap();
    let names: Vec<String> = d.files().unwrap().into_iter().map(|e| e.name).collect();
    assert_eq!(
        names,
        ["SSNAIL", "AUTOBOOT.C65", "SSNAIL.CORE", "SMALL.SSNAIL"]
    );
    assert_eq!(d.read_file("ssnail.core").unwrap(), core);

    // A PRG given as the core: refused in one line, no disk written.
    let out = run("ssnail.prg", "bad.d81");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("ssnail.prg: not a software SSNAIL core"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!p("bad.d81").exists());
}

/// `--overlay`: the program's chat overlay goes on the disk as `ssnail.ovl` (the name the program
/// looks for), byte for byte; a file without the overlay header's magic is refused in one line
/// and no disk is written.
#[test]
fn build_puts_the_programs_overlay_on_the_disk_and_refuses_a_file_that_is_not_one() {
    use ssnail_format::mega65::{overlay, OVERLAY_FILE};
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let prg = [&[0x01u8, 0x20][..], &[0xEA; 100]].concat();
    std::fs::write(p("ssnail.prg"), &prg).unwrap();
    let mut ovl = overlay::MAGIC.to_le_bytes().to_vec();
    ovl.extend_from_slice(&[overlay::VERSION, 0, 200, 0]);
    ovl.extend_from_slice(&[0x60; 200]);
    std::fs::write(p("ssnail.ovl"), &ovl).unwrap();
    std::fs::write(p("not.ovl"), [0u8; 208]).unwrap();
    let build = |ovl: &str, out: &str| {
        tool()
            .args(["build", "--out"])
            .arg(p(out))
            .arg("--program")
            .arg(p("ssnail.prg"))
            .arg("--overlay")
            .arg(p(ovl))
            .arg("--sdcard")
            .arg(p("sdcard"))
            .output()
            .unwrap()
    };
    let out = build("ssnail.ovl", "good.d81");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d = D81::from_bytes(std::fs::read(p("good.d81")).unwrap()).unwrap();
    assert_eq!(d.read_file(OVERLAY_FILE).unwrap(), ovl);
    let out = build("not.ovl", "bad.d81");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("not.ovl: not the MEGA65 program's overlay"),
        "{err}"
    );
    assert!(!p("bad.d81").exists());
}
