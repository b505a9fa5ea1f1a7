//! Where to send a notice: the site's abuse and contact addresses, suggested from its
//! `security.txt` (RFC 9116), the e-mail addresses on its pages, and the conventional
//! `abuse@` mailbox (RFC 2142). Suggestions only: a person picks the recipient.
//!
//! Pure text in, addresses out; the caller fetches the pages. Inputs are bounded
//! ([`MAX_INPUT_BYTES`]) and only strings that look like real addresses are returned.

use serde::Serialize;

/// At most this many bytes of a `security.txt` or a page are read.
pub const MAX_INPUT_BYTES: usize = 2 * 1024 * 1024;
/// At most this many suggestions.
pub const MAX_SUGGESTIONS: usize = 10;
/// How far (in characters, either side) a complaint keyword may be from an address.
const NEAR_CHARS: usize = 200;
/// Words that mark an address as the one for complaints.
const COMPLAINT_WORDS: [&str; 10] =
    ["举报", "投诉", "侵权", "版权", "联系我们", "客服", "dmca", "abuse", "copyright", "contact"];
/// Second-level labels under which the registrable domain has three labels
/// (`example.com.cn`); a small stand-in for the public suffix list.
const TWO_LABEL_SUFFIXES: [&str; 16] = [
    "com.cn", "net.cn", "org.cn", "gov.cn", "edu.cn", "ac.cn", "com.hk", "com.tw", "org.tw", "net.tw", "co.uk",
    "org.uk", "co.jp", "com.au", "com.sg", "com.my",
];
/// File extensions that look like top-level domains in `logo@2x.png`.
const FILE_SUFFIXES: [&str; 12] =
    ["png", "jpg", "jpeg", "gif", "webp", "svg", "css", "js", "ico", "bmp", "html", "htm"];

/// Where a suggestion came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ContactSource {
    /// A `Contact: mailto:` field of the site's `security.txt`.
    SecurityTxt,
    /// An address on one of the site's pages.
    Page {
        /// The page's URL.
        url: String,
    },
    /// The conventional `abuse@` mailbox of the site's domain (RFC 2142).
    Conventional,
}

/// A suggested recipient.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContactSuggestion {
    /// The address, lower-case.
    pub address: String,
    /// Where it was found.
    pub source: ContactSource,
    /// Why it is suggested, for the person choosing.
    pub reason: String,
}

/// The `mailto:` addresses of the `Contact:` fields of a `security.txt` (RFC 9116), in
/// order, lower-case, without duplicates. Field names are case-insensitive; comment lines
/// (`#`) and other URIs (`https:`, `tel:`) are skipped.
pub fn parse_security_txt(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in bounded(text).lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        let Some((name, value)) = line.split_once(':') else { continue };
        if !name.trim().eq_ignore_ascii_case("contact") {
            continue;
        }
        let value = value.trim();
        let Some(rest) = strip_prefix_ci(value, "mailto:") else { continue };
        let address = percent_decode(rest.split(['?', '#']).next().unwrap_or_default());
        if let Some(address) = valid_address(&address) {
            push_unique(&mut out, address);
        }
    }
    out
}

/// The e-mail addresses in a page, in order of first appearance, lower-case, each with
/// whether a complaint keyword (举报, 投诉, 侵权, 版权, 联系我们, 客服, DMCA, abuse,
/// copyright, contact) is near one of its appearances. Finds `mailto:` links and plain
/// addresses, after decoding HTML entities and the usual obfuscations (`[at]`, `(at)`,
/// `＠`, `[dot]`, and `#` for `@` between a name and a well-known domain).
pub fn page_addresses(html: &str) -> Vec<(String, bool)> {
    let text = deobfuscate(&htmlize::unescape(bounded(html)));
    let chars: Vec<char> = text.chars().collect();
    let lower: Vec<char> = text.to_lowercase().chars().collect();
    let lower = if lower.len() == chars.len() { lower } else { chars.iter().map(|c| c.to_ascii_lowercase()).collect() };
    let mut out: Vec<(String, bool)> = Vec::new();
    for (i, &c) in chars.iter().enumerate() {
        if c != '@' && c != '#' {
            continue;
        }
        let mut start = i;
        while start > 0 && is_local_char(chars[start - 1]) {
            start -= 1;
        }
        let mut end = i + 1;
        while end < chars.len() && is_domain_char(chars[end]) {
            end += 1;
        }
        let local: String = chars[start..i].iter().collect();
        let domain: String = chars[i + 1..end].iter().collect();
        let domain = domain.trim_end_matches(['.', '-']);
        let candidate = format!("{local}@{domain}");
        let Some(address) = valid_address(&candidate) else { continue };
        if c == '#' && !hash_form_plausible(&chars, start, domain) {
            continue;
        }
        let near = near_keyword(&lower, start, end);
        match out.iter_mut().find(|(a, _)| *a == address) {
            Some(entry) => entry.1 |= near,
            None => out.push((address, near)),
        }
    }
    out
}

