//! Watched sites: the sites a holder asks zhiwen to re-visit on a schedule (pirate
//! sites that post new chapters often), their entry points (index and category pages,
//! sitemaps, RSS/Atom feeds), the link patterns of their chapter pages, a politeness
//! budget, and per entry point the state of its schedule (last and next visit, the
//! validators of conditional requests, how often a visit found something new).
//!
//! A watched site is a small document read and written whole, kept like the other case
//! documents ([`crate::CaseStore`], kind [`DocKind::WatchedSite`]): keyed by its id (by
//! default the normalised host of its entry points), with a version for compare-and-set
//! updates. The schedule itself (when to visit, how the interval adapts) is the
//! ingest's; the store keeps what it decided, so a restart continues the schedule.

use serde::{Deserialize, Serialize};

use crate::cases::DocKind;
use crate::codec::normalize_url;
use crate::model::Timestamp;
use crate::traits::StoreResult;
use crate::StoreError;

/// Most entry points of one watched site.
pub const MAX_ENTRY_POINTS: usize = 50;
/// Most holders one watched site concerns.
pub const MAX_HOLDERS: usize = 50;
/// Most chapter link patterns of one watched site.
pub const MAX_CHAPTER_PATTERNS: usize = 20;
/// Longest chapter link pattern, in bytes.
pub const MAX_PATTERN_BYTES: usize = 500;
/// Smallest politeness budget, in seconds between two requests to the host.
pub const MIN_POLITENESS_SECS: u64 = 1;
/// Largest politeness budget accepted (a day).
pub const MAX_POLITENESS_SECS: u64 = 86_400;
/// Most pages of one visit kept for the next visit's look for copies.
pub const MAX_RECENT_PAGES: usize = 200;

/// What a holder asks to watch: the input of
/// [`CaseStore::put_watched_site`](crate::CaseStore::put_watched_site).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewWatchedSite {
    /// Id; `None`: the normalised host of the entry points (`host` or `host:port`).
    #[serde(default)]
    pub id: Option<String>,
    /// The holder it concerns.
    pub owner: String,
    /// Entry points: index and category pages, sitemaps, RSS/Atom feeds, all on one host.
    pub entry_points: Vec<String>,
    /// Regular expressions a chapter link (its whole URL) must match; empty: every link
    /// on the host is a candidate.
    #[serde(default)]
    pub chapter_patterns: Vec<String>,
    /// Politeness budget: least seconds between two requests to the host (robots.txt
    /// `Crawl-delay` may raise it); `None`: the deployment's default.
    #[serde(default)]
    pub min_delay_secs: Option<u64>,
}

/// The schedule state of one entry point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryPoint {
    /// Its URL, normalised.
    pub url: String,
    /// The last visit (`None`: never visited).
    #[serde(default)]
    pub last_visit: Option<Timestamp>,
    /// When it is due next (a new entry point is due at once).
    pub next_visit: Timestamp,
    /// The current interval between two visits, in seconds (0: not set yet).
    #[serde(default)]
    pub interval_secs: u64,
    /// `ETag` of the last full answer, sent back as `If-None-Match`.
    #[serde(default)]
    pub etag: Option<String>,
    /// `Last-Modified` of the last full answer, sent back as `If-Modified-Since`.
    #[serde(default)]
    pub last_modified: Option<String>,
    /// Visits made.
    #[serde(default)]
    pub visits: u64,
    /// Visits answered `304 Not Modified`.
    #[serde(default)]
    pub not_modified: u64,
    /// Visits that found links not stored before.
    #[serde(default)]
    pub visits_with_new: u64,
    /// Visits that found copies: the pages the visit before stored were matched since.
    #[serde(default)]
    pub visits_with_copies: u64,
    /// The pages the last visit stored (at most [`MAX_RECENT_PAGES`]): the next visit
    /// looks for their matches.
    #[serde(default)]
    pub recent_pages: Vec<i64>,
    /// What the last visit saw (`304`, `200: 3 new`, an error).
    #[serde(default)]
    pub last_outcome: Option<String>,
}

