//! Notice templates as data: what a notice says, in each language, is an editable
//! template, not code.
//!
//! A [`TemplateSet`] holds, for each [`Lang`], three minijinja sources ([`Part`]): the
//! mail subject, the plain-text notice and a printable HTML page. The defaults are the
//! committed files under `services/takedown/templates/`; an admin's edit goes through
//! [`TemplateSet::with_part`], which compiles it and renders the built-in sample
//! ([`NoticeDocument::sample`]) so that a broken or incomplete edit is refused and never
//! stored.
//!
//! minijinja (a maintained, widely used Jinja2 implementation with no code execution)
//! runs with strict undefined values (a misspelt variable is an error, not an empty
//! string), HTML auto-escaping for the html part only, and a fuel bound on each render.

use std::fmt;

use minijinja::syntax::SyntaxConfig;
use minijinja::value::Serde;
use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde::{Deserialize, Serialize};

use crate::error::{one_line, TemplateError};

/// Render the template `source` named `name` (a name ending in `.html` is HTML-escaped)
/// with `ctx`, as every notice part is: strict undefined values, block tags on lines of
/// their own leave no blank line, and the fuel bound. `part` names it in errors. The
/// alert e-mails ([`crate::alerts`]) render with it too.
pub(crate) fn render_source<T: Serialize>(
    name: &str,
    part: &str,
    source: &str,
    ctx: &T,
) -> Result<String, TemplateError> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|name| if name.ends_with(".html") { AutoEscape::Html } else { AutoEscape::None });
    env.set_fuel(Some(RENDER_FUEL));
    // Block tags on lines of their own leave no blank lines behind (as in Ansible and
    // Salt templates); `{%+` keeps the indentation where a template wants it.
    let syntax = SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(true)
        .build()
        .map_err(|e| TemplateError::Compile { part: part.to_owned(), message: one_line(e) })?;
    env.set_syntax(syntax);
    let template = env
        .template_from_named_str(name, source)
        .map_err(|e| TemplateError::Compile { part: part.to_owned(), message: one_line(e) })?;
    template.render(Serde(ctx)).map_err(|e| TemplateError::Render { part: part.to_owned(), message: one_line(e) })
}

/// Bounds the work of one render (an admin's template with a huge loop is refused, not
/// run for minutes). The defaults use a small fraction of it for a 200-item notice.
const RENDER_FUEL: u64 = 5_000_000;

/// The language of a notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Lang {
    /// Simplified Chinese: a notice under 《信息网络传播权保护条例》第十四条.
    #[serde(rename = "zh-CN")]
    ZhCn,
    /// English: a notice with the elements of 17 U.S.C. 512(c)(3)(A).
    #[serde(rename = "en")]
    En,
}

impl Lang {
    /// Every language, in the order they are shown.
    pub const ALL: [Lang; 2] = [Lang::ZhCn, Lang::En];

    /// `zh-CN` or `en` (also the serde form and the html `lang` attribute).
    pub fn as_str(self) -> &'static str {
        match self {
            Lang::ZhCn => "zh-CN",
            Lang::En => "en",
        }
    }

    /// Parse `zh-CN` or `en` (case-insensitive; `zh`, `zh-Hans` and `zh_CN` are zh-CN).
    pub fn parse(s: &str) -> Result<Lang, TemplateError> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "zh-cn" | "zh" | "zh-hans" | "zh-hans-cn" => Ok(Lang::ZhCn),
            "en" | "en-us" | "en-gb" => Ok(Lang::En),
            _ => Err(TemplateError::Unknown { kind: "language", value: s.to_string() }),
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One of the three templates of a language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Part {
    /// The mail subject (one line).
    Subject,
    /// The plain-text notice (the mail's text/plain body).
    Text,
    /// The printable HTML page (the mail's text/html body, printed to PDF).
    Html,
}

impl Part {
    /// Every part.
    pub const ALL: [Part; 3] = [Part::Subject, Part::Text, Part::Html];

