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