impl EntryPoint {
    /// A new entry point, due at once.
    fn new(url: String) -> Self {
        EntryPoint {
            url,
            last_visit: None,
            next_visit: Timestamp(0),
            interval_secs: 0,
            etag: None,
            last_modified: None,
            visits: 0,
            not_modified: 0,
            visits_with_new: 0,
            visits_with_copies: 0,
            recent_pages: Vec::new(),
            last_outcome: None,
        }
    }
}

/// A watched site as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchedSite {
    /// Id (by default its host).
    pub id: String,
    /// The holder who added it (the first of [`WatchedSite::holders`]).
    pub owner: String,
    /// Every holder it concerns, `owner` first: another holder who adds the same host
    /// joins the site instead of watching it twice. (A record written before holders
    /// were kept has none: its owner alone, see [`WatchedSite::concerns`].)
    #[serde(default)]
    pub holders: Vec<String>,
    /// The normalised host of its entry points (`host` or `host:port`): chapter links are
    /// followed on this host only.
    pub host: String,
    /// Entry points with their schedule state.
    pub entry_points: Vec<EntryPoint>,
    /// Chapter link patterns (regular expressions over the whole URL).
    #[serde(default)]
    pub chapter_patterns: Vec<String>,
    /// Politeness budget in seconds (`None`: the deployment's default).
    #[serde(default)]
    pub min_delay_secs: Option<u64>,
    /// When it was first added.
    pub created_at: Timestamp,
    /// Last change of its definition (not of its schedule).
    pub updated_at: Timestamp,
    /// Who made that change.
    pub updated_by: String,
    /// Version (compare-and-set; 0: never stored).
    #[serde(default)]
    pub version: u64,
}

impl WatchedSite {
    /// Whether the site concerns `holder`.
    pub fn concerns(&self, holder: &str) -> bool {
        self.owner == holder || self.holders.iter().any(|h| h == holder)
    }

    /// The holders it concerns, `owner` first.
    pub fn all_holders(&self) -> Vec<String> {
        let mut all = vec![self.owner.clone()];
        all.extend(self.holders.iter().filter(|h| **h != self.owner).cloned());
        all
    }
}

/// What [`CaseStore::leave_watched_site`](crate::CaseStore::leave_watched_site) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Left {
    /// The holder left; the site stays watched for the others.
    Left,
    /// It was the last holder: the site is no longer watched.
    Deleted,
    /// The site does not concern the holder (or does not exist).
    NotWatched,
}

/// What one visit of an entry point saw, as the watch pass records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visit {
    /// When it was made.
    pub at: Timestamp,
    /// The interval until the next visit, in seconds (decided by the watch pass).
    pub interval_secs: u64,
    /// The answer was `304 Not Modified`.
    pub not_modified: bool,
    /// Links not stored before that it found.
    pub new_links: u64,
    /// The pages the visit before stored have been matched since (copies found).
    pub copies: bool,
    /// The pages this visit stored (the next visit looks for their matches).
    pub pages: Vec<i64>,
    /// The validators to send next time (ignored after a 304, which keeps the stored
    /// ones; `None` clears).
    pub etag: Option<String>,
    /// See [`Visit::etag`].
    pub last_modified: Option<String>,
    /// Short description of the outcome.
    pub outcome: String,
}

/// The host key of a URL (`host` or `host:port`, lower-case, default port dropped) and
/// the URL normalised.
pub fn watched_host(url: &str) -> StoreResult<(String, String)> {
    let (normalized, _) = normalize_url(url)?;
    let rest = normalized.split_once("://").map_or("", |(_, r)| r);
    let host = rest.split(['/', '?']).next().unwrap_or("").to_owned();
    Ok((host, normalized))
}

/// A [`NewWatchedSite`] checked: its id, host and entry points normalised.
#[derive(Debug, Clone)]
pub(crate) struct CheckedSite {
    pub(crate) id: String,
    host: String,
    urls: Vec<String>,
}

/// Check `new` and build the stored record from it and `current` (the stored one, if
/// any): entry points kept keep their schedule state; new ones are due at once.
#[cfg(test)]
pub(crate) fn merge_site(
    new: &NewWatchedSite,
    current: Option<&WatchedSite>,
    by: &str,
    at: Timestamp,
) -> StoreResult<WatchedSite> {
    merge_checked(&check_site(new)?, new, current, by, at)
}

