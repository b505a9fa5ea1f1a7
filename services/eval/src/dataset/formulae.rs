//! The material of the two negative classes of formulaic text that is not prose or not
//! anyone's own: link lists of a registered story's hosts with other links
//! (`link_spam`), and the stock clauses of a registered story that many other documents
//! of the corpus repeat verbatim (`official_formulae`).
//!
//! Both are found in real text: the URLs are those of registered stories (or, when no
//! registered story has any, those of the corpus's link-list spam pages), the stock
//! clauses are clauses of registered stories counted over the whole news corpus
//! (document frequency over distinct documents: reprints of one story count once).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::neardup::NearDupIndex;
use super::{Work, WorkKind};
use crate::corpus::CorpusDoc;
use crate::rng::Rng;

/// A clause is a stock clause when this many distinct documents of the corpus hold it
/// verbatim (the registered story included; near duplicates of one another count once).
pub const STOCK_MIN_DOCUMENTS: usize = 3;
/// Clauses shorter than this (characters) are not weighed: short phrases are the
/// `common_phrases` class.
pub const STOCK_MIN_CHARS: usize = 8;

/// The URLs of a text: every run of printable ASCII that `zhiwen_core::formulaic` finds
/// not to be prose, cut at each `http://`, `https://` and `www.` inside it (spam pages
/// run their links together), keeping the parts that are URLs.
pub fn urls(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    for (s, e) in zhiwen_core::formulaic::non_prose_ranges(text) {
        let run: String = chars[s as usize..e as usize].iter().collect();
        let mut starts: Vec<usize> = ["http://", "https://", "www."]
            .iter()
            .flat_map(|m| run.match_indices(m).map(|(i, _)| i))
            .filter(|&i| !(run[..i].ends_with("://")))
            .collect();
        starts.sort_unstable();
        starts.dedup();
        for (k, &i) in starts.iter().enumerate() {
            let end = starts.get(k + 1).copied().unwrap_or(run.len());
            let url = &run[i..end];
            if url.len() >= 12 {
                out.push(url.to_owned());
            }
        }
    }
    out
}

/// Another link of the same host: the scheme and host are kept, and in the path every
/// token of letters and digits that holds a digit (the ids) is drawn again, character by
/// character (a digit for a digit, a letter for a letter). A path without such a token
/// gets an id of its own. Never the same link.
pub fn refill_url(url: &str, r: &mut Rng) -> String {
    let host_end = match url.find("://") {
        Some(i) => url[i + 3..].find('/').map_or(url.len(), |j| i + 3 + j),
        None => url.find('/').unwrap_or(url.len()),
    };
    let (head, path) = url.split_at(host_end);
    let mut out = String::with_capacity(url.len() + 12);
    out.push_str(head);
    let mut token = String::new();
    let mut changed = false;
    let mut flush = |token: &mut String, out: &mut String, r: &mut Rng| {
        if token.bytes().any(|b| b.is_ascii_digit()) {
            for c in token.chars() {
                let n = if c.is_ascii_digit() {
                    char::from(b'0' + r.below(10) as u8)
                } else if c.is_ascii_uppercase() {
                    char::from(b'A' + r.below(26) as u8)
                } else {
                    char::from(b'a' + r.below(26) as u8)
                };
                changed |= n != c;
                out.push(n);
            }
        } else {
            out.push_str(token);
        }
        token.clear();
    };
    for c in path.chars() {
        if c.is_ascii_alphanumeric() {
            token.push(c);
        } else {
            flush(&mut token, &mut out, r);
            out.push(c);
        }
    }
    flush(&mut token, &mut out, r);
    if !changed {
        if !out.ends_with('/') {
            out.push('/');
        }
        for _ in 0..12 {
            out.push(char::from(b"0123456789abcdef"[r.below(16)]));
        }
        out.push_str(".html");
    }
    out
}

/// The URLs of each registered news story that has any, in the order of the works; when
/// none has, the URLs of the corpus's link-list pages (three URLs or more), one list per
/// page, so that the class still lists real hosts.
pub fn link_sources(works: &[Work], corpus: &[&CorpusDoc]) -> Vec<Vec<String>> {
    let registered: Vec<Vec<String>> = works
        .iter()
        .filter(|w| w.kind == WorkKind::News)
        .flat_map(|w| &w.sections)
        .map(|s| urls(&s.text))
        .filter(|u| !u.is_empty())
        .collect();
    if !registered.is_empty() {
        return registered;
    }
    corpus.iter().map(|d| urls(&d.text)).filter(|u| u.len() >= 3).collect()
}

/// The clauses of a text: maximal runs of letters and digits (Han included) of at least
/// [`STOCK_MIN_CHARS`] characters, four or more of them Han.
pub fn clauses(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|c| {
            c.chars().count() >= STOCK_MIN_CHARS
                && c.chars().filter(|&ch| zhiwen_core::initials::initial_of(ch).is_some()).count() >= 4
        })
        .collect()
}

/// Are two shingle sets (sorted) near duplicates by [`NearDupIndex`]'s rule?
fn near_duplicates(a: &[u64], b: &[u64]) -> bool {
    let shared = zhiwen_core::shingle::intersection_size(a, b);
    let smaller = a.len().min(b.len()).max(1);
    shared >= NearDupIndex::MIN_SHARED && shared as f64 >= NearDupIndex::MIN_SHARE * smaller as f64
}