    /// `subject`, `text` or `html`.
    pub fn as_str(self) -> &'static str {
        match self {
            Part::Subject => "subject",
            Part::Text => "text",
            Part::Html => "html",
        }
    }

    /// Parse `subject`, `text` or `html` (case-insensitive).
    pub fn parse(s: &str) -> Result<Part, TemplateError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "subject" => Ok(Part::Subject),
            "text" => Ok(Part::Text),
            "html" => Ok(Part::Html),
            _ => Err(TemplateError::Unknown { kind: "template part", value: s.to_string() }),
        }
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The rights holder on whose behalf the notice is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HolderInfo {
    /// The holder's legal name (姓名或名称).
    pub legal_name: String,
    /// The person to contact.
    pub contact_person: String,
    /// Postal address.
    pub address: String,
    /// Telephone.
    pub phone: String,
    /// E-mail.
    pub email: String,
    /// Names of the documents that prove the rights (registration certificates,
    /// publishing contracts, authorisations).
    pub documents: Vec<String>,
}

/// How a page copies the work (the matcher's classification).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    /// The text is the same.
    Identical,
    /// The text is the same but for small edits.
    NearDuplicate,
    /// A part of the work is copied.
    Excerpt,
    /// The work is copied inside a larger page.
    Embedded,
}

/// One captured piece of evidence for an item, as recorded in the evidence log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvidenceRef {
    /// The capture's id.
    pub capture_id: i64,
    /// Its leaf index in the evidence log.
    pub leaf_index: u64,
    /// When it was captured (RFC 3339).
    pub captured_at: String,
    /// The captured files: (file name, SHA-256 in hex).
    pub files: Vec<(String, String)>,
}

/// One infringing page: which work it copies and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoticeItem {
    /// The title of the copied work.
    pub work_title: String,
    /// The holder's identifier of the work (e.g. an ISBN or catalogue number).
    pub work_external_id: String,
    /// The chapter or section copied (may be empty).
    pub section_title: String,
    /// The infringing page's URL.
    pub url: String,
    /// When the copy was first seen (RFC 3339).
    pub first_seen: String,
    /// How the page copies the work.
    pub kind: MatchKind,
    /// The similarity, 0.0 to 1.0.
    pub similarity: f64,
    /// The evidence captures of the page.
    pub evidence: Vec<EvidenceRef>,
}

/// The signed evidence-log tree head that covers the captures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeHeadRef {
    /// The number of leaves.
    pub size: u64,
    /// The root hash (hex).
    pub root_hash: String,
    /// When it was signed (RFC 3339).
    pub timestamp: String,
    /// The fingerprint of the log's signing key.
    pub key_fingerprint: String,
}

/// Everything a notice states: the render context of the templates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoticeDocument {
    /// The notice's language.
    pub lang: Lang,
    /// The notice's reference, e.g. `ZW-N-000012`.
    pub reference: String,
    /// The notice's date (RFC 3339).
    pub date: String,
    /// The rights holder.
    pub holder: HolderInfo,
    /// The site (host) the notice is about.
    pub site: String,
    /// Where it is sent (an address, or empty when not known yet).
    pub recipient: String,
    /// The infringing pages.
    pub items: Vec<NoticeItem>,
    /// The signed tree head covering the evidence, when one has been signed.
    pub tree_head: Option<TreeHeadRef>,
    /// Who sends the notice (their electronic signature).
    pub sender: String,
    /// A follow-up after an earlier notice did not get the content removed.
    pub second_notice: bool,
    /// File names of the evidence packages attached to the mail.
    pub package_names: Vec<String>,
}

