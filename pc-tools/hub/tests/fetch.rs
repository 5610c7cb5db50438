//! Downloads against a loopback server that cuts the first transfer short,
//! honours Range requests, and answers 404 for unknown paths.

use ssnail_hub::fetch::{fetch, part_path};
use ssnail_testkit::http::{Reply, Server};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// 300 kB of bytes that differ from position to position, after the GGUF
/// magic (a `.gguf` download must start with it).
fn payload() -> Vec<u8> {
    let mut x = 0x1234_5678u32;
    let mut v: Vec<u8> = (0..300_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    v[..4].copy_from_slice(b"GGUF");
    v
}

/// Serves `/m.gguf` with Range support; the first request is cut after
/// `cut` bytes (the headers still announce the whole length).
fn file_server(data: Arc<Vec<u8>>, cut: usize) -> Server {
    let calls = AtomicUsize::new(0);
    Server::start(move |req| {
        if req.path != "/o/r/resolve/main/m.gguf" {
            return Reply::status(404);
        }
        let first = calls.fetch_add(1, Ordering::SeqCst) == 0;
        let start = req
            .header("range")
            .and_then(|r| r.strip_prefix("bytes="))
            .and_then(|r| r.strip_suffix('-'))
            .map(|s| s.parse::<usize>().unwrap());
        let len = data.len();
        let mut reply = match start {
            Some(s) if s >= len => Reply {
                status: 416,
                headers: vec![("Content-Range".into(), format!("bytes */{len}"))],
                body: vec![],
                cut_after: None,
            },
            Some(s) => Reply {
                status: 206,
                headers: vec![(
                    "Content-Range".into(),
                    format!("bytes {s}-{}/{len}", len - 1),
                )],
                body: data[s..].to_vec(),
                cut_after: None,
            },
            None => Reply {
                status: 200,
                headers: vec![],
                body: data.to_vec(),
                cut_after: None,
            },
        };
        if first {
            reply.cut_after = Some(cut);
        }
        reply
    })
}

#[test]
fn an_interrupted_download_resumes_with_range_and_ends_identical() {
    let data = Arc::new(payload());
    let server = file_server(data.clone(), 123_457);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.gguf");
    let url = format!("{}/o/r/resolve/main/m.gguf", server.base);

    let err = fetch(&url, &out, false).unwrap_err().to_string();
    assert!(err.contains("interrupted") || err.contains("got"), "{err}");
    assert!(err.contains("run the same command again"), "{err}");
    assert!(!out.exists(), "no final file after a cut transfer");
    let part = part_path(&out);
    let kept = std::fs::read(&part).unwrap();
    assert_eq!(kept.len(), 123_457);
    assert_eq!(kept[..], data[..123_457]);

    let done = fetch(&url, &out, false).unwrap();
    assert_eq!(done.resumed_from, 123_457);
    assert_eq!(done.bytes, data.len() as u64);
    assert_eq!(std::fs::read(&out).unwrap(), *data);
    assert!(!part.exists());

    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].header("range"), None);
    assert_eq!(reqs[1].header("range"), Some("bytes=123457-"));
}

#[test]
fn a_complete_part_file_is_finished_on_416() {
    let data = Arc::new(payload());
    let server = file_server(data.clone(), usize::MAX);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.gguf");
    std::fs::write(part_path(&out), &*data).unwrap();
    let url = format!("{}/o/r/resolve/main/m.gguf", server.base);
    let done = fetch(&url, &out, false).unwrap();
    assert_eq!(done.bytes, data.len() as u64);
    assert_eq!(std::fs::read(&out).unwrap(), *data);
}

#[test]
fn a_server_that_ignores_range_restarts_from_zero() {
    let data = Arc::new(payload());
    let d2 = data.clone();
    let server = Server::start(move |_| Reply {
        status: 200,
        headers: vec![],
        body: d2.to_vec(),
        cut_after: None,
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.gguf");
    std::fs::write(part_path(&out), b"stale bytes").unwrap();
    let done = fetch(&format!("{}/m.gguf", server.base), &out, false).unwrap();
    assert_eq!(done.resumed_from, 0);
    assert_eq!(std::fs::read(&out).unwrap(), *data);
}

#[test]
fn http_404_is_a_clear_error_and_leaves_no_file() {
    let server = file_server(Arc::new(payload()), usize::MAX);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("missing.gguf");
    let url = format!("{}/o/r/resolve/main/missing.gguf", server.base);
    let err = fetch(&url, &out, false).unwrap_err().to_string();
    assert!(err.contains("HTTP 404"), "{err}");
    assert!(err.contains(&url), "{err}");
    assert!(!err.contains('\n'));
    assert!(!out.exists());
    assert!(!part_path(&out).exists());

    // An earlier partial transfer survives an HTTP error, for a later resume.
    std::fs::write(part_path(&out), b"partial").unwrap();
    fetch(&url, &out, false).unwrap_err();
    assert!(!out.exists());
    assert_eq!(std::fs::read(part_path(&out)).unwrap(), b"partial");
}

/// Hugging Face answers `resolve` URLs with a redirect to its file store:
/// the Range request must survive it.
#[test]
fn resuming_follows_redirects_with_the_range() {
    let data = Arc::new(payload());
    let files = file_server(data.clone(), 100_000);
    let target = format!("{}/o/r/resolve/main/m.gguf", files.base);
    let front = Server::start(move |_| Reply {
        status: 302,
        headers: vec![("Location".into(), target.clone())],
        body: vec![],
        cut_after: None,
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.gguf");
    let url = format!("{}/o/r/resolve/main/m.gguf", front.base);
    fetch(&url, &out, false).unwrap_err();
    let done = fetch(&url, &out, false).unwrap();
    assert_eq!(done.resumed_from, 100_000);
    assert_eq!(std::fs::read(&out).unwrap(), *data);
    let reqs = files.requests();
    assert_eq!(reqs[1].header("range"), Some("bytes=100000-"));
}

#[test]
fn an_html_page_served_as_a_gguf_or_safetensors_is_refused_and_nothing_written() {
    let page = b"<!DOCTYPE html><html><body>Rate limited</body></html>".to_vec();
    let server = Server::start(move |_| Reply {
        status: 200,
        headers: vec![],
        body: page.clone(),
        cut_after: None,
    });
    let dir = tempfile::tempdir().unwrap();
    for name in ["m.gguf", "model.safetensors"] {
        let out = dir.path().join(name);
        let url = format!("{}/o/r/resolve/main/{name}", server.base);
        let err = fetch(&url, &out, false).unwrap_err().to_string();
        assert!(err.contains(&url) && err.contains("is not a"), "{err}");
        assert!(err.contains("<!DOCTYPE html>"), "{err}");
        assert!(!err.contains('\n'));
        assert!(!out.exists(), "{name} written");
        assert!(!part_path(&out).exists(), "a bad .part would be resumed");
    }
    // Other names are not checked.
    let out = dir.path().join("README.md");
    fetch(
        &format!("{}/o/r/resolve/main/README.md", server.base),
        &out,
        false,
    )
    .unwrap();
    assert!(out.exists());
}