/// The stock text of each registered news story (section id, its stock runs in the order
/// of the text), for the stories that have any. A stock clause is a clause
/// ([`clauses`]) that at least [`STOCK_MIN_DOCUMENTS`] distinct documents of `corpus`
/// hold verbatim, the story counted as one of them; documents that near-duplicate the
/// story or an already counted document are not counted (a reprint repeats a story, not a
/// formula). Stock clauses next to each other in one paragraph of the story (only
/// punctuation between them) make one run, with the story's punctuation: a formula sequence as speakers
/// repeat it.
pub fn stock_clauses(works: &[Work], corpus: &[&CorpusDoc], index: &NearDupIndex) -> Vec<(String, Vec<String>)> {
    let sections: Vec<(&str, &str)> = works
        .iter()
        .filter(|w| w.kind == WorkKind::News)
        .flat_map(|w| &w.sections)
        .map(|s| (s.id.as_str(), s.text.as_str()))
        .collect();
    let wanted: BTreeSet<&str> = sections.iter().flat_map(|(_, t)| clauses(t)).collect();
    // Every document of the corpus that holds each wanted clause.
    let mut holders: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, d) in corpus.iter().enumerate() {
        let mine: BTreeSet<&str> = clauses(&d.text).into_iter().filter(|c| wanted.contains(c)).collect();
        for c in mine {
            holders.entry(c).or_default().push(i);
        }
    }
    let mut shingles: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
    let mut out = Vec::new();
    for (id, text) in sections {
        let own = index.shingles(text);
        let mut is_stock = |c: &str| {
            let docs = holders.get(c).map(Vec::as_slice).unwrap_or_default();
            if docs.len() < STOCK_MIN_DOCUMENTS {
                return false;
            }
            let mut kept: Vec<usize> = Vec::new();
            for &d in docs {
                if corpus[d].id == id {
                    continue;
                }
                let s = shingles.entry(d).or_insert_with(|| index.shingles(&corpus[d].text)).clone();
                if s.is_empty() || near_duplicates(&s, &own) {
                    continue;
                }
                if kept.iter().any(|k| shingles.get(k).is_some_and(|ks| near_duplicates(ks, &s))) {
                    continue;
                }
                kept.push(d);
                if kept.len() + 1 >= STOCK_MIN_DOCUMENTS {
                    return true;
                }
            }
            false
        };
        // Byte ranges of every run of letters and digits, each with whether it is stock.
        let mut runs: Vec<(usize, usize, bool)> = Vec::new();
        let mut start = None;
        for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
            match (c.is_alphanumeric() && i < text.len(), start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    let clause = &text[s..i];
                    let stock = clauses(clause).len() == 1 && is_stock(clause);
                    runs.push((s, i, stock));
                    start = None;
                }
                _ => {}
            }
        }
        let mut stock: Vec<String> = Vec::new();
        let mut seen = BTreeSet::new();
        let mut k = 0;
        while k < runs.len() {
            if !runs[k].2 {
                k += 1;
                continue;
            }
            let first = k;
            while k + 1 < runs.len() && runs[k + 1].2 && !text[runs[k].1..runs[k + 1].0].contains('\n') {
                k += 1;
            }
            let run = &text[runs[first].0..runs[k].1];
            if seen.insert(run) {
                stock.push(run.to_owned());
            }
            k += 1;
        }
        if !stock.is_empty() {
            out.push((id.to_owned(), stock));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_cut_where_spam_runs_them_together() {
        let text = "看这里http://blog.sina.com.cn/s/blog_179382e2e0102xsfi.htmlhttp://blog.sina.cn/dpool/blog/s/blog_17.html 和 www.example.com/a1 第19次会议";
        let u = urls(text);
        assert_eq!(
            u,
            vec![
                "http://blog.sina.com.cn/s/blog_179382e2e0102xsfi.html",
                "http://blog.sina.cn/dpool/blog/s/blog_17.html",
                "www.example.com/a1"
            ]
        );
    }

    #[test]
    fn a_refilled_url_keeps_its_host_and_changes_its_ids() {
        let mut r = Rng::new(3);
        for url in ["http://blog.sina.com.cn/s/blog_179382e2e0102xsfi.html", "http://www.xinhuanet.com/politics/"] {
            let other = refill_url(url, &mut r);
            assert_ne!(other, url);
            let host = |u: &str| u.split('/').take(3).collect::<Vec<_>>().join("/");
            assert_eq!(host(&other), host(url), "{other}");
            assert!(zhiwen_core::formulaic::is_non_prose(&other), "{other}");
        }
        let other = refill_url("http://blog.sina.com.cn/s/blog_179382e2e0102xsfi.html", &mut r);
        assert!(other.starts_with("http://blog.sina.com.cn/s/blog_") && other.ends_with(".html"), "{other}");
    }

    #[test]
    fn clauses_are_runs_of_letters_digits_and_han() {
        assert_eq!(
            clauses("要以习近平新时代中国特色社会主义思想为指导，全面贯彻。判处有期徒刑三年"),
            vec!["要以习近平新时代中国特色社会主义思想为指导", "判处有期徒刑三年"]
        );
    }
}
