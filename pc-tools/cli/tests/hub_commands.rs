//! `ssnail findmodels` and `ssnail fetch` as a user runs them, against a
//! loopback server standing in for Hugging Face (SSNAIL_HF_ENDPOINT).

mod common;

use common::ssnail_command;
use ssnail_testkit::hf;
use ssnail_testkit::http::{Reply, Server};

#[test]
fn findmodels_then_fetch_the_offered_file() {
    // Patterned bytes after the GGUF magic (fetch checks a .gguf starts so).
    let mut model: Vec<u8> = (0..50_000u32).map(|i| (i * 7 % 251) as u8).collect();
    model[..4].copy_from_slice(b"GGUF");
    let served = model.clone();
    let server = Server::start(move |req| {
        let path = req.path.as_str();
        if path.starts_with("/api/models?") {
            return Reply::json(&hf::fixture("search.json").unwrap());
        }
        if let Some(repo) = path
            .strip_prefix("/api/models/")
            .and_then(|r| r.strip_suffix("/tree/main?recursive=true"))
        {
            if let Some(t) = hf::fixture(&format!("tree-{}.json", repo.replace('/', "--"))) {
                return Reply::json(&t);
            }
        }
        if path
            == "/afrideva/Tinystories-gpt-0.1-3m-GGUF/resolve/main/tinystories-gpt-0.1-3m.fp16.gguf"
        {
            return Reply {
                status: 200,
                headers: vec![],
                body: served.clone(),
                cut_after: None,
            };
        }
        Reply::status(404)
    });

    let out = ssnail_command()
        .args(["findmodels", "tinystories", "--mem", "8"])
        .env("SSNAIL_HF_ENDPOINT", &server.base)
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let summaries: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(summaries, ["searched 'tinystories': 1 candidates so far"]);
    let url = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("make fetch URL="))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no fetch line in:\n{stdout}"))
        .to_string();

    let dir = tempfile::tempdir().unwrap();
    let out = ssnail_command()
        .args(["fetch", &url])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = std::fs::read(dir.path().join("tinystories-gpt-0.1-3m.fp16.gguf")).unwrap();
    assert_eq!(got, model);

    // 404: one line, non-zero exit, no file.
    let out = ssnail_command()
        .args([
            "fetch",
            &format!("{}/o/r/resolve/main/nope.gguf", server.base),
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("HTTP 404"), "{err}");
    assert!(!dir.path().join("nope.gguf").exists());
    assert!(!dir.path().join("nope.gguf.part").exists());
}

#[test]
fn findmodels_without_network_says_so_in_one_line() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = ssnail_command()
        .args(["findmodels"])
        .env("SSNAIL_HF_ENDPOINT", format!("http://127.0.0.1:{port}"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "ssnail: Can't reach Hugging Face at http://127.0.0.1:{port} ("
        )),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn import_writes_a_gguf_or_says_in_one_line_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.gguf");
    let missing = dir.path().join("no-such-checkpoint");
    let res = ssnail_command()
        .args([
            "import",
            missing.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(res.status.code(), Some(1));
    let err = String::from_utf8(res.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("no-such-checkpoint") && err.contains("not a directory"),
        "{err}"
    );
    assert!(!out.exists());

    // The MiniLM checkpoint from the test-data cache (make testdata).
    let minilm = ssnail_testkit::cache::minilm();
    let res = ssnail_command()
        .args([
            "import",
            minilm.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--outtype",
            "q8_0",
        ])
        .output()
        .unwrap();
    assert!(
        res.status.success(),
        "{}",
        String::from_utf8_lossy(&res.stderr)
    );
    let said = String::from_utf8(res.stdout).unwrap();
    assert!(
        said.starts_with(&format!(
            "wrote {}: bert model, 101 tensors, 30522 tokens",
            out.display()
        )),
        "{said}"
    );
    let g = ssnail_gguf::Gguf::open(&out).unwrap();
    assert_eq!(g.get_str("general.name"), Some("all-MiniLM-L6-v2"));
    assert_eq!(g.get_u64("general.file_type"), Some(7));
    assert_eq!(
        g.tensor("blk.0.ffn_up.weight").unwrap().ty,
        ssnail_format::ggml::GgmlType::Q8_0
    );
    // Only the GGUF: no temporary file left beside it.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn fetch_leaves_an_existing_file_alone() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.gguf"), b"mine").unwrap();
    // Nothing listens on this port: an attempt to download would fail.
    let res = ssnail_command()
        .args(["fetch", "http://127.0.0.1:9/o/r/resolve/main/m.gguf"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(res.status.success());
    assert!(String::from_utf8_lossy(&res.stderr).contains("already exists"));
    assert_eq!(std::fs::read(dir.path().join("m.gguf")).unwrap(), b"mine");
}
