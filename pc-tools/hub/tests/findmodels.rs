//! The finder against canned Hugging Face API replies served on 127.0.0.1
//! (spec §10.7): ssnail-testkit's fixtures (`ssnail_testkit::hf`), in the
//! shape of the real API.
//!
//! About the TinyStories GPT-2 row: its GGUF metadata says 6.96 M parameters
//! (llama.cpp stores GPT-2's tied output matrix a second time, which is why a
//! "3m" model counts 7 M). At 8 MB the weight budget is 0.80 × 8 MiB =
//! 6.71 MB; Q8_0 would need 6.96 M × 8.5 / 8 = 7.40 MB, Q4_0 3.92 MB, so the
//! 8 MB column says q4 — as upstream's test expects.

use ssnail_hub::findmodels::{find, find_within, render, FitFormat, Query};
use ssnail_testkit::hf;
use ssnail_testkit::http::{Reply, Server};

fn fixture(name: &str) -> String {
    hf::fixture(name).unwrap_or_else(|| panic!("{}: cannot read", hf::dir().join(name).display()))
}

/// Serves the search reply for any search and each repo's tree; `broken`
/// repos answer their tree listing with HTTP 500.
fn hub(broken: &'static [&'static str]) -> Server {
    Server::start(move |req| {
        let path = req.path.as_str();
        if path.starts_with("/api/models?") {
            return Reply::json(&fixture("search.json"));
        }
        if let Some(rest) = path.strip_prefix("/api/models/") {
            if let Some(repo) = rest.strip_suffix("/tree/main?recursive=true") {
                if broken.contains(&repo) {
                    return Reply::status(500);
                }
                let name = format!("tree-{}.json", repo.replace('/', "--"));
                if let Some(t) = hf::fixture(&name) {
                    return Reply::json(&t);
                }
            }
        }
        Reply::status(404)
    })
}

fn query(terms: &[&str], mem: Option<u32>, all_arch: bool) -> Query {
    Query {
        terms: terms.iter().map(|s| s.to_string()).collect(),
        mem,
        limit: 15,
        all_arch,
    }
}

#[test]
fn lists_supported_models_that_fit_and_offers_the_unquantised_file() {
    let server = hub(&[]);
    let mut progress = Vec::new();
    let rows = find(
        &server.base,
        &query(&["tinystories"], None, false),
        &mut |l| progress.push(l.to_string()),
    )
    .unwrap();
    let repos: Vec<&str> = rows.iter().map(|r| r.repo.as_str()).collect();
    // Sorted by parameters: 6.96 M GPT-2, then the 23 M MiniLM. The 8 B llama
    // fits nowhere; mamba fits but is not an architecture SSNAIL runs.
    assert_eq!(
        repos,
        [
            "afrideva/Tinystories-gpt-0.1-3m-GGUF",
            "example-org/all-MiniLM-L6-v2-GGUF"
        ]
    );

    let gpt = &rows[0];
    assert_eq!(gpt.arch.as_deref(), Some("gpt2"));
    assert_eq!(gpt.params, Some(6_963_584));
    assert_eq!(
        gpt.fits,
        [
            Some(FitFormat::Q4_0),
            Some(FitFormat::Q8_0),
            Some(FitFormat::Q8_0)
        ]
    );
    assert_eq!(gpt.file.path, "tinystories-gpt-0.1-3m.fp16.gguf");

    // No GGUF metadata: architecture from the name, parameters from the
    // Q8_0 file (the highest-bpw file with a size; sizes only in `lfs`).
    let mini = &rows[1];
    assert_eq!(mini.arch.as_deref(), Some("bert"));
    assert_eq!(
        mini.params,
        Some((24_560_512.0f64 * 8.0 / 8.5).round() as u64)
    );
    assert_eq!(mini.file.path, "all-MiniLM-L6-v2-Q8_0.gguf");
    assert_eq!(
        mini.fits,
        [None, Some(FitFormat::Q8_0), Some(FitFormat::Q8_0)]
    );

    let summaries: Vec<&String> = progress.iter().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(summaries, ["searched 'tinystories': 2 candidates so far"]);
    assert!(
        progress.iter().any(|l| l.starts_with("  listing ")),
        "{progress:?}"
    );

    let text = render(&rows, &server.base);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("repository"), "{text}");
    let gpt_row: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        gpt_row,
        [
            "afrideva/Tinystories-gpt-0.1-3m-GGUF",
            "gpt2",
            "7.0M",
            "q4",
            "q8",
            "q8",
            "1873"
        ]
    );
    let mini_row: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(
        mini_row,
        [
            "example-org/all-MiniLM-L6-v2-GGUF",
            "bert",
            "23.1M",
            "-",
            "q8",
            "q8",
            "912"
        ]
    );
    let fetch_line = format!(
        "  make fetch URL={}/afrideva/Tinystories-gpt-0.1-3m-GGUF/resolve/main/tinystories-gpt-0.1-3m.fp16.gguf   # tinystories-gpt-0.1-3m.fp16.gguf",
        server.base
    );
    assert!(text.lines().any(|l| l == fetch_line), "{text}");
    assert!(!text.contains("Llama-3.1-8B") && !text.contains("mamba"));

    // The requests were the API's: search with the gguf filter and expands,
    // recursive tree listings, our User-Agent.
    let reqs = server.requests();
    let search = &reqs[0];
    assert!(search.path.starts_with(
        "/api/models?search=tinystories&filter=gguf&sort=downloads&direction=-1&limit=15"
    ));
    assert!(search
        .path
        .contains("expand%5B%5D=gguf&expand%5B%5D=downloads&expand%5B%5D=likes"));
    assert_eq!(search.header("user-agent"), Some("ssnail-findmodels/1"));
    assert_eq!(reqs.len(), 5, "one search and four tree listings");
}