/// Suggested recipients for a notice about `host`, best first: the `security.txt`
/// contacts, then addresses on the site's own domain near a complaint keyword, then the
/// other addresses on its pages (own domain first, then near a keyword), then
/// `abuse@<registrable domain>`. Lower-case, without duplicates, at most
/// [`MAX_SUGGESTIONS`].
pub fn suggest(host: &str, security_txt: Option<&str>, pages: &[(&str, &str)]) -> Vec<ContactSuggestion> {
    let domain = registrable_domain(host);
    let own = |address: &str| {
        domain.as_deref().is_some_and(|d| {
            let at = address.rsplit_once('@').map(|(_, r)| r).unwrap_or_default();
            at == d || at.ends_with(&format!(".{d}"))
        })
    };
    let mut out: Vec<ContactSuggestion> = Vec::new();
    let add = |out: &mut Vec<ContactSuggestion>, suggestion: ContactSuggestion| {
        if !out.iter().any(|s| s.address == suggestion.address) {
            out.push(suggestion);
        }
    };
    for address in security_txt.map(parse_security_txt).unwrap_or_default() {
        add(
            &mut out,
            ContactSuggestion {
                address,
                source: ContactSource::SecurityTxt,
                reason: "the site's security.txt names it as a contact".into(),
            },
        );
    }
    // (rank, order of appearance, suggestion): 0 own and near, 1 own, 2 near, 3 other.
    let mut found: Vec<(u8, usize, ContactSuggestion)> = Vec::new();
    for (url, html) in pages {
        for (address, near) in page_addresses(html) {
            let is_own = own(&address);
            let rank = match (is_own, near) {
                (true, true) => 0,
                (true, false) => 1,
                (false, true) => 2,
                (false, false) => 3,
            };
            let reason = match (is_own, near) {
                (true, true) => format!("on {url}, on the site's own domain, next to a complaint or contact keyword"),
                (true, false) => format!("on {url}, on the site's own domain"),
                (false, true) => format!("on {url}, next to a complaint or contact keyword"),
                (false, false) => format!("on {url}"),
            };
            if let Some(existing) = found.iter_mut().find(|(_, _, s)| s.address == address) {
                if rank < existing.0 {
                    existing.0 = rank;
                    existing.2.reason = reason;
                    existing.2.source = ContactSource::Page { url: url.to_string() };
                }
                continue;
            }
            let order = found.len();
            found.push((
                rank,
                order,
                ContactSuggestion { address, source: ContactSource::Page { url: url.to_string() }, reason },
            ));
        }
    }
    found.sort_by_key(|(rank, order, _)| (*rank, *order));
    for (_, _, suggestion) in found {
        add(&mut out, suggestion);
    }
    if let Some(address) = domain.as_deref().and_then(|d| valid_address(&format!("abuse@{d}"))) {
        add(
            &mut out,
            ContactSuggestion {
                address,
                source: ContactSource::Conventional,
                reason: "the conventional abuse mailbox of the site's domain (RFC 2142); not confirmed by the site"
                    .into(),
            },
        );
    }
    out.truncate(MAX_SUGGESTIONS);
    out
}

/// The registrable domain of a host (`www.pirate.example.com.cn` → `pirate.example.com.cn`
/// keeps the last three labels under a known two-label suffix, else the last two), or
/// `None` for an IP address or a single label.
fn registrable_domain(host: &str) -> Option<String> {
    let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
    let host = host.rsplit_once('@').map(|(_, h)| h.to_string()).unwrap_or(host);
    let host = match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h.to_string(),
        _ => host,
    };
    if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        return None;
    }
    let labels: Vec<&str> = host.split('.').collect();
    if labels.len() < 2 || labels.iter().any(|l| l.is_empty()) {
        return None;
    }
    let last_two = labels[labels.len() - 2..].join(".");
    let keep = if TWO_LABEL_SUFFIXES.contains(&last_two.as_str()) { 3 } else { 2 };
    (labels.len() >= keep).then(|| labels[labels.len() - keep..].join("."))
}

