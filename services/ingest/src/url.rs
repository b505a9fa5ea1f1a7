//! URL normalisation: one spelling per page, so that pages are deduplicated by URL and
//! the crawler never fetches the same page under two names.
//!
//! Scheme and host are lower-cased (IDN hosts become punycode), default ports, fragments
//! and empty queries are dropped, tracking parameters (`utm_*`, `gclid`, `spm`...) are
//! removed and the remaining query parameters are sorted (their encoding is kept as it
//! was: `a%20b` and `a+b` stay distinct, as servers may treat them differently).

use url::Url;

use crate::error::IngestError;

/// Query parameters that only track the visitor and never select content.
const TRACKING_EXACT: &[&str] =
    &["gclid", "fbclid", "msclkid", "yclid", "dclid", "spm", "_hsenc", "_hsmi", "mc_cid", "mc_eid", "igshid"];

fn is_tracking(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.starts_with("utm_") || TRACKING_EXACT.contains(&key.as_str())
}

/// Parse and normalise an absolute `http`/`https` URL.
pub fn normalize(input: &str) -> Result<Url, IngestError> {
    let bad = |reason: &str| IngestError::Url { url: input.chars().take(300).collect(), reason: reason.to_owned() };
    let url = Url::parse(input.trim()).map_err(|e| bad(&format!("not a valid URL: {e}")))?;
    normalize_parsed(url).map_err(bad)
}

/// Resolve `href` against `base` and normalise; `None` for links that are not crawlable
/// pages (`mailto:`, `javascript:`, other schemes, unparsable).
pub fn resolve(base: &Url, href: &str) -> Option<Url> {
    let href = href.trim();
    if href.is_empty() || href.starts_with('#') {
        return None;
    }
    let url = base.join(href).ok()?;
    normalize_parsed(url).ok()
}

fn normalize_parsed(mut url: Url) -> Result<Url, &'static str> {
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err("only http and https URLs are supported");
    }
    let host = match url.host_str() {
        Some(h) if !h.is_empty() => h.to_owned(),
        _ => return Err("the URL has no host"),
    };
    // Every trailing dot goes (`a.b..` is `a.b`), so normalising twice changes nothing
    // (found by the `url` fuzz target: stripping one dot was not idempotent).
    let stripped = host.trim_end_matches('.');
    if stripped.len() != host.len() && !stripped.is_empty() && url.set_host(Some(stripped)).is_err() {
        return Err("the URL's host is invalid");
    }
    if !url.username().is_empty() || url.password().is_some() {
        // Credentials in a crawled URL are never wanted, and would leak into the store.
        let _ = url.set_username("");
        let _ = url.set_password(None);
    }
    url.set_fragment(None);
    let query = url.query().map(|q| {
        let mut pairs: Vec<&str> = q
            .split('&')
            .filter(|p| !p.is_empty())
            .filter(|p| !is_tracking(p.split('=').next().unwrap_or("")))
            .collect();
        pairs.sort_unstable();
        pairs.join("&")
    });
    match query {
        Some(q) if !q.is_empty() => url.set_query(Some(&q)),
        _ => url.set_query(None),
    }
    Ok(url)
}

/// The host a politeness budget is kept for: host plus explicit port.
pub fn host_key(url: &Url) -> String {
    match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_owned(),
        _ => String::new(),
    }
}

/// Is `host` one of `domains` or a subdomain of one of them?
pub fn in_domains(host: &str, domains: &[String]) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    domains.iter().any(|d| {
        let d = d.trim_start_matches("*.").trim_end_matches('.').to_ascii_lowercase();
        host == d || host.strip_suffix(&d).is_some_and(|rest| rest.ends_with('.'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_dots_of_the_host_all_go_and_normalising_is_idempotent() {
        // The `url` fuzz target's finding: `a...` became `a..`, then `a.`.
        for input in ["https:/@a.../c.html?b=2&iDps;", "http://example.com../x", "http://example.com./x"] {
            let once = normalize(input).unwrap();
            assert_eq!(normalize(once.as_str()).unwrap(), once, "{input}");
            assert!(!once.host_str().unwrap().ends_with('.'), "{once}");
        }
    }

    #[test]
    fn normalises_case_ports_fragments_and_tracking() {
        let u = normalize("HTTP://Example.COM:80/a/b?utm_source=x&b=2&a=1#frag").unwrap();
        assert_eq!(u.as_str(), "http://example.com/a/b?a=1&b=2");
        let u = normalize("https://example.com:443").unwrap();
        assert_eq!(u.as_str(), "https://example.com/");
        let u = normalize("https://example.com:8443/x?utm_medium=a").unwrap();
        assert_eq!(u.as_str(), "https://example.com:8443/x");
        let u = normalize("http://user:pw@example.com./p?spm=1.2&q=%E4%B8%AD").unwrap();
        assert_eq!(u.as_str(), "http://example.com/p?q=%E4%B8%AD");
    }

    #[test]
    fn refuses_other_schemes() {
        assert!(normalize("ftp://example.com/").is_err());
        assert!(normalize("javascript:alert(1)").is_err());
        assert!(normalize("not a url").is_err());
        let base = normalize("http://example.com/dir/page.html").unwrap();
        assert_eq!(resolve(&base, "../x.html#a").unwrap().as_str(), "http://example.com/x.html");
        assert!(resolve(&base, "mailto:a@b.c").is_none());
        assert!(resolve(&base, "#top").is_none());
    }

    #[test]
    fn domains_match_subdomains_only() {
        let d = vec!["example.com".to_owned()];
        assert!(in_domains("example.com", &d));
        assert!(in_domains("www.example.com", &d));
        assert!(!in_domains("badexample.com", &d));
        assert!(!in_domains("example.com.evil.org", &d));
    }
}