/// Check `new` (owner, entry points on one host, id, chapter patterns compiled once,
/// politeness budget), without the stored record: what does not change between two
/// attempts of a compare-and-set.
pub(crate) fn check_site(new: &NewWatchedSite) -> StoreResult<CheckedSite> {
    if new.owner.trim().is_empty() || new.owner.len() > 200 {
        return Err(StoreError::invalid("watched site owner", "1 to 200 bytes"));
    }
    if new.entry_points.is_empty() || new.entry_points.len() > MAX_ENTRY_POINTS {
        return Err(StoreError::invalid("entry points", format!("1 to {MAX_ENTRY_POINTS}")));
    }
    let mut host: Option<String> = None;
    let mut urls: Vec<String> = Vec::new();
    for e in &new.entry_points {
        let (h, url) = watched_host(e)?;
        match &host {
            Some(first) if *first != h => {
                return Err(StoreError::invalid(
                    "entry points",
                    format!("all must be on one host: {first} and {h} differ"),
                ))
            }
            Some(_) => {}
            None => host = Some(h),
        }
        if !urls.contains(&url) {
            urls.push(url);
        }
    }
    let host = host.unwrap_or_default();
    let id = match &new.id {
        Some(id) => {
            let id = id.trim();
            if id.is_empty() || id.len() > 200 || id.chars().any(|c| c.is_control() || c == '/') {
                return Err(StoreError::invalid("watched site id", "1 to 200 bytes, no '/' or control characters"));
            }
            id.to_owned()
        }
        None => host.clone(),
    };
    if new.chapter_patterns.len() > MAX_CHAPTER_PATTERNS {
        return Err(StoreError::invalid("chapter patterns", format!("at most {MAX_CHAPTER_PATTERNS}")));
    }
    for p in &new.chapter_patterns {
        if p.is_empty() || p.len() > MAX_PATTERN_BYTES {
            return Err(StoreError::invalid("chapter pattern", format!("1 to {MAX_PATTERN_BYTES} bytes")));
        }
        regex::RegexBuilder::new(p)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| StoreError::invalid("chapter pattern", format!("{p:?}: {e}")))?;
    }
    if let Some(d) = new.min_delay_secs {
        if !(MIN_POLITENESS_SECS..=MAX_POLITENESS_SECS).contains(&d) {
            return Err(StoreError::invalid(
                "politeness budget",
                format!("{MIN_POLITENESS_SECS} to {MAX_POLITENESS_SECS} seconds"),
            ));
        }
    }
    Ok(CheckedSite { id, host, urls })
}

/// The stored record of the checked site `checked` (from `new`) over `current`: entry
/// points kept keep their schedule state; new ones are due at once.
pub(crate) fn merge_checked(
    checked: &CheckedSite,
    new: &NewWatchedSite,
    current: Option<&WatchedSite>,
    by: &str,
    at: Timestamp,
) -> StoreResult<WatchedSite> {
    let CheckedSite { id, host, urls } = checked.clone();
    if let Some(c) = current {
        if c.host != host {
            return Err(StoreError::Conflict {
                what: format!("watched site {id}"),
                reason: format!("it watches {}, not {host}", c.host),
            });
        }
        // A site shared by holders is only ever added to: one holder's update never drops
        // what another asked for.
        if !c.concerns(&new.owner) || c.all_holders().len() > 1 {
            return join(c, checked, new, by, at);
        }
    }
    let entry_points = urls
        .into_iter()
        .map(|url| {
            current
                .and_then(|c| c.entry_points.iter().find(|e| e.url == url))
                .cloned()
                .unwrap_or_else(|| EntryPoint::new(url))
        })
        .collect();
    Ok(WatchedSite {
        id,
        owner: current.map_or_else(|| new.owner.clone(), |c| c.owner.clone()),
        holders: current.map_or_else(|| vec![new.owner.clone()], WatchedSite::all_holders),
        host,
        entry_points,
        chapter_patterns: new.chapter_patterns.clone(),
        min_delay_secs: new.min_delay_secs,
        created_at: current.map_or(at, |c| c.created_at),
        updated_at: at,
        updated_by: by.to_owned(),
        version: current.map_or(0, |c| c.version),
    })
}

