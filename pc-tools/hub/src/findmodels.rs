//! Model finder (spec §8): search Hugging Face's model API for GGUF
//! repositories in architectures SSNAIL runs, estimate which memory size each
//! fits at which weight format, and pick the file to download.
//!
//! The rules (tags, guesses, budget) are pure functions so they can be tested
//! without a server; `find` does the requests.

use crate::http::{self, Use};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::Value;
use std::time::Instant;

/// Searched when no terms are given.
pub const DEFAULT_TERMS: [&str; 9] = [
    "tinystories",
    "smollm",
    "minilm",
    "bert-tiny",
    "bert-mini",
    "tinyllama",
    "stories15m",
    "stories260k",
    "gpt2",
];

/// Architectures the converter and the core run.
pub const SUPPORTED_ARCHS: [&str; 3] = ["llama", "gpt2", "bert"];

/// Memory sizes in MB, in column order.
pub const MEM_SIZES: [u32; 3] = [8, 64, 72];

/// Repositories per search term unless `--limit` says otherwise.
pub const DEFAULT_LIMIT: usize = 15;

/// Bits per weight by file-name tag, in the order tags are tried.
const BPW_TAGS: [(&str, f64); 21] = [
    ("f32", 32.0),
    ("fp32", 32.0),
    ("bf16", 16.0),
    ("f16", 16.0),
    ("fp16", 16.0),
    ("q8_0", 8.5),
    ("q6_k", 6.56),
    ("q5_k", 5.5),
    ("q5_1", 6.0),
    ("q5_0", 5.5),
    ("q4_k", 4.5),
    ("q4_1", 5.0),
    ("q4_0", 4.5),
    ("iq4", 4.5),
    ("q3_k", 3.44),
    ("iq3", 3.4),
    ("q2_k", 2.63),
    ("iq2", 2.3),
    ("iq1", 1.8),
    ("tq1_0", 1.69),
    ("tq2_0", 2.06),
];

/// Bits per weight of a GGUF file from its name: the first tag (in the table's
/// order) found at the start of the lower-cased name or after `.`, `-`, `_`.
pub fn bits_per_weight(file_name: &str) -> Option<f64> {
    let name = file_name.to_lowercase();
    BPW_TAGS.iter().find_map(|&(tag, bpw)| {
        let hit = name.starts_with(tag)
            || [".", "-", "_"]
                .iter()
                .any(|sep| name.contains(&format!("{sep}{tag}")));
        hit.then_some(bpw)
    })
}

/// Architecture guessed from the repository id and file names. Only the
/// llama guess is marked (`llama?`): many llama-shaped names are not llama.
pub fn guess_architecture(repo: &str, files: &[GgufFile]) -> Option<&'static str> {
    let mut text = repo.to_lowercase();
    for f in files {
        text.push(' ');
        text.push_str(&f.path.to_lowercase());
    }
    let has = |words: &[&str]| words.iter().any(|w| text.contains(w));
    if has(&["bert", "minilm", "mpnet", "e5-", "bge"]) {
        Some("bert")
    } else if has(&["gpt2", "gpt-2", "tinystories-gpt"]) {
        Some("gpt2")
    } else if has(&["llama", "smollm", "stories", "tinyllama", "mistral", "qwen"]) {
        Some("llama?")
    } else {
        None
    }
}

/// A weight format the fit estimate offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FitFormat {
    Q8_0,
    Q4_0,
}

impl FitFormat {
    pub fn bits_per_weight(self) -> f64 {
        match self {
            FitFormat::Q8_0 => 8.5,
            FitFormat::Q4_0 => 4.5,
        }
    }
    /// Column text: the ggml name without `_0`.
    pub fn short(self) -> &'static str {
        match self {
            FitFormat::Q8_0 => "q8",
            FitFormat::Q4_0 => "q4",
        }
    }
}

/// Bytes available for weights in a memory size: 80% of it, less 64 KiB of
/// tables on the larger sizes (§8's rule of thumb; the converter decides).
pub fn weight_budget(mem_mb: u32) -> f64 {
    let reserve = if mem_mb > 8 { 64.0 * 1024.0 } else { 0.0 };
    mem_mb as f64 * 1024.0 * 1024.0 * 0.80 - reserve
}