/// `address` lower-cased if it is plausibly a deliverable address: one `@`, a local part
/// of 1 to 64 usual characters, a domain of dotted labels ending in an alphabetic
/// top-level domain that is not a file extension, and not an example or placeholder.
fn valid_address(address: &str) -> Option<String> {
    let address = address.trim().to_ascii_lowercase();
    let (local, domain) = address.split_once('@')?;
    if local.is_empty() || local.len() > 64 || domain.len() > 253 || domain.contains('@') {
        return None;
    }
    if !local.chars().all(is_local_char) || local.starts_with('.') || local.ends_with('.') || local.contains("..") {
        return None;
    }
    let labels: Vec<&str> = domain.split('.').collect();
    if labels.len() < 2 {
        return None;
    }
    for label in &labels {
        if label.is_empty()
            || label.len() > 63
            || label.starts_with('-')
            || label.ends_with('-')
            || !label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        {
            return None;
        }
    }
    let tld = labels[labels.len() - 1];
    let tld_ok = (tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic())) || tld.starts_with("xn--");
    if !tld_ok || FILE_SUFFIXES.contains(&tld) {
        return None;
    }
    Some(address)
}

/// `name#domain` only counts when the name does not continue a URL or a colour and the
/// domain ends in a common top-level domain.
fn hash_form_plausible(chars: &[char], start: usize, domain: &str) -> bool {
    const COMMON: [&str; 9] = ["com", "cn", "net", "org", "cc", "top", "vip", "hk", "tw"];
    let before = start.checked_sub(1).map(|i| chars[i]);
    let tld = domain.rsplit('.').next().unwrap_or_default().to_ascii_lowercase();
    !matches!(before, Some('/' | '=' | '"' | '\'' | ':' | '&')) && COMMON.contains(&tld.as_str())
}

fn near_keyword(lower: &[char], start: usize, end: usize) -> bool {
    let from = start.saturating_sub(NEAR_CHARS);
    let to = (end + NEAR_CHARS).min(lower.len());
    let window: String = lower[from..to].iter().collect();
    COMPLAINT_WORDS.iter().any(|w| window.contains(w))
}

fn is_local_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '%' | '+' | '-')
}

fn is_domain_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-')
}

/// The common ways a page hides an address from harvesters, undone.
fn deobfuscate(text: &str) -> String {
    let mut out = text.replace('＠', "@").replace("%40", "@");
    for (from, to) in [
        (" [at] ", "@"),
        (" (at) ", "@"),
        ("[at]", "@"),
        ("(at)", "@"),
        ("［at］", "@"),
        ("（at）", "@"),
        ("{at}", "@"),
        (" [dot] ", "."),
        (" (dot) ", "."),
        ("[dot]", "."),
        ("(dot)", "."),
    ] {
        out = replace_ci(&out, from, to);
    }
    out
}

fn replace_ci(text: &str, from: &str, to: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (i, _) in lower.match_indices(from) {
        if i < last {
            continue;
        }
        out.push_str(&text[last..i]);
        out.push_str(to);
        last = i + from.len();
    }
    out.push_str(&text[last..]);
    out
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    (s.len() >= prefix.len() && s.is_char_boundary(prefix.len()) && s[..prefix.len()].eq_ignore_ascii_case(prefix))
        .then(|| &s[prefix.len()..])
}