impl NoticeDocument {
    /// A complete example notice in `lang`: what an override is validated against, and a
    /// preview for the admin page. Every field is filled in, with two items.
    pub fn sample(lang: Lang) -> NoticeDocument {
        let evidence = |capture_id: i64, leaf_index: u64, seed: char| EvidenceRef {
            capture_id,
            leaf_index,
            captured_at: "2025-03-02T08:15:00Z".to_string(),
            files: vec![
                ("page.warc.gz".to_string(), seed.to_string().repeat(64)),
                ("screenshot.png".to_string(), format!("{}{}", seed.to_string().repeat(63), '0')),
            ],
        };
        NoticeDocument {
            lang,
            reference: "ZW-N-000001".to_string(),
            date: "2025-03-03T09:00:00+08:00".to_string(),
            holder: HolderInfo {
                legal_name: "示例文化传媒有限公司".to_string(),
                contact_person: "王小明".to_string(),
                address: "北京市海淀区示例路 1 号".to_string(),
                phone: "+86 10 5555 0100".to_string(),
                email: "rights@holder.example".to_string(),
                documents: vec!["作品登记证书 国作登字-2024-A-00000001".to_string(), "出版合同 2023-017".to_string()],
            },
            site: "pirate.example".to_string(),
            recipient: "abuse@pirate.example".to_string(),
            items: vec![
                NoticeItem {
                    work_title: "山河故人录".to_string(),
                    work_external_id: "ISBN 978-7-0000-0000-1".to_string(),
                    section_title: "第三章 归途".to_string(),
                    url: "https://pirate.example/book/123/3.html".to_string(),
                    first_seen: "2025-03-01T22:40:00Z".to_string(),
                    kind: MatchKind::Identical,
                    similarity: 0.998,
                    evidence: vec![evidence(41, 1040, 'a')],
                },
                NoticeItem {
                    work_title: "海上明月".to_string(),
                    work_external_id: "ISBN 978-7-0000-0000-2".to_string(),
                    section_title: String::new(),
                    url: "https://pirate.example/book/124/1.html".to_string(),
                    first_seen: "2025-03-01T23:05:00Z".to_string(),
                    kind: MatchKind::Excerpt,
                    similarity: 0.61,
                    evidence: vec![evidence(42, 1041, 'b'), evidence(57, 1102, 'c')],
                },
            ],
            tree_head: Some(TreeHeadRef {
                size: 1103,
                root_hash: "d".repeat(64),
                timestamp: "2025-03-02T09:00:00Z".to_string(),
                key_fingerprint: "SHA256:e3b0c44298fc1c149afbf4c8996fb924".to_string(),
            }),
            sender: "李律师（示例律师事务所）".to_string(),
            second_notice: false,
            package_names: vec!["ZW-N-000001-evidence.zip".to_string()],
        }
    }
}

/// A rendered notice, ready for [`crate::mail`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RenderedNotice {
    /// One line, trimmed.
    pub subject: String,
    /// The plain-text notice.
    pub text: String,
    /// The printable HTML page.
    pub html: String,
}

/// The three template sources of one language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LangTemplates {
    /// The subject template.
    pub subject: String,
    /// The plain-text template.
    pub text: String,
    /// The HTML template (auto-escaped).
    pub html: String,
}

impl LangTemplates {
    fn get(&self, part: Part) -> &str {
        match part {
            Part::Subject => &self.subject,
            Part::Text => &self.text,
            Part::Html => &self.html,
        }
    }

    fn get_mut(&mut self, part: Part) -> &mut String {
        match part {
            Part::Subject => &mut self.subject,
            Part::Text => &mut self.text,
            Part::Html => &mut self.html,
        }
    }
}

/// All six template sources (two languages, three parts). Serialises as
/// `{"zh-CN": {"subject", "text", "html"}, "en": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateSet {
    /// The Chinese templates.
    #[serde(rename = "zh-CN")]
    pub zh_cn: LangTemplates,
    /// The English templates.
    #[serde(rename = "en")]
    pub en: LangTemplates,
}

impl Default for TemplateSet {
    fn default() -> Self {
        Self::defaults()
    }
}

impl TemplateSet {
    /// The committed default templates (`services/takedown/templates/`).
    pub fn defaults() -> TemplateSet {
        TemplateSet {
            zh_cn: LangTemplates {
                subject: include_str!("../templates/notice.zh-CN.subject.j2").to_string(),
                text: include_str!("../templates/notice.zh-CN.text.j2").to_string(),
                html: include_str!("../templates/notice.zh-CN.html.j2").to_string(),
            },
            en: LangTemplates {
                subject: include_str!("../templates/notice.en.subject.j2").to_string(),
                text: include_str!("../templates/notice.en.text.j2").to_string(),
                html: include_str!("../templates/notice.en.html.j2").to_string(),
            },
        }
    }

    /// The source of one part.
    pub fn source(&self, lang: Lang, part: Part) -> &str {
        self.lang(lang).get(part)
    }

    /// A copy with `lang`'s `part` replaced by `source`, after checking it: it must
    /// compile, render the sample document ([`NoticeDocument::sample`]) and, for the text
    /// and html parts, still state every element a notice needs (the sample's holder,
    /// works, URLs and evidence hashes must appear in the output). A refused edit leaves
    /// `self` unchanged and the error names the part.
    pub fn with_part(&self, lang: Lang, part: Part, source: &str) -> Result<TemplateSet, TemplateError> {
        let mut next = self.clone();
        *next.lang_mut(lang).get_mut(part) = source.to_string();
        next.check_part(lang, part)?;
        Ok(next)
    }