/// `current` joined by the holder of `new` (a holder it did not concern yet, or one of
/// several): the definition becomes what all asked for, and nothing any asked for is
/// dropped: the
/// entry points of both (the kept ones keep their schedule), the chapter patterns of
/// both (none on either side: every link, as that side asked), the longer politeness
/// budget.
fn join(
    current: &WatchedSite,
    checked: &CheckedSite,
    new: &NewWatchedSite,
    by: &str,
    at: Timestamp,
) -> StoreResult<WatchedSite> {
    let mut holders = current.all_holders();
    if !holders.contains(&new.owner) {
        holders.push(new.owner.clone());
    }
    if holders.len() > MAX_HOLDERS {
        return Err(StoreError::invalid("watched site holders", format!("at most {MAX_HOLDERS}")));
    }
    let mut entry_points = current.entry_points.clone();
    for url in &checked.urls {
        if !entry_points.iter().any(|e| e.url == *url) {
            entry_points.push(EntryPoint::new(url.clone()));
        }
    }
    if entry_points.len() > MAX_ENTRY_POINTS {
        return Err(StoreError::invalid("entry points", format!("1 to {MAX_ENTRY_POINTS} over all its holders")));
    }
    let chapter_patterns = if current.chapter_patterns.is_empty() || new.chapter_patterns.is_empty() {
        Vec::new()
    } else {
        let mut all = current.chapter_patterns.clone();
        all.extend(new.chapter_patterns.iter().filter(|p| !current.chapter_patterns.contains(p)).cloned());
        if all.len() > MAX_CHAPTER_PATTERNS {
            return Err(StoreError::invalid(
                "chapter patterns",
                format!("at most {MAX_CHAPTER_PATTERNS} over all its holders"),
            ));
        }
        all
    };
    Ok(WatchedSite {
        holders,
        entry_points,
        chapter_patterns,
        min_delay_secs: current.min_delay_secs.max(new.min_delay_secs),
        updated_at: at,
        updated_by: by.to_owned(),
        ..current.clone()
    })
}

/// `site` without `holder` (the next holder becomes its owner); `None` when no holder is
/// left or it did not concern `holder`.
pub(crate) fn without_holder(site: &WatchedSite, holder: &str, by: &str, at: Timestamp) -> Option<WatchedSite> {
    let rest: Vec<String> = site.all_holders().into_iter().filter(|h| h != holder).collect();
    let owner = rest.first()?.clone();
    Some(WatchedSite { owner, holders: rest, updated_at: at, updated_by: by.to_owned(), ..site.clone() })
}

/// Apply `visit` to the entry point `url` of `site`; `false` when it has no such entry
/// point (removed meanwhile).
pub(crate) fn apply_visit(site: &mut WatchedSite, url: &str, visit: &Visit) -> bool {
    let Some(e) = site.entry_points.iter_mut().find(|e| e.url == url) else { return false };
    e.visits += 1;
    e.last_visit = Some(visit.at);
    e.interval_secs = visit.interval_secs;
    e.next_visit = Timestamp(visit.at.0.saturating_add((visit.interval_secs as i64).saturating_mul(1000)));
    if visit.not_modified {
        e.not_modified += 1;
    }
    if visit.new_links > 0 {
        e.visits_with_new += 1;
    }
    if visit.copies {
        e.visits_with_copies += 1;
    }
    e.recent_pages = visit.pages.iter().copied().take(MAX_RECENT_PAGES).collect();
    if !visit.not_modified {
        e.etag = visit.etag.clone().filter(|v| !v.is_empty());
        e.last_modified = visit.last_modified.clone().filter(|v| !v.is_empty());
    }
    e.last_outcome = Some(visit.outcome.chars().take(500).collect());
    true
}

/// The document kind of watched sites.
pub(crate) const KIND: DocKind = DocKind::WatchedSite;

#[cfg(test)]
mod tests {
    use super::*;