#[test]
fn mem_filters_by_memory_size() {
    let server = hub(&[]);
    let rows = find(
        &server.base,
        &query(&["tinystories"], Some(8), false),
        &mut |_| {},
    )
    .unwrap();
    let repos: Vec<&str> = rows.iter().map(|r| r.repo.as_str()).collect();
    assert_eq!(repos, ["afrideva/Tinystories-gpt-0.1-3m-GGUF"]);
    let rows = find(
        &server.base,
        &query(&["tinystories"], Some(72), false),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(rows.len(), 2);
}

#[test]
fn all_arch_also_lists_unsupported_and_too_big_models() {
    let server = hub(&[]);
    let rows = find(&server.base, &query(&["x"], None, true), &mut |_| {}).unwrap();
    let repos: Vec<&str> = rows.iter().map(|r| r.repo.as_str()).collect();
    assert_eq!(
        repos,
        [
            "afrideva/Tinystories-gpt-0.1-3m-GGUF",
            "example-org/TinyStories-mamba-20M-GGUF",
            "example-org/all-MiniLM-L6-v2-GGUF",
            "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF",
        ]
    );
    let llama = &rows[3];
    assert_eq!(llama.fits, [None, None, None]);
    assert_eq!(llama.file.path, "Meta-Llama-3.1-8B-Instruct-f32.gguf");
}

#[test]
fn repeated_repositories_are_listed_once_and_broken_listings_skipped() {
    let server = hub(&["example-org/all-MiniLM-L6-v2-GGUF"]);
    let mut progress = Vec::new();
    let rows = find(
        &server.base,
        &query(&["tinystories", "gpt2"], None, false),
        &mut |l| progress.push(l.to_string()),
    )
    .unwrap();
    let repos: Vec<&str> = rows.iter().map(|r| r.repo.as_str()).collect();
    assert_eq!(repos, ["afrideva/Tinystories-gpt-0.1-3m-GGUF"]);
    let summaries: Vec<&String> = progress.iter().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(
        summaries,
        [
            "searched 'tinystories': 1 candidates so far",
            "searched 'gpt2': 1 candidates so far"
        ]
    );
    // Two searches, four listings (the second search's hits were all seen).
    assert_eq!(server.requests().len(), 6);
}

#[test]
fn no_rows_suggests_what_to_try() {
    let text = render(&[], "http://x");
    assert!(text.contains("--all-arch"), "{text}");
}

#[test]
fn unreachable_hub_is_one_clear_line() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = find(
        &format!("http://127.0.0.1:{port}"),
        &query(&["tinystories"], None, false),
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with(&format!(
            "Can't reach Hugging Face at http://127.0.0.1:{port} ("
        )),
        "{err}"
    );
    assert!(!err.contains('\n'), "{err}");

    // An HTTP error from the search is also a failed search.
    let server = Server::start(|_| Reply::status(503));
    let err = find(&server.base, &query(&["a"], None, false), &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&format!(
            "Can't reach Hugging Face at {} (HTTP 503",
            server.base
        )),
        "{err}"
    );
}

/// A server that lists more repositories than asked for, slowly: the finder
/// looks at `--limit` of them and stops the whole search at its time limit.
#[test]
fn findmodels_honours_the_limit_and_bounds_the_whole_search_in_time() {
    let hits: Vec<String> = (0..40)
        .map(|i| format!(r#"{{"id": "org/model-{i}", "downloads": 1, "likes": 0}}"#))
        .collect();
    let search = format!("[{}]", hits.join(","));
    let trees = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let t2 = trees.clone();
    let server = Server::start(move |req| {
        if req.path.starts_with("/api/models?") {
            return Reply::json(&search);
        }
        t2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(300));
        Reply::json("[]")
    });
    let mut q = query(&["a"], None, true);
    q.limit = 3;
    let mut progress = Vec::new();
    find(&server.base, &q, &mut |l| progress.push(l.to_string())).unwrap();
    assert_eq!(
        trees.load(std::sync::atomic::Ordering::SeqCst),
        3,
        "{progress:?}"
    );
    assert!(
        progress.contains(&"  listing org/model-2 (3/3)".to_string()),
        "{progress:?}"
    );

    // 40 slow listings (12 s) in a search limited to 1 s.
    q.limit = 40;
    let t0 = std::time::Instant::now();
    let mut progress = Vec::new();
    let r = find_within(
        &server.base,
        &q,
        &mut |l| progress.push(l.to_string()),
        std::time::Duration::from_secs(1),
    );
    let took = t0.elapsed().as_secs_f64();
    assert!(took < 2.5, "took {took:.1} s");
    assert!(r.is_ok() || r.is_err());
    assert!(
        progress
            .iter()
            .any(|l| l.contains("time limit of 1 s reached")),
        "{progress:?}"
    );
}