/// The best format (Q8_0, else Q4_0) whose weights fit `mem_mb`.
pub fn fit(params: u64, mem_mb: u32) -> Option<FitFormat> {
    [FitFormat::Q8_0, FitFormat::Q4_0]
        .into_iter()
        .find(|f| params as f64 * f.bits_per_weight() / 8.0 <= weight_budget(mem_mb))
}

/// A parameter count as people write it: 7.0M, 1.1B, 4.4K.
pub fn human_count(n: Option<u64>) -> String {
    match n {
        None => "?".into(),
        Some(n) if n >= 1_000_000_000 => format!("{:.1}B", n as f64 / 1e9),
        Some(n) if n >= 1_000_000 => format!("{:.1}M", n as f64 / 1e6),
        Some(n) if n >= 1_000 => format!("{:.1}K", n as f64 / 1e3),
        Some(n) => n.to_string(),
    }
}

/// One `.gguf` file of a repository.
#[derive(Clone, Debug, PartialEq)]
pub struct GgufFile {
    pub path: String,
    /// `size`, else `lfs.size`, else 0.
    pub size: u64,
    pub bpw: Option<f64>,
}

/// The `.gguf` files of a tree listing.
pub fn gguf_files(tree: &Value) -> Vec<GgufFile> {
    let Some(entries) = tree.as_array() else {
        return Vec::new();
    };
    entries
        .iter()
        .filter(|e| e.get("type").and_then(Value::as_str) == Some("file"))
        .filter_map(|e| {
            let path = e.get("path")?.as_str()?;
            if !path.to_lowercase().ends_with(".gguf") {
                return None;
            }
            let size = e
                .get("size")
                .and_then(Value::as_u64)
                .or_else(|| e.get("lfs")?.get("size")?.as_u64())
                .unwrap_or(0);
            let name = path.rsplit('/').next().unwrap_or(path);
            Some(GgufFile {
                path: path.to_string(),
                size,
                bpw: bits_per_weight(name),
            })
        })
        .collect()
}

/// Highest bits per weight (unknown counts as 0; the first listed wins
/// ties): the least quantised file, which the converter can quantise itself.
pub fn best_file(files: &[GgufFile]) -> Option<&GgufFile> {
    let mut best: Option<&GgufFile> = None;
    for f in files {
        if best.is_none_or(|b| f.bpw.unwrap_or(0.0) > b.bpw.unwrap_or(0.0)) {
            best = Some(f);
        }
    }
    best
}

/// Parameters estimated from the highest-bpw file with a known bpw and size.
pub fn estimate_params(files: &[GgufFile]) -> Option<u64> {
    let mut best: Option<&GgufFile> = None;
    for f in files.iter().filter(|f| f.bpw.is_some() && f.size > 0) {
        if best.is_none_or(|b| f.bpw > b.bpw) {
            best = Some(f);
        }
    }
    best.map(|f| (f.size as f64 * 8.0 / f.bpw.unwrap()).round() as u64)
}

/// One repository worth listing.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub repo: String,
    /// `gguf.architecture`, or a guess (`llama?` when guessed llama).
    pub arch: Option<String>,
    pub params: Option<u64>,
    /// Fit per memory size in `MEM_SIZES` order.
    pub fits: [Option<FitFormat>; 3],
    pub downloads: u64,
    pub likes: u64,
    pub file: GgufFile,
}

impl Candidate {
    fn supported(&self) -> bool {
        self.arch
            .as_deref()
            .is_some_and(|a| SUPPORTED_ARCHS.contains(&a.trim_end_matches('?')))
    }
    pub fn fit_at(&self, mem_mb: u32) -> Option<FitFormat> {
        let i = MEM_SIZES.iter().position(|&m| m == mem_mb)?;
        self.fits[i]
    }
    /// Where the chosen file downloads from.
    pub fn download_url(&self, endpoint: &str) -> String {
        let quoted: Vec<String> = self
            .file
            .path
            .split('/')
            .map(|seg| utf8_percent_encode(seg, PATH_SEGMENT).to_string())
            .collect();
        format!("{endpoint}/{}/resolve/main/{}", self.repo, quoted.join("/"))
    }
}

