//! Downloads that survive interruptions: bytes go to `FILE.part`, a later
//! run asks for the rest with a Range request, the size is checked against
//! Content-Length / Content-Range, and only a complete file is renamed to
//! `FILE`. An HTTP error leaves no `FILE` (and keeps an earlier `.part`).

use crate::http::{self, Use};
use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// What a finished download did.
#[derive(Debug, PartialEq, Eq)]
pub struct Fetched {
    pub path: PathBuf,
    pub bytes: u64,
    /// Bytes that were already in the `.part` file and not downloaded again.
    pub resumed_from: u64,
}

/// The file name a URL downloads to: its last path component, %-decoded
/// (`curl -O` rules, without query or fragment).
pub fn file_name_from_url(url: &str) -> Option<String> {
    let no_frag = url.split('#').next().unwrap_or(url);
    let no_query = no_frag.split('?').next().unwrap_or(no_frag);
    let path = no_query
        .split_once("://")
        .map(|(_, r)| r)
        .unwrap_or(no_query);
    let (_, path) = path.split_once('/')?;
    let last = path.rsplit('/').next()?;
    let name = percent_encoding::percent_decode_str(last)
        .decode_utf8()
        .ok()?
        .to_string();
    let ok = !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\']);
    ok.then_some(name)
}

/// `FILE.part`, beside `FILE`.
pub fn part_path(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".part");
    out.with_file_name(name)
}

/// `Content-Range: bytes START-END/TOTAL` → (START, TOTAL); TOTAL may be `*`.
fn parse_content_range(v: &str) -> Option<(Option<u64>, Option<u64>)> {
    let rest = v.trim().strip_prefix("bytes")?.trim();
    let (range, total) = rest.split_once('/')?;
    let total = total.trim().parse().ok();
    let start = if range.trim() == "*" {
        None
    } else {
        Some(range.split_once('-')?.0.trim().parse().ok()?)
    };
    Some((start, total))
}

fn header<'a>(resp: &'a ureq::http::Response<ureq::Body>, name: &str) -> Option<&'a str> {
    resp.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Download `url` to `out`, resuming `out.part` if it exists. `progress`
/// shows a bar on stderr (callers pass whether stderr is a terminal).
pub fn fetch(url: &str, out: &Path, progress: bool) -> Result<Fetched> {
    let part = part_path(out);
    let have = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
    let agent = http::agent_for(url, Use::Download);
    let mut req = agent.get(url);
    if have > 0 {
        req = req.header("Range", format!("bytes={have}-"));
    }
    let resp = req
        .call()
        .map_err(|e| anyhow::anyhow!("{url}: {}", http::describe(&e)))?;
    let status = resp.status().as_u16();

    // 416: nothing left past what we have. If the server's total equals the
    // part's length the earlier run had finished all but the rename.
    if status == 416 && have > 0 {
        let total = header(&resp, "content-range")
            .and_then(parse_content_range)
            .and_then(|(_, t)| t);
        if total == Some(have) {
            finish(&part, out, url)?;
            return Ok(Fetched {
                path: out.to_path_buf(),
                bytes: have,
                resumed_from: have,
            });
        }
        bail!(
            "{url}: the server refused to resume {} at byte {have}{}; delete it to start again",
            part.display(),
            total
                .map(|t| format!(" (file has {t} bytes)"))
                .unwrap_or_default()
        );
    }
    if !(200..300).contains(&status) {
        let reason = resp.status().canonical_reason().unwrap_or("error");
        bail!("{url}: HTTP {status} {reason}; nothing written");
    }

    // Where the body starts and how long the whole file is.
    let length = header(&resp, "content-length").and_then(|v| v.trim().parse::<u64>().ok());
    let (start, total) = if status == 206 {
        let (start, total) = header(&resp, "content-range")
            .and_then(parse_content_range)
            .context(format!(
                "{url}: partial reply without a usable Content-Range"
            ))?;
        let start = start.context(format!("{url}: partial reply without a start offset"))?;
        if start != have {
            bail!("{url}: asked to resume at byte {have}, the server sent from byte {start}");
        }
        (start, total.or(length.map(|l| start + l)))
    } else {
        // A full reply (the server ignored or was not sent a Range).
        (0, length)
    };

    let mut file = if start > 0 {
        OpenOptions::new()
            .append(true)
            .open(&part)
            .with_context(|| format!("{}: cannot open to resume", part.display()))?
    } else {
        File::create(&part).with_context(|| format!("{}: cannot create", part.display()))?
    };

    let bar = if progress {
        let bar = match total {
            Some(t) => indicatif::ProgressBar::new(t),
            None => indicatif::ProgressBar::no_length(),
        };
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .unwrap(),
        );
        bar.set_position(start);
        // The rate counts only what this run downloads.
        bar.reset_eta();
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };

    let mut body = resp.into_body().into_reader();
    let mut got = start;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match body.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                file.flush().ok();
                bar.abandon();
                bail!(
                    "{url}: transfer interrupted after {got}{} bytes ({e}); run the same command again to resume",
                    total.map(|t| format!(" of {t}")).unwrap_or_default()
                );
            }
        };
        file.write_all(&buf[..n])
            .with_context(|| format!("{}: write failed", part.display()))?;
        got += n as u64;
        bar.set_position(got);
    }
    bar.finish_and_clear();
    file.sync_all()
        .with_context(|| format!("{}: cannot flush", part.display()))?;
    drop(file);

    if let Some(t) = total {
        if got != t {
            bail!(
                "{url}: got {got} of {t} bytes; run the same command again to resume ({} kept)",
                part.display()
            );
        }
    }
    finish(&part, out, url)?;
    Ok(Fetched {
        path: out.to_path_buf(),
        bytes: got,
        resumed_from: start,
    })
}