    /// Check every part as [`TemplateSet::with_part`] does (for a set read back from
    /// storage, or edited by hand).
    pub fn validate(&self) -> Result<(), TemplateError> {
        for lang in Lang::ALL {
            for part in Part::ALL {
                self.check_part(lang, part)?;
            }
        }
        Ok(())
    }

    /// Render the notice for `doc` in `doc.lang`. The subject is trimmed and any line
    /// break or control character a value brought in becomes a space, so no value can
    /// start a new mail header.
    pub fn render(&self, doc: &NoticeDocument) -> Result<RenderedNotice, TemplateError> {
        let lang = doc.lang;
        let subject = self.render_part(lang, Part::Subject, doc)?;
        let subject = one_line_subject(&subject);
        if subject.is_empty() {
            return Err(TemplateError::Subject { part: part_name(lang, Part::Subject), why: "it is empty".into() });
        }
        Ok(RenderedNotice {
            subject,
            text: self.render_part(lang, Part::Text, doc)?,
            html: self.render_part(lang, Part::Html, doc)?,
        })
    }

    fn lang(&self, lang: Lang) -> &LangTemplates {
        match lang {
            Lang::ZhCn => &self.zh_cn,
            Lang::En => &self.en,
        }
    }

    fn lang_mut(&mut self, lang: Lang) -> &mut LangTemplates {
        match lang {
            Lang::ZhCn => &mut self.zh_cn,
            Lang::En => &mut self.en,
        }
    }

    fn render_part(&self, lang: Lang, part: Part, doc: &NoticeDocument) -> Result<String, TemplateError> {
        render_source(&template_name(lang, part), &part_name(lang, part), self.source(lang, part), doc)
    }

    fn check_part(&self, lang: Lang, part: Part) -> Result<(), TemplateError> {
        let sample = NoticeDocument::sample(lang);
        let out = self.render_part(lang, part, &sample)?;
        let name = part_name(lang, part);
        match part {
            Part::Subject => {
                let trimmed = out.trim();
                if trimmed.is_empty() {
                    return Err(TemplateError::Subject { part: name, why: "it renders empty".into() });
                }
                if trimmed.contains(['\r', '\n']) {
                    return Err(TemplateError::Subject { part: name, why: "it renders a line break".into() });
                }
                if !trimmed.contains(&sample.reference) {
                    return Err(TemplateError::Missing { part: name, what: "the notice's reference".into() });
                }
            }
            Part::Text => check_required(&name, &out, &sample)?,
            Part::Html => {
                let lower = out.to_ascii_lowercase();
                if !lower.contains(&format!("lang=\"{}\"", lang.as_str().to_ascii_lowercase())) {
                    return Err(TemplateError::Missing { part: name, what: "the page's lang attribute".into() });
                }
                for outside in ["<link", "<script", "@import", "url(", "src="] {
                    if lower.contains(outside) {
                        return Err(TemplateError::Missing {
                            part: name,
                            what: format!("self-containment (it uses {outside:?}; the page must load nothing)"),
                        });
                    }
                }
                check_required(&name, &htmlize::unescape(out.as_str()), &sample)?;
            }
        }
        Ok(())
    }
}

/// The sample's values that every text and html notice must state, with what they are.
fn check_required(part: &str, out: &str, doc: &NoticeDocument) -> Result<(), TemplateError> {
    let missing = |what: &str| TemplateError::Missing { part: part.to_string(), what: what.to_string() };
    let h = &doc.holder;
    let fields = [
        (&h.legal_name, "the rights holder's name"),
        (&h.address, "the rights holder's address"),
        (&h.phone, "the rights holder's telephone"),
        (&h.email, "the rights holder's e-mail"),
        (&doc.sender, "the sender's signature"),
        (&doc.reference, "the notice's reference"),
    ];
    for (value, what) in fields {
        if !out.contains(value.as_str()) {
            return Err(missing(what));
        }
    }
    for document in &h.documents {
        if !out.contains(document.as_str()) {
            return Err(missing("the documents proving the rights"));
        }
    }
    for item in &doc.items {
        if !out.contains(&item.work_title) {
            return Err(missing("the title of each work"));
        }
        if !out.contains(&item.url) {
            return Err(missing("the address (URL) of each infringing page"));
        }
        for ev in &item.evidence {
            if !out.contains(&ev.leaf_index.to_string()) {
                return Err(missing("each capture's evidence log leaf index"));
            }
            for (_, sha256) in &ev.files {
                if !out.contains(sha256.as_str()) {
                    return Err(missing("each captured file's SHA-256"));
                }
            }
        }
    }
    if let Some(head) = &doc.tree_head {
        if !out.contains(&head.root_hash) {
            return Err(missing("the signed tree head's root hash"));
        }
    }
    for package in &doc.package_names {
        if !out.contains(package.as_str()) {
            return Err(missing("the names of the attached evidence packages"));
        }
    }
    Ok(())
}