/// Characters left alone in a URL path segment (as Python's `quote`).
const PATH_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Build a candidate from one search hit and its file listing, or None when
/// the repository has no `.gguf` file.
pub fn candidate(hit: &Value, files: &[GgufFile]) -> Option<Candidate> {
    let repo = hit.get("id")?.as_str()?.to_string();
    let file = best_file(files)?.clone();
    let meta = hit.get("gguf");
    let arch = meta
        .and_then(|g| g.get("architecture"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| guess_architecture(&repo, files).map(str::to_string));
    let params = meta
        .and_then(|g| g.get("total"))
        .and_then(Value::as_u64)
        .or_else(|| estimate_params(files));
    let fits = MEM_SIZES.map(|m| params.and_then(|p| fit(p, m)));
    Some(Candidate {
        repo,
        arch,
        params,
        fits,
        downloads: hit.get("downloads").and_then(Value::as_u64).unwrap_or(0),
        likes: hit.get("likes").and_then(Value::as_u64).unwrap_or(0),
        file,
    })
}

/// What to search for and what to keep.
#[derive(Clone, Debug)]
pub struct Query {
    pub terms: Vec<String>,
    pub mem: Option<u32>,
    pub limit: usize,
    pub all_arch: bool,
}

impl Query {
    /// Whether a candidate is listed (§8 "Filtering").
    pub fn keeps(&self, c: &Candidate) -> bool {
        if !self.all_arch && !c.supported() {
            return false;
        }
        if let Some(m) = self.mem {
            if c.fit_at(m).is_none() {
                return false;
            }
        }
        self.all_arch || c.fits.iter().any(Option::is_some)
    }
}

/// Failure to search (the finder stops); file listings that fail are
/// skipped. The message names the endpoint actually used.
#[derive(Debug)]
pub struct SearchFailed {
    pub endpoint: String,
    pub msg: String,
}

impl std::fmt::Display for SearchFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Can't reach Hugging Face at {} ({})",
            self.endpoint, self.msg
        )
    }
}

/// The whole search (every term, every file listing) ends by then; what was
/// found so far is shown. A request never waits past it either.
pub const SEARCH_TIME: std::time::Duration = std::time::Duration::from_secs(120);

impl std::error::Error for SearchFailed {}

/// GET a JSON reply, waiting at most until `deadline`.
fn get_json(agent: &ureq::Agent, url: &str, deadline: Instant) -> Result<Value, String> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err("the search's time limit was reached".into());
    }
    let mut resp = agent
        .get(url)
        .config()
        .timeout_global(Some(left.min(std::time::Duration::from_secs(30))))
        .build()
        .call()
        .map_err(|e| http::describe(&e))?;
    let status = resp.status();
    if !status.is_success() {
        return Err(format!("HTTP {status} from {url}"));
    }
    let text = resp
        .body_mut()
        .with_config()
        .limit(64 << 20)
        .read_to_string()
        .map_err(|e| http::describe(&e))?;
    serde_json::from_str(&text).map_err(|e| format!("bad JSON from {url}: {e}"))
}

