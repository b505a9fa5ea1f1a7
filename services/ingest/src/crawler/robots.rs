//! robots.txt (through `texting_robots`) and sitemaps, per host, fetched once per run.

use std::io::Read;
use std::time::Duration;

use texting_robots::Robot;
use url::Url;
use zhiwen_core::canon::decode_char_refs;

use super::fetch::{fetch, FetchRules};
use crate::error::IngestError;

/// What robots.txt says for one host.
#[derive(Debug)]
pub enum Robots {
    /// No usable robots.txt (404 and other 4xx, unparsable): everything is allowed.
    AllowAll,
    /// The parsed rules for our agent.
    Rules(Box<Robot>),
    /// robots.txt could not be fetched (5xx, timeout): nothing on the host is fetched
    /// this run, as the robots exclusion protocol asks. The URLs skipped for it are
    /// queued again when the job runs next ([`UNAVAILABLE`]).
    Unavailable(String),
}

/// How the reason of a URL skipped because its host's robots.txt could not be read
/// begins (the frontier queues such URLs again at the job's next run).
pub const UNAVAILABLE: &str = "robots.txt unavailable";

impl Robots {
    /// Fetch and parse the robots.txt of `url`'s origin.
    pub async fn fetch(
        client: &reqwest::Client,
        url: &Url,
        rules: &FetchRules,
        token: &str,
    ) -> Result<Robots, IngestError> {
        let mut robots_url = url.clone();
        robots_url.set_path("/robots.txt");
        robots_url.set_query(None);
        let rules = FetchRules {
            pages_only: false,
            max_body_bytes: 512 * 1024,
            max_retries: rules.max_retries.min(1),
            ..rules.clone()
        };
        match fetch(client, &robots_url, &rules, |_| async { Ok(()) }).await {
            Ok(f) => Ok(match Robot::new(token, &f.body) {
                Ok(r) => Robots::Rules(Box::new(r)),
                Err(_) => Robots::AllowAll,
            }),
            Err(IngestError::Fetch { reason, retryable: false, .. }) if reason.starts_with("HTTP 4") => {
                Ok(Robots::AllowAll)
            }
            Err(e @ IngestError::Forbidden { .. }) => Err(e),
            Err(e) => Ok(Robots::Unavailable(e.to_string())),
        }
    }

    /// May `url` be fetched?
    pub fn check(&self, url: &Url) -> Result<(), String> {
        match self {
            Robots::AllowAll => Ok(()),
            Robots::Rules(r) => {
                if r.allowed(url.as_str()) {
                    Ok(())
                } else {
                    Err("disallowed by robots.txt".into())
                }
            }
            Robots::Unavailable(why) => Err(format!("{UNAVAILABLE} ({why})")),
        }
    }

    /// The `Crawl-delay` asked for, capped at a minute.
    pub fn crawl_delay(&self) -> Option<Duration> {
        match self {
            Robots::Rules(r) => {
                r.delay.filter(|d| d.is_finite() && *d > 0.0).map(|d| Duration::from_secs_f32(d.min(60.0)))
            }
            _ => None,
        }
    }

    /// Sitemaps named by `Sitemap:` lines.
    pub fn sitemaps(&self) -> Vec<String> {
        match self {
            Robots::Rules(r) => r.sitemaps.clone(),
            _ => Vec::new(),
        }
    }
}

/// URLs listed by a sitemap document: `(page URLs, child sitemap URLs)` for a
/// `<sitemapindex>`, or a plain-text list. Gzipped sitemaps are inflated (capped).
pub fn parse_sitemap(body: &[u8]) -> (Vec<String>, Vec<String>) {
    let inflated;
    let body = if body.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let _ = flate2::read::MultiGzDecoder::new(body).take(32 << 20).read_to_end(&mut out);
        inflated = out;
        &inflated[..]
    } else {
        body
    };
    let text = String::from_utf8_lossy(body);
    if !text.contains('<') {
        let urls = text.lines().map(str::trim).filter(|l| l.starts_with("http")).map(str::to_owned).collect();
        return (urls, Vec::new());
    }
    let is_index = text.to_ascii_lowercase().contains("<sitemapindex");
    let mut locs = Vec::new();
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(p) = lower[from..].find("<loc") {
        let at = from + p;
        let Some(gt) = lower[at..].find('>') else { break };
        let start = at + gt + 1;
        let Some(end) = lower[start..].find("</loc").map(|e| start + e) else { break };
        let raw = text[start..end].trim();
        let raw = raw.strip_prefix("<![CDATA[").and_then(|r| r.strip_suffix("]]>")).unwrap_or(raw);
        locs.push(decode_char_refs(raw.trim()).into_owned());
        from = end;
    }
    if is_index {
        (Vec::new(), locs)
    } else {
        (locs, Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sitemaps_and_indexes() {
        let (p, c) = parse_sitemap(b"<?xml version=\"1.0\"?><urlset><url><loc> http://a/1?x=1&amp;y=2 </loc></url><url><LOC>http://a/2</LOC></url></urlset>");
        assert_eq!(p, vec!["http://a/1?x=1&y=2", "http://a/2"]);
        assert!(c.is_empty());
        let (p, c) = parse_sitemap(b"<sitemapindex><sitemap><loc>http://a/s1.xml</loc></sitemap></sitemapindex>");
        assert!(p.is_empty());
        assert_eq!(c, vec!["http://a/s1.xml"]);
        let (p, _) = parse_sitemap(b"http://a/x\nhttp://a/y\n");
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn robots_rules_apply() {
        let r = Robots::Rules(Box::new(
            Robot::new("zhiwen", b"User-agent: *\nDisallow: /vip/\nCrawl-delay: 2\nSitemap: http://a/s.xml\n").unwrap(),
        ));
        assert!(r.check(&Url::parse("http://a/vip/1.html").unwrap()).is_err());
        assert!(r.check(&Url::parse("http://a/book/1.html").unwrap()).is_ok());
        assert_eq!(r.crawl_delay(), Some(Duration::from_secs(2)));
        assert_eq!(r.sitemaps(), vec!["http://a/s.xml"]);
    }
}