/// What a file named `.gguf` or `.safetensors` must start with, checked
/// before the download becomes `FILE`: a server's HTML error page (or any
/// other reply) is not saved under a model's name. The bad `.part` is
/// removed, so a later run does not resume it.
fn check_magic(part: &Path, out: &Path, url: &str) -> Result<()> {
    let ext = out
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let kind = match ext.as_str() {
        "gguf" => "a GGUF file",
        "safetensors" => "a safetensors file",
        _ => return Ok(()),
    };
    let mut head = Vec::new();
    let len = std::fs::metadata(part).map(|m| m.len()).unwrap_or(0);
    File::open(part)
        .and_then(|f| f.take(4096).read_to_end(&mut head))
        .with_context(|| format!("{}: cannot read back", part.display()))?;
    let ok = match ext.as_str() {
        "gguf" => head.starts_with(b"GGUF"),
        // safetensors: an 8-byte little-endian header length, then JSON.
        _ => {
            head.len() > 8
                && head[8] == b'{'
                && u64::from_le_bytes(head[..8].try_into().unwrap_or_default())
                    .checked_add(8)
                    .is_some_and(|end| end <= len)
        }
    };
    if ok {
        return Ok(());
    }
    let shown: String = String::from_utf8_lossy(&head[..head.len().min(40)])
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let _ = std::fs::remove_file(part);
    bail!(
        "{url}: the server sent something that is not {kind} (it begins \"{}\"); nothing written",
        shown.trim()
    )
}

fn finish(part: &Path, out: &Path, url: &str) -> Result<()> {
    check_magic(part, out, url)?;
    std::fs::rename(part, out)
        .with_context(|| format!("cannot rename {} to {}", part.display(), out.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_urls() {
        assert_eq!(
            file_name_from_url("https://h/o/r/resolve/main/m.fp16.gguf?download=true").as_deref(),
            Some("m.fp16.gguf")
        );
        assert_eq!(
            file_name_from_url("http://h/a/sub%20dir/m%2B1.gguf").as_deref(),
            Some("m+1.gguf")
        );
        assert_eq!(file_name_from_url("http://h/"), None);
        assert_eq!(file_name_from_url("http://h"), None);
        assert_eq!(file_name_from_url("http://h/a/%2F"), None);
    }

    #[test]
    fn content_ranges() {
        assert_eq!(
            parse_content_range("bytes 100-199/200"),
            Some((Some(100), Some(200)))
        );
        assert_eq!(parse_content_range("bytes */200"), Some((None, Some(200))));
        assert_eq!(parse_content_range("bytes 5-9/*"), Some((Some(5), None)));
        assert_eq!(parse_content_range("items 1-2/3"), None);
    }

    #[test]
    fn part_files_sit_beside_the_output() {
        assert_eq!(
            part_path(Path::new("/x/y/m.gguf")),
            PathBuf::from("/x/y/m.gguf.part")
        );
    }
}