/// Search `endpoint` for every term, list each new repository's files, and
/// return the candidates the query keeps, sorted by parameter count (unknown
/// last) then downloads (most first). At most `query.limit` repositories per
/// term are looked at, whatever the server sends; the whole search takes at
/// most [`SEARCH_TIME`]. `progress` receives a line per term and per
/// repository listed.
pub fn find(
    endpoint: &str,
    query: &Query,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Candidate>, SearchFailed> {
    find_within(endpoint, query, progress, SEARCH_TIME)
}

/// [`find`] with another time limit for the whole search.
pub fn find_within(
    endpoint: &str,
    query: &Query,
    progress: &mut dyn FnMut(&str),
    time: std::time::Duration,
) -> Result<Vec<Candidate>, SearchFailed> {
    let deadline = Instant::now() + time;
    let endpoint = endpoint.trim_end_matches('/');
    let failed = |msg: String| SearchFailed {
        endpoint: endpoint.to_string(),
        msg,
    };
    let agent = http::agent_for(
        endpoint,
        Use::Api {
            user_agent: "ssnail-findmodels/1",
        },
    );
    let terms: Vec<String> = if query.terms.is_empty() {
        DEFAULT_TERMS.iter().map(|s| s.to_string()).collect()
    } else {
        query.terms.clone()
    };
    let mut seen = std::collections::HashSet::new();
    let mut rows = Vec::new();
    'terms: for term in &terms {
        if Instant::now() >= deadline {
            progress(&format!(
                "time limit of {} s reached: showing what was found",
                time.as_secs()
            ));
            break;
        }
        let q = utf8_percent_encode(term, NON_ALPHANUMERIC);
        let url = format!(
            "{endpoint}/api/models?search={q}&filter=gguf&sort=downloads&direction=-1&limit={}\
             &expand%5B%5D=gguf&expand%5B%5D=downloads&expand%5B%5D=likes",
            query.limit
        );
        let hits = match get_json(&agent, &url, deadline) {
            Ok(h) => h,
            // Out of time after some results: show them.
            Err(_) if Instant::now() >= deadline && !rows.is_empty() => {
                progress(&format!(
                    "time limit of {} s reached: showing what was found",
                    time.as_secs()
                ));
                break;
            }
            Err(e) => return Err(failed(e)),
        };
        let hits = hits
            .as_array()
            .ok_or_else(|| failed(format!("unexpected search reply from {url}")))?;
        let n = hits.len().min(query.limit);
        for (i, hit) in hits.iter().take(query.limit).enumerate() {
            if Instant::now() >= deadline {
                progress(&format!(
                    "time limit of {} s reached: showing what was found",
                    time.as_secs()
                ));
                break 'terms;
            }
            let Some(repo) = hit.get("id").and_then(Value::as_str) else {
                continue;
            };
            if !seen.insert(repo.to_string()) {
                continue;
            }
            progress(&format!("  listing {repo} ({}/{n})", i + 1));
            let tree_url = format!("{endpoint}/api/models/{repo}/tree/main?recursive=true");
            let Ok(tree) = get_json(&agent, &tree_url, deadline) else {
                continue;
            };
            if let Some(c) = candidate(hit, &gguf_files(&tree)) {
                if query.keeps(&c) {
                    rows.push(c);
                }
            }
        }
        progress(&format!(
            "searched '{term}': {} candidates so far",
            rows.len()
        ));
    }
    rows.sort_by(|a, b| {
        let pa = a.params.unwrap_or(u64::MAX);
        let pb = b.params.unwrap_or(u64::MAX);
        pa.cmp(&pb).then(b.downloads.cmp(&a.downloads))
    });
    Ok(rows)
}

