//! `ssnail convert -o` never destroys: not the model it reads, not a device.

mod common;

use common::ssnail_command;
use ssnail_testkit::models::{self, ModelOpts};

fn convert(model: &std::path::Path, out: &std::path::Path) -> (bool, String) {
    let o = ssnail_command()
        .arg("convert")
        .arg(model)
        .arg("-o")
        .arg(out)
        .args(["--ctx", "16"])
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn convert_with_the_output_equal_to_the_input_is_refused_and_the_model_kept() {
    let d = tempfile::tempdir().unwrap();
    let model = d.path().join("m.gguf");
    let bytes = models::build(&ModelOpts::llama());
    std::fs::write(&model, &bytes).unwrap();
    let (ok, err) = convert(&model, &d.path().join("./m.gguf"));
    assert!(!ok, "replaced the model");
    assert!(err.contains("is also an input"), "{err}");
    assert_eq!(std::fs::read(&model).unwrap(), bytes);
}

#[cfg(unix)]
#[test]
fn convert_to_dev_null_writes_through_and_leaves_dev_null_a_device() {
    use std::os::unix::fs::FileTypeExt;
    let d = tempfile::tempdir().unwrap();
    let model = d.path().join("m.gguf");
    std::fs::write(&model, models::build(&ModelOpts::llama())).unwrap();
    let (ok, err) = convert(&model, std::path::Path::new("/dev/null"));
    assert!(ok, "{err}");
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn convert_to_dash_writes_exactly_the_image_to_stdout_and_the_report_to_stderr() {
    let d = tempfile::tempdir().unwrap();
    let model = d.path().join("m.gguf");
    std::fs::write(&model, models::build(&ModelOpts::llama())).unwrap();
    let file = d.path().join("m.ssnail");
    assert!(convert(&model, &file).0);
    let o = ssnail_command()
        .arg("convert")
        .arg(&model)
        .args(["-o", "-", "--ctx", "16"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(o.stdout, std::fs::read(&file).unwrap());
    assert!(String::from_utf8_lossy(&o.stderr).contains("wrote -"));
}