/// Trim, and turn every run of whitespace or control characters into one space.
pub(crate) fn one_line_subject(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut gap = false;
    for c in s.trim().chars() {
        if c.is_whitespace() || c.is_control() {
            gap = true;
        } else {
            if gap && !out.is_empty() {
                out.push(' ');
            }
            gap = false;
            out.push(c);
        }
    }
    out
}

fn template_name(lang: Lang, part: Part) -> String {
    format!("notice.{}.{}", lang.as_str(), part.as_str())
}

fn part_name(lang: Lang, part: Part) -> String {
    format!("{} {}", lang.as_str(), part.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(lang: Lang) -> RenderedNotice {
        match TemplateSet::defaults().render(&NoticeDocument::sample(lang)) {
            Ok(notice) => notice,
            Err(e) => panic!("the default {lang} templates do not render the sample: {e}"),
        }
    }

    fn assert_all(haystack: &str, needles: &[&str], what: &str) {
        let missing: Vec<&&str> = needles.iter().filter(|n| !haystack.contains(**n)).collect();
        assert!(missing.is_empty(), "{what} lacks {missing:?}:\n{haystack}");
    }

    /// The values of the sample every notice must state (in plain text form).
    fn sample_values(doc: &NoticeDocument) -> Vec<String> {
        let h = &doc.holder;
        let mut v = vec![
            h.legal_name.clone(),
            h.contact_person.clone(),
            h.address.clone(),
            h.phone.clone(),
            h.email.clone(),
            doc.reference.clone(),
            doc.sender.clone(),
            doc.site.clone(),
        ];
        v.extend(h.documents.iter().cloned());
        v.extend(doc.package_names.iter().cloned());
        for item in &doc.items {
            v.extend([item.work_title.clone(), item.work_external_id.clone(), item.url.clone()]);
            for ev in &item.evidence {
                v.push(format!("{}", ev.leaf_index));
                v.push(format!("{}", ev.capture_id));
                v.extend(ev.files.iter().flat_map(|(name, sha)| [name.clone(), sha.clone()]));
            }
        }
        let head = doc.tree_head.as_ref().expect("the sample has a tree head");
        v.extend([head.root_hash.clone(), head.key_fingerprint.clone(), head.size.to_string()]);
        v
    }

    #[test]
    fn the_defaults_pass_their_own_validation() {
        TemplateSet::defaults().validate().expect("defaults valid");
    }

    #[test]
    fn zh_cn_notice_states_what_article_14_requires() {
        let doc = NoticeDocument::sample(Lang::ZhCn);
        let notice = render(Lang::ZhCn);
        let values = sample_values(&doc);
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        for (body, what) in
            [(notice.text.clone(), "zh-CN text"), (htmlize::unescape(notice.html.as_str()).into_owned(), "zh-CN html")]
        {
            assert_all(&body, &values, what);
            assert_all(
                &body,
                &[
                    "《信息网络传播权保护条例》第十四条",
                    "权利人的名称、联系方式和地址",
                    "要求删除或者断开链接的侵权作品的名称和网络地址",
                    "构成侵权的初步证明材料",
                    "证据日志叶序号",
                    "SHA-256",
                    "根哈希",
                    "《山河故人录》",
                    "99.8%",
                    "与原作品相同",
                    "摘录原作品部分内容",
                ],
                what,
            );
            assert!(!body.contains("再次通知"), "a first notice is not a second one");
        }
        assert!(
            notice.subject.contains("ZW-N-000001") && notice.subject.contains("pirate.example"),
            "{}",
            notice.subject
        );
    }

    #[test]
    fn en_notice_has_every_dmca_element() {
        let doc = NoticeDocument::sample(Lang::En);
        let notice = render(Lang::En);
        let values = sample_values(&doc);
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        for (body, what) in
            [(notice.text.clone(), "en text"), (htmlize::unescape(notice.html.as_str()).into_owned(), "en html")]
        {
            assert_all(&body, &values, what);
            assert_all(
                &body,
                &[
                    // (i) signature, electronic
                    &format!("/{}/", doc.sender),
                    "Signature (electronic)",
                    // (ii) the copyrighted work
                    "copyrighted works claimed to have been infringed",
                    // (iii) the infringing material and its location
                    "infringing material",
                    "URL",
                    // (iv) contact information
                    "Contact information of the complaining party",
                    // (v) good faith
                    "I have a good faith belief that use of the copyrighted materials described above in the manner complained of is not authorized by the copyright owner, its agent, or the law.",
                    // (vi) accuracy, under penalty of perjury, authority to act
                    "under penalty of perjury, that the information in this notification is accurate",
                    "authorized to act on behalf of the owner of an exclusive right that is allegedly infringed",
                    "512(c)(3)",
                ],
                what,
            );
        }
        assert_eq!(
            notice.subject,
            "DMCA notice of copyright infringement on pirate.example (2 pages), ref. ZW-N-000001"
        );
    }

    #[test]
    fn second_notice_says_so_in_both_languages() {
        for (lang, marker) in [(Lang::ZhCn, "再次通知"), (Lang::En, "Second notice")] {
            let mut doc = NoticeDocument::sample(lang);
            doc.second_notice = true;
            let notice = TemplateSet::defaults().render(&doc).expect("renders");
            assert!(notice.subject.contains(marker), "{}", notice.subject);
            assert!(notice.text.to_lowercase().contains(&marker.to_lowercase()), "{lang} text");
        }
    }

    #[test]
    fn html_is_a_self_contained_printable_page() {
        for lang in Lang::ALL {
            let html = render(lang).html;
            assert!(html.starts_with("<!DOCTYPE html>"), "{lang}: {}", &html[..80.min(html.len())]);
            assert!(html.contains(&format!("<html lang=\"{}\">", lang.as_str())), "{lang}");
            assert!(html.contains(r#"font-family: "Noto Sans CJK SC", "Noto Sans SC", sans-serif"#), "{lang}");
            let lower = html.to_lowercase();
            for outside in ["<link", "<script", "src=", "@import", "url(", "href="] {
                assert!(!lower.contains(outside), "{lang} html uses {outside}");
            }
        }
    }

    #[test]
    fn values_are_escaped_in_html_and_not_in_text() {
        for lang in Lang::ALL {
            let mut doc = NoticeDocument::sample(lang);
            doc.holder.legal_name = "<script>alert(1)</script> & Co \"Ltd\"".to_string();
            doc.items[0].url = "https://pirate.example/a?b=1&c=<img>".to_string();
            let notice = TemplateSet::defaults().render(&doc).expect("renders");
            assert!(!notice.html.contains("<script>"), "{lang}: a value's markup reached the html");
            assert!(!notice.html.contains("<img>"), "{lang}: a value's markup reached the html");
            assert!(
                notice.html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt; &amp; Co &quot;Ltd&quot;"),
                "{lang}"
            );
            assert!(notice.text.contains("<script>alert(1)</script> & Co \"Ltd\""), "{lang}: the text is not html");
            assert!(notice.text.contains("https://pirate.example/a?b=1&c=<img>"), "{lang}");
        }
    }

    #[test]
    fn a_broken_override_is_refused_naming_the_part() {
        let set = TemplateSet::defaults();
        let err = set.with_part(Lang::ZhCn, Part::Text, "权利人：{{ holder.legal_name ").expect_err("syntax error");
        let msg = err.to_string();
        assert!(matches!(err, TemplateError::Compile { .. }), "{err:?}");
        assert!(msg.starts_with("zh-CN text template does not compile:"), "{msg}");
        assert!(!msg.contains('\n'), "one line: {msg}");

        // Strict undefined: a misspelt variable is an error, not an empty string.
        let err = set
            .with_part(Lang::En, Part::Html, "<html lang=\"en\">{{ holder.legal_nmae }}</html>")
            .expect_err("undefined");
        assert!(matches!(err, TemplateError::Render { .. }), "{err:?}");
        assert!(err.to_string().starts_with("en html template does not render:"), "{err}");

        // An edit that drops an element every notice must state.
        let without_urls = set.source(Lang::En, Part::Text).replace("URL: {{ item.url }}", "URL: (see our website)");
        let err = set.with_part(Lang::En, Part::Text, &without_urls).expect_err("drops the URLs");
        assert_eq!(
            err.to_string(),
            "en text template leaves out the address (URL) of each infringing page, which every notice must state"
        );

        // An html page that would load something from outside.
        let with_font =
            set.source(Lang::ZhCn, Part::Html).replace("<style>", "<link rel=\"stylesheet\" href=\"x.css\"><style>");
        let err = set.with_part(Lang::ZhCn, Part::Html, &with_font).expect_err("loads a stylesheet");
        assert!(err.to_string().contains("\"<link\""), "{err}");

        // Unbounded work is cut off by the fuel bound.
        let err = set
            .with_part(
                Lang::En,
                Part::Subject,
                "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}{{ reference }}",
            )
            .expect_err("too much work");
        assert!(matches!(err, TemplateError::Render { .. }), "{err:?}");

        // And the set itself is unchanged by refused edits.
        assert_eq!(set, TemplateSet::defaults());
    }

    #[test]
    fn a_good_override_is_kept_and_used() {
        let set = TemplateSet::defaults()
            .with_part(Lang::En, Part::Subject, "Copyright notice {{ reference }} for {{ site }}\n")
            .expect("a valid edit");
        assert_eq!(set.source(Lang::En, Part::Subject), "Copyright notice {{ reference }} for {{ site }}\n");
        let notice = set.render(&NoticeDocument::sample(Lang::En)).expect("renders");
        assert_eq!(notice.subject, "Copyright notice ZW-N-000001 for pirate.example");
        // The other language is untouched.
        assert_eq!(set.zh_cn, TemplateSet::defaults().zh_cn);
        // A set round-trips through its stored (serde) form.
        let json = serde_json::to_string(&set).expect("serialises");
        assert!(json.contains("\"zh-CN\":{\"subject\""), "{json}");
        let back: TemplateSet = serde_json::from_str(&json).expect("deserialises");
        assert_eq!(back, set);
    }

    #[test]
    fn a_subject_with_a_line_break_is_refused() {
        let set = TemplateSet::defaults();
        let err = set
            .with_part(Lang::ZhCn, Part::Subject, "通知 {{ reference }}\nBcc: everyone@example.com")
            .expect_err("a header injection");
        assert!(matches!(err, TemplateError::Subject { .. }), "{err:?}");
        assert!(err.to_string().contains("zh-CN subject"), "{err}");
        assert!(set.with_part(Lang::En, Part::Subject, "   ").is_err(), "an empty subject");

        // A value cannot bring a line break into the subject either.
        let mut doc = NoticeDocument::sample(Lang::ZhCn);
        doc.holder.legal_name = "某公司\r\nBcc: everyone@example.com".to_string();
        let notice = set.render(&doc).expect("renders");
        assert!(!notice.subject.contains(['\r', '\n']), "{:?}", notice.subject);
        assert!(notice.subject.contains("某公司 Bcc: everyone@example.com"), "{:?}", notice.subject);
    }

    #[test]
    fn a_notice_without_evidence_or_tree_head_still_renders() {
        for lang in Lang::ALL {
            let mut doc = NoticeDocument::sample(lang);
            doc.tree_head = None;
            doc.package_names.clear();
            doc.holder.documents.clear();
            for item in &mut doc.items {
                item.evidence.clear();
            }
            let notice = TemplateSet::defaults().render(&doc).expect("renders");
            assert!(!notice.text.contains("root hash") && !notice.text.contains("根哈希"), "{lang}");
            assert!(notice.text.contains(&doc.items[1].url), "{lang}");
        }
    }

    #[test]
    fn lang_and_part_names() {
        assert_eq!(Lang::parse("zh-CN").ok(), Some(Lang::ZhCn));
        assert_eq!(Lang::parse("zh_cn").ok(), Some(Lang::ZhCn));
        assert_eq!(Lang::parse("EN").ok(), Some(Lang::En));
        assert!(Lang::parse("fr").is_err());
        assert_eq!(serde_json::to_string(&Lang::ZhCn).ok().as_deref(), Some("\"zh-CN\""));
        assert_eq!(Part::parse("HTML").ok(), Some(Part::Html));
        assert!(Part::parse("body").is_err());
    }
}