/// The table, legend and download lines as printed on stdout.
pub fn render(rows: &[Candidate], endpoint: &str) -> String {
    use std::fmt::Write;
    let endpoint = endpoint.trim_end_matches('/');
    let mut out = String::new();
    if rows.is_empty() {
        out.push_str(
            "No models found. Try other search terms (e.g. tinystories, smollm, minilm), \
             or --all-arch to list unsupported architectures and models that fit nowhere.\n",
        );
        return out;
    }
    let _ = writeln!(
        out,
        "{:<48} {:<7} {:>7} {:>5} {:>5} {:>5} {:>10}",
        "repository", "arch", "params", "8MB", "64MB", "72MB", "downloads"
    );
    for c in rows {
        let fit = |i: usize| c.fits[i].map_or("-", FitFormat::short);
        let _ = writeln!(
            out,
            "{:<48} {:<7} {:>7} {:>5} {:>5} {:>5} {:>10}",
            c.repo,
            c.arch.as_deref().unwrap_or("?"),
            human_count(c.params),
            fit(0),
            fit(1),
            fit(2),
            c.downloads
        );
    }
    out.push_str(
        "\n8MB/64MB/72MB: the weight format at which the model is estimated to fit that memory \
         size\n  (q8 = Q8_0, q4 = Q4_0, - = too big); the converter (make foo.all) has the final word.\n\
         llama? = architecture guessed from the name; check with `make foo.info`.\n\n\
         Download (least quantised file; the converter quantises it):\n",
    );
    for c in rows {
        let name = c.file.path.rsplit('/').next().unwrap_or(&c.file.path);
        let _ = writeln!(
            out,
            "  make fetch URL={}   # {name}",
            c.download_url(endpoint)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_per_weight_follows_the_tag_order() {
        assert_eq!(
            bits_per_weight("tinystories-gpt-0.1-3m.fp16.gguf"),
            Some(16.0)
        );
        assert_eq!(bits_per_weight("model.Q8_0.gguf"), Some(8.5));
        assert_eq!(bits_per_weight("model-q4_k_m.gguf"), Some(4.5));
        assert_eq!(bits_per_weight("f32.gguf"), Some(32.0));
        assert_eq!(bits_per_weight("x-BF16.gguf"), Some(16.0));
        // A tag must start the name or follow a separator.
        assert_eq!(bits_per_weight("elf16.gguf"), None);
        assert_eq!(bits_per_weight("model.gguf"), None);
    }

    #[test]
    fn fit_budget_matches_the_rule() {
        // 8 MB: 6 710 886 bytes for weights. 6.96 M params: Q8_0 needs
        // 7.40 MB (too much), Q4_0 3.92 MB.
        assert_eq!(fit(6_960_000, 8), Some(FitFormat::Q4_0));
        assert_eq!(fit(6_960_000, 64), Some(FitFormat::Q8_0));
        assert_eq!(fit(6_000_000, 8), Some(FitFormat::Q8_0));
        assert_eq!(fit(8_030_000_000, 72), None);
        // 64 MB: 53 621 555 bytes; largest Q8_0 model 50 467 346 params.
        assert_eq!(fit(50_467_346, 64), Some(FitFormat::Q8_0));
        assert_eq!(fit(50_467_347, 64), Some(FitFormat::Q4_0));
    }

    #[test]
    fn guesses_and_counts() {
        assert_eq!(
            guess_architecture("x/all-MiniLM-L6-v2-GGUF", &[]),
            Some("bert")
        );
        assert_eq!(
            guess_architecture("a/Tinystories-gpt-0.1-3m-GGUF", &[]),
            Some("gpt2")
        );
        assert_eq!(
            guess_architecture("a/SmolLM2-135M-GGUF", &[]),
            Some("llama?")
        );
        assert_eq!(guess_architecture("a/mamba-130m-GGUF", &[]), None);
        assert_eq!(human_count(Some(6_960_000)), "7.0M");
        assert_eq!(human_count(Some(8_030_261_248)), "8.0B");
        assert_eq!(human_count(Some(4_400)), "4.4K");
        assert_eq!(human_count(None), "?");
    }

    #[test]
    fn best_file_prefers_unquantised_and_first_on_ties() {
        let f = |p: &str| GgufFile {
            path: p.into(),
            size: 1,
            bpw: bits_per_weight(p),
        };
        let files = [
            f("m.Q4_0.gguf"),
            f("m.fp16.gguf"),
            f("m.f16.gguf"),
            f("m.Q8_0.gguf"),
        ];
        assert_eq!(best_file(&files).unwrap().path, "m.fp16.gguf");
        assert_eq!(
            best_file(&[f("a.gguf"), f("b.gguf")]).unwrap().path,
            "a.gguf"
        );
    }

    #[test]
    fn download_urls_quote_the_path() {
        let c = Candidate {
            repo: "o/r".into(),
            arch: None,
            params: None,
            fits: [None; 3],
            downloads: 0,
            likes: 0,
            file: GgufFile {
                path: "sub dir/m+1.gguf".into(),
                size: 0,
                bpw: None,
            },
        };
        assert_eq!(
            c.download_url("http://h"),
            "http://h/o/r/resolve/main/sub%20dir/m%2B1.gguf"
        );
    }
}