/// `%40` and the like in a `mailto:` URI (invalid escapes are left as they are).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn bounded(text: &str) -> &str {
    if text.len() <= MAX_INPUT_BYTES {
        return text;
    }
    let mut end = MAX_INPUT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn push_unique(out: &mut Vec<String>, address: String) {
    if !out.contains(&address) {
        out.push(address);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn security_txt_contacts() {
        let text = "# Our security contacts\r\n\
            Contact: mailto:Security@Pirate.example\r\n\
            contact: https://pirate.example/report\n\
            CONTACT: mailto:abuse%40pirate.example?subject=report\n\
            # Contact: mailto:commented@pirate.example\n\
            Contact: mailto:security@pirate.example\n\
            Contact: tel:+86-10-5555\n\
            Contact: mailto:not-an-address\n\
            Expires: 2030-01-01T00:00:00Z\n\
            Policy-Contact: mailto:other@pirate.example\n";
        assert_eq!(parse_security_txt(text), ["security@pirate.example", "abuse@pirate.example"]);
        assert!(parse_security_txt("").is_empty());
        // Bounded: an enormous file is read only up to the limit.
        let huge = format!("{}\nContact: mailto:late@pirate.example\n", "#".repeat(MAX_INPUT_BYTES + 10));
        assert!(parse_security_txt(&huge).is_empty());
    }

    #[test]
    fn page_addresses_with_keywords_and_obfuscations() {
        let html = r#"<html><body>
            <div class="nav">首页 | 小说 | 排行</div>
            <p>商务合作：bd@partner.example</p>
            <img src="logo@2x.png"> <a href="/book/1.html#top.com">x</a>
            <p style="color:#fff.com">text</p>
            <footer>
            <p>侵权投诉请发邮件至 <a href="mailto:Kefu@Pirate.example?subject=投诉">kefu&#64;pirate.example</a></p>
            <p>版权问题：copyright [at] pirate [dot] example</p>
            <p>举报邮箱：report#pirate.com（请将#替换为@）</p>
            </footer></body></html>"#;
        let filler = "这是一个很长的段落。".repeat(40);
        // Far from the footer's keywords (more than 200 characters away).
        let html = html.replace("<footer>", &format!("<div>{filler}</div><footer>"));
        let found = page_addresses(&html);
        assert_eq!(
            found,
            [
                ("bd@partner.example".to_string(), false),
                ("kefu@pirate.example".to_string(), true),
                ("copyright@pirate.example".to_string(), true),
                ("report@pirate.com".to_string(), true),
            ]
        );
    }

    #[test]
    fn not_addresses_are_never_suggested() {
        for bad in [
            "a@b",
            "@pirate.example",
            "x@pirate.123",
            "logo@2x.png",
            "a..b@pirate.example",
            "a@-x.example",
            "a b@c.example",
        ] {
            assert_eq!(valid_address(bad), None, "{bad}");
        }
        assert_eq!(valid_address(" Abuse@Pirate.Example ").as_deref(), Some("abuse@pirate.example"));
    }

    #[test]
    fn suggestions_are_ranked_deduplicated_and_bounded() {
        let security = "Contact: mailto:security@pirate.example\nContact: mailto:Kefu@pirate.example\n";
        let home = "<p>友情链接 ads@adnetwork.example</p><p>站长 admin@pirate.example</p>";
        let contact = "<h1>联系我们</h1><p>客服邮箱 kefu@pirate.example</p><p>投诉 legal@pirate.example</p>\
                       <p>DMCA: dmca@host-provider.example</p>";
        let got = suggest(
            "WWW.Pirate.Example:8080",
            Some(security),
            &[("https://pirate.example/", home), ("https://pirate.example/contact", contact)],
        );
        let addresses: Vec<&str> = got.iter().map(|s| s.address.as_str()).collect();
        assert_eq!(
            addresses,
            [
                "security@pirate.example",
                "kefu@pirate.example",
                "legal@pirate.example",
                "admin@pirate.example",
                "dmca@host-provider.example",
                "ads@adnetwork.example",
                "abuse@pirate.example",
            ]
        );
        assert_eq!(got[0].source, ContactSource::SecurityTxt);
        assert_eq!(got[1].source, ContactSource::SecurityTxt, "the security.txt entry wins over the page's");
        assert_eq!(got[2].source, ContactSource::Page { url: "https://pirate.example/contact".into() });
        assert_eq!(got[6].source, ContactSource::Conventional);

        // A Chinese second-level domain keeps three labels; an IP address gets no abuse@.
        let got = suggest("m.pirate.com.cn", None, &[]);
        assert_eq!(got.iter().map(|s| s.address.as_str()).collect::<Vec<_>>(), ["abuse@pirate.com.cn"]);
        assert!(suggest("203.0.113.7", None, &[]).is_empty());

        let many: String = (0..30).map(|i| format!("<p>投诉 u{i}@pirate.example</p>")).collect();
        let got = suggest("pirate.example", None, &[("https://pirate.example/a", &many)]);
        assert_eq!(got.len(), MAX_SUGGESTIONS);
        assert_eq!(got[0].address, "u0@pirate.example");
    }
}
