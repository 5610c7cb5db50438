//! HTTP plumbing shared by the finder and the downloader: one ureq agent per
//! use, proxies from the environment, statuses handled by the caller.

use std::time::Duration;

/// Hugging Face's public endpoint; `SSNAIL_HF_ENDPOINT` overrides it (a
/// mirror, or a loopback server in the tests).
pub const DEFAULT_HF_ENDPOINT: &str = "https://huggingface.co";

/// The endpoint to use: `SSNAIL_HF_ENDPOINT` if set and non-empty, else the
/// public one; never with a trailing slash.
pub fn hf_endpoint() -> String {
    let e = std::env::var("SSNAIL_HF_ENDPOINT")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_HF_ENDPOINT.to_string());
    e.trim().trim_end_matches('/').to_string()
}

/// True for URLs whose host is this machine; those never go through a proxy
/// (as with most HTTP tools, and so that tests on 127.0.0.1 work whatever
/// proxy the environment names).
fn is_loopback_url(url: &str) -> bool {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority
        .rsplit_once('@')
        .map(|(_, h)| h)
        .unwrap_or(authority);
    let host = if let Some(v6) = host.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host.split(':').next().unwrap_or("")
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .map(|ip| ip.is_loopback())
            .unwrap_or(false)
}

/// What kind of requests an agent makes.
pub enum Use {
    /// Small JSON API replies: whole-request timeout.
    Api { user_agent: &'static str },
    /// Large downloads: no overall limit, but a stalled connection fails.
    Download,
}

/// An agent for requests to `url`'s host. Proxies come from the environment
/// (ALL_PROXY, HTTPS_PROXY/https_proxy, HTTP_PROXY, NO_PROXY, as read by
/// ureq) except for loopback hosts. HTTP error statuses are returned as
/// responses, not errors, so callers can word them.
pub fn agent_for(url: &str, use_: Use) -> ureq::Agent {
    let proxy = if is_loopback_url(url) {
        None
    } else {
        ureq::Proxy::try_from_env()
    };
    let builder = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(proxy)
        .timeout_connect(Some(Duration::from_secs(30)));
    let config = match use_ {
        Use::Api { user_agent } => builder
            .user_agent(user_agent)
            .timeout_global(Some(Duration::from_secs(30)))
            .build(),
        Use::Download => builder
            .user_agent(concat!("ssnail-fetch/", env!("CARGO_PKG_VERSION")))
            .timeout_recv_response(Some(Duration::from_secs(60)))
            .timeout_per_read(Some(Duration::from_secs(60)))
            .build(),
    };
    config.into()
}

/// A ureq error as one short line (no debug dump).
pub fn describe(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Io(io) => io.to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_recognised() {
        assert!(is_loopback_url("http://127.0.0.1:8080/api"));
        assert!(is_loopback_url("http://localhost/x"));
        assert!(is_loopback_url("http://[::1]:99/"));
        assert!(is_loopback_url("http://user:pw@127.0.0.2:1/"));
        assert!(!is_loopback_url("https://huggingface.co/api/models"));
        assert!(!is_loopback_url("http://10.0.0.1/"));
    }
}