    fn new(urls: &[&str]) -> NewWatchedSite {
        NewWatchedSite {
            id: None,
            owner: "o".into(),
            entry_points: urls.iter().map(|u| u.to_string()).collect(),
            chapter_patterns: vec![r"/book/\d+\.html$".into()],
            min_delay_secs: Some(2),
        }
    }

    #[test]
    fn merge_keys_by_host_and_keeps_schedules() {
        let s = merge_site(
            &new(&["HTTP://Pirate.example/index.html", "http://pirate.example/feed.xml"]),
            None,
            "o",
            Timestamp(5),
        )
        .unwrap();
        assert_eq!((s.id.as_str(), s.host.as_str(), s.entry_points.len()), ("pirate.example", "pirate.example", 2));
        let mut s = s;
        let visit = Visit {
            at: Timestamp(10_000),
            interval_secs: 60,
            not_modified: false,
            new_links: 2,
            copies: false,
            pages: vec![7],
            etag: Some("\"a\"".into()),
            last_modified: None,
            outcome: "200".into(),
        };
        assert!(apply_visit(&mut s, "http://pirate.example/feed.xml", &visit));
        assert_eq!(s.entry_points[1].next_visit, Timestamp(70_000));
        let again = merge_site(
            &new(&["http://pirate.example/feed.xml", "http://pirate.example/new"]),
            Some(&s),
            "o",
            Timestamp(9),
        )
        .unwrap();
        assert_eq!(again.entry_points[0].etag.as_deref(), Some("\"a\""));
        assert_eq!(again.entry_points[1].visits, 0);
        assert_eq!(again.created_at, Timestamp(5));
        // Another holder joins: both definitions, nothing dropped, the longer politeness.
        let mut other = new(&["http://pirate.example/x"]);
        other.owner = "b".into();
        other.chapter_patterns = vec![r"/read/\d+$".into()];
        other.min_delay_secs = Some(5);
        let joined = merge_site(&other, Some(&s), "b", Timestamp(9)).unwrap();
        assert_eq!((joined.owner.as_str(), joined.holders.clone()), ("o", vec!["o".to_string(), "b".to_string()]));
        assert_eq!(joined.entry_points.len(), 3);
        assert_eq!(joined.entry_points[1].next_visit, Timestamp(70_000), "kept entry points keep their schedule");
        assert_eq!(joined.chapter_patterns.len(), 2);
        assert_eq!(joined.min_delay_secs, Some(5));
        assert!(joined.concerns("b") && joined.concerns("o") && !joined.concerns("c"));
        // No patterns on one side: every link, as that holder asked.
        other.chapter_patterns.clear();
        assert!(merge_site(&other, Some(&s), "b", Timestamp(9)).unwrap().chapter_patterns.is_empty());
        // One holder leaves, then the last.
        let left = without_holder(&joined, "o", "o", Timestamp(10)).unwrap();
        assert_eq!((left.owner.as_str(), left.holders.as_slice()), ("b", &["b".to_string()][..]));
        assert!(without_holder(&left, "b", "b", Timestamp(11)).is_none());
        // An id names one host: entry points elsewhere are refused.
        let elsewhere = NewWatchedSite { id: Some("pirate.example".into()), ..new(&["http://other.example/"]) };
        assert!(matches!(merge_site(&elsewhere, Some(&s), "o", Timestamp(9)), Err(StoreError::Conflict { .. })));
    }

    #[test]
    fn bad_input_is_refused() {
        for bad in [
            new(&[]),
            new(&["ftp://x/"]),
            new(&["http://a.example/", "http://b.example/"]),
            NewWatchedSite { chapter_patterns: vec!["(".into()], ..new(&["http://a.example/"]) },
            NewWatchedSite { min_delay_secs: Some(0), ..new(&["http://a.example/"]) },
            NewWatchedSite { id: Some("a/b".into()), ..new(&["http://a.example/"]) },
        ] {
            assert!(
                matches!(merge_site(&bad, None, "o", Timestamp(0)), Err(StoreError::InvalidInput { .. })),
                "{bad:?}"
            );
        }
        let port = merge_site(&new(&["http://127.0.0.1:8080/a"]), None, "o", Timestamp(0)).unwrap();
        assert_eq!(port.host, "127.0.0.1:8080");
    }
}
