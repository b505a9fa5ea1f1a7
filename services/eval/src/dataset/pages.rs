//! The pages of the set: a positive page copies a registered section through its class's
//! transformation onto a pirate site's layout; a negative page is unrelated or only shares
//! what is not copying (set phrases, a broadcast's opening, refilled figures).

use zhiwen_core::formulaic;

use super::formulae;
use super::site::{self, Para, Rendered, Site};
use super::transform::{self, paragraphs, sentences};
use super::{CopyLabel, Page, PageClass, Section, WorkKind};
use crate::corpus::CorpusDoc;
use crate::rng::Rng;
use crate::EvalError;

use super::generate::Generator;

impl Generator<'_> {
    pub(super) fn positive(&mut self, class: PageClass, i: usize, r: &mut Rng) -> Result<Page, EvalError> {
        let kind = if i % 2 == 1 { WorkKind::News } else { WorkKind::Novel };
        let (work, section) = {
            let list = self.sections(kind);
            let (w, s) = r.pick(&list).ok_or_else(|| EvalError::NotEnoughData("no sections".into()))?;
            ((*w).clone(), (*s).clone())
        };
        let mut transforms: Vec<PageClass> = match class {
            PageClass::Combined => {
                let mut all = vec![
                    PageClass::Truncated,
                    PageClass::Reordered,
                    PageClass::Homophone,
                    PageClass::Edits,
                    PageClass::Traditional,
                    PageClass::Reformatted,
                    PageClass::Ads,
                ];
                r.shuffle(&mut all);
                let mut chosen: Vec<PageClass> = all[..r.range(2, 3)].to_vec();
                // Apply in the order a pirate would: cut, shuffle, edit, convert, reflow, ads.
                chosen.sort_by_key(|c| all_order(*c));
                chosen
            }
            c => vec![c],
        };
        transforms.dedup();
        let mut paras = paragraphs(&section.text);
        let mut title = match kind {
            WorkKind::Novel => section.title.clone(),
            WorkKind::News => work.title.clone(),
        };
        let mut filler: Option<CorpusDoc> = None;
        let mut homophone_share = None;
        // Text-level steps.
        for t in &transforms {
            match t {
                PageClass::Truncated => paras = transform::truncate(&paras, 0.3, 0.6, r),
                PageClass::Reordered => paras = transform::reorder(paras, r),
                PageClass::Excerpt => {
                    paras = transform::excerpt(&paras, 0.2, 0.4, r);
                    filler = Some(self.draw_filler()?);
                }
                _ => {}
            }
        }
        let mut content = transform::as_copied(&paras);
        for t in &transforms {
            match t {
                PageClass::Homophone => {
                    let (n, han) = transform::homophones(&mut content, &self.tools, r.uniform(0.05, 0.15), r);
                    homophone_share = Some(n as f64 / han.max(1) as f64);
                }
                PageClass::Edits => transform::edits(&mut content, &self.tools, r.uniform(0.05, 0.10), r),
                PageClass::Traditional => {
                    transform::traditional(&mut content, &self.tools);
                    title = self.tools.s2t.convert(&title);
                }
                PageClass::Reformatted => content = transform::reformat(content, r),
                PageClass::Ads => {
                    let split: Vec<String> = transform::at_least_paragraphs(
                        content.iter().map(|p| p.iter().map(|x| x.text.as_str()).collect::<String>()).collect(),
                        6,
                    );
                    let resplit = if content.iter().all(|p| p.len() == 1 && p[0].copied) {
                        transform::as_copied(&split)
                    } else {
                        content.clone()
                    };
                    content = transform::ads(resplit, &self.tools, r);
                }
                _ => {}
            }
        }
        if let Some(f) = &filler {
            let host = transform::at_least_paragraphs(paragraphs(&f.text), 2);
            let at = r.range(1, host.len().max(1)).min(host.len());
            let mut mixed: Vec<Para> = host[..at].iter().map(|p| site::other(p.clone())).collect();
            mixed.extend(content);
            mixed.extend(host[at..].iter().map(|p| site::other(p.clone())));
            content = mixed;
            title = f.title.clone();
        }
        let traditional = transforms.contains(&PageClass::Traditional);
        let site = self.pick_site(kind, traditional, r);
        let copy_len = transform::copied_len(&content);
        let rendered = site::render(&site, &title, &content, &self.portal, r);
        let copied_chars = content_chars(&rendered.html, &rendered.copied);
        let label = CopyLabel {
            work_id: work.id.clone(),
            section_id: section.id.clone(),
            copied: rendered.copied.clone(),
            copied_chars,
            section_share: copy_len as f64
                / paragraphs(&section.text).iter().map(|p| p.chars().count()).sum::<usize>().max(1) as f64,
            homophone_share,
        };
        let names = if class == PageClass::Combined {
            transforms.iter().map(|t| t.as_str().to_owned()).collect()
        } else {
            Vec::new()
        };
        Ok(self.page(class, i, names, &site, rendered, kind, section.id.clone(), Some(label)))
    }

    fn pick_site(&self, kind: WorkKind, traditional: bool, r: &mut Rng) -> Site {
        if traditional && r.chance(0.5) {
            return site::TRADITIONAL_SITE;
        }
        match kind {
            WorkKind::Novel => site::NOVEL_SITES[r.below(site::NOVEL_SITES.len())].clone(),
            WorkKind::News if r.chance(0.2) => site::PORTAL,
            WorkKind::News => site::NEWS_SITES[r.below(site::NEWS_SITES.len())].clone(),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn page(
        &self,
        class: PageClass,
        i: usize,
        transforms: Vec<String>,
        site: &Site,
        rendered: Rendered,
        kind: WorkKind,
        source: String,
        label: Option<CopyLabel>,
    ) -> Page {
        let id = format!("{}-{i:04}", class.as_str());
        Page {
            url: format!("https://{}/{}/{}.html", site.domain, class.as_str(), 10_000 + i),
            site: site.name.to_owned(),
            charset: site.encoding.name().to_owned(),
            http_charset: site.http_charset.then(|| site.encoding.name().to_owned()),
            bytes: rendered.bytes,
            html: rendered.html,
            id,
            class,
            transforms,
            kind,
            source,
            label,
        }
    }

    pub(super) fn negative(&mut self, class: PageClass, i: usize, r: &mut Rng) -> Result<Option<Page>, EvalError> {
        let ex = &mut self.notes.near_duplicates_excluded;
        let (doc, kind) = match class {
            PageClass::OtherChapter => (self.other_chapters.draw(&self.registered, ex), WorkKind::Novel),
            PageClass::SameDayNews => (self.same_day.draw(&self.registered, ex), WorkKind::News),
            _ => (self.filler.draw(&self.registered, ex), WorkKind::News),
        };
        // A class runs out when the corpus has no more distinct texts of its kind.
        let Some(doc) = doc else { return Ok(None) };
        let paras = paragraphs(&doc.text);
        let title = match kind {
            WorkKind::Novel => doc.title.split_once(' ').map_or(doc.title.as_str(), |(_, h)| h).to_owned(),
            WorkKind::News => doc.title.clone(),
        };
        let (site, content) = match class {
            PageClass::OtherChapter => (self.pick_site(kind, false, r), transform::as_copied(&paras)),
            PageClass::SameDayNews => (site::NEWS_SITES[r.below(2)].clone(), transform::as_copied(&paras)),
            PageClass::SiteTemplate => (site::PORTAL, transform::as_copied(&paras)),
            PageClass::TemplatedReport => {
                let Some(template) = self.refilled_paragraph(r) else { return Ok(None) };
                let mut paras = paras;
                let at = r.below(paras.len() + 1);
                paras.insert(at, template);
                (site::NEWS_SITES[r.below(2)].clone(), transform::as_copied(&paras))
            }
            PageClass::LinkSpam => {
                let Some(list) = self.link_list(r) else { return Ok(None) };
                let mut paras = paras;
                // Spam pages mostly end with their links.
                let at = if r.chance(0.5) { paras.len() } else { r.below(paras.len() + 1) };
                paras.insert(at, list);
                (site::NEWS_SITES[r.below(2)].clone(), transform::as_copied(&paras))
            }
            PageClass::OfficialFormulae => {
                let Some(remarks) = self.stock_remarks(r) else { return Ok(None) };
                let mut paras = paras;
                let at = r.below(paras.len() + 1);
                paras.insert(at, remarks);
                (site::NEWS_SITES[r.below(2)].clone(), transform::as_copied(&paras))
            }
            _ => (site::NEWS_SITES[r.below(2)].clone(), self.with_common_phrases(&paras, r)),
        };
        // Nothing on a negative page is copied from a registered section.
        let content: Vec<Para> =
            content.into_iter().map(|p| p.into_iter().map(|x| site::Piece { copied: false, ..x }).collect()).collect();
        let rendered = site::render(&site, &title, &content, &self.portal, r);
        Ok(Some(self.page(class, i, Vec::new(), &site, rendered, kind, doc.id, None)))
    }

    /// A paragraph of a registered news story (100 characters or more, at most a third
    /// of the story, with at least three figure characters: digits, and Chinese numerals
    /// that write a number, [`number_chars`], and no run of `min_excerpt_chars` content
    /// characters without one) with every one of them changed: digits
    /// shifted by 1-8, Chinese numerals replaced by other numerals. `None` when no
    /// registered story has such a paragraph.
    fn refilled_paragraph(&self, r: &mut Rng) -> Option<String> {
        let min_excerpt = zhiwen_core::compare::Thresholds::default().min_excerpt_chars;
        let candidates: Vec<Vec<char>> = self
            .sections(WorkKind::News)
            .into_iter()
            .flat_map(|(_, s)| {
                // The formula is a part of the story, not the whole of it: a page that holds
                // all of a registered story, figures changed, is a copy by containment.
                let whole = s.text.chars().count();
                paragraphs(&s.text).into_iter().filter(move |p| p.chars().count() * 3 <= whole)
            })
            .map(|p| p.chars().collect::<Vec<char>>())
            // Only figures the refilling changes count: a paragraph whose figures are all
            // of other kinds (`两`, `万`) would come out verbatim, a real copy of it, and
            // one whose numerals are words (`一个`, `一旦`, `二娘`) is prose, not a template.
            .filter(|p| p.len() >= 100 && formulaic::number_chars(p).iter().filter(|&&n| n).count() >= 3)
            // Nor is one whose figures all lie at its ends: the fixed wording between two
            // slots is a formula, but a run of `min_excerpt_chars` content characters left
            // as it was is an excerpt of the story by the product's own definition (a
            // court case told in 137 characters after its date), not a template.
            .filter(|p| longest_fixed_run(p) < min_excerpt)
            .collect();
        let para = r.pick(&candidates)?;
        let shift = r.range(1, 9) as u32;
        let numbers = formulaic::number_chars(para);
        Some(
            para.iter()
                .zip(numbers)
                .map(|(&c, number)| match c.to_digit(10) {
                    _ if !number => c,
                    Some(d) if c.is_ascii_digit() => char::from_digit((d + shift) % 10, 10).unwrap_or(c),
                    _ => match formulaic::NUMERALS.iter().position(|&n| n == c) {
                        Some(i) => formulaic::NUMERALS[(i + shift as usize) % formulaic::NUMERALS.len()],
                        None => c,
                    },
                })
                .collect(),
        )
    }

    /// 6-12 links of the hosts of one registered story's URLs (or of a corpus link-list
    /// page's, when no registered story has a URL), each drawn again
    /// ([`formulae::refill_url`]): run together as spam pages do, or one a line.
    fn link_list(&self, r: &mut Rng) -> Option<String> {
        let source = r.pick(&self.link_sources)?;
        let n = r.range(6, 12);
        let links: Vec<String> = (0..n).map(|k| formulae::refill_url(&source[k % source.len()], r)).collect();
        Some(if r.chance(0.5) { links.concat() } else { links.join("\n") })
    }

    /// The stock text of one registered story (at most 12 of its runs of stock clauses),
    /// the runs shuffled, as another speaker's remarks: runs joined by commas.
    fn stock_remarks(&self, r: &mut Rng) -> Option<String> {
        let (_, stock) = r.pick(&self.stock_of)?;
        let mut picked = stock.clone();
        r.shuffle(&mut picked);
        picked.truncate(12);
        Some(format!("{}。", picked.join("，")))
    }

    /// Unrelated text with 10-25 set phrases stitched in at sentence ends: two thirds
    /// idioms found in one registered section, the rest 6-grams common to several sections.
    fn with_common_phrases(&self, paras: &[String], r: &mut Rng) -> Vec<Para> {
        let all: Vec<&Section> = self.works.iter().flat_map(|w| &w.sections).collect();
        let target = r.pick(&all).map(|s| s.id.clone()).unwrap_or_default();
        let idioms = self.phrases_of.get(&target).cloned().unwrap_or_default();
        let n = r.range(10, 25);
        let mut phrases = Vec::new();
        for k in 0..n {
            let from = if k % 3 == 2 || idioms.is_empty() { &self.common } else { &idioms };
            if let Some(p) = r.pick(from) {
                phrases.push(p.clone());
            }
        }
        let mut sents: Vec<String> = paras.iter().flat_map(|p| sentences(p)).collect();
        for p in phrases {
            let at = r.below(sents.len() + 1);
            let filler = ["真可谓", "正所谓", "有人说", "可谓是"];
            let line = format!("{}{p}。", filler[r.below(filler.len())]);
            sents.insert(at, line);
        }
        let per = (sents.len() / 4).max(1);
        sents.chunks(per).map(|c| site::other(c.concat())).collect()
    }
}

fn all_order(c: PageClass) -> usize {
    match c {
        PageClass::Truncated => 0,
        PageClass::Reordered => 1,
        PageClass::Homophone => 2,
        PageClass::Edits => 3,
        PageClass::Traditional => 4,
        PageClass::Reformatted => 5,
        PageClass::Ads => 6,
        _ => 7,
    }
}

/// Letters, digits and Han characters of `text` inside the character ranges.
pub fn content_chars(text: &str, ranges: &[(usize, usize)]) -> usize {
    let chars: Vec<char> = text.chars().collect();
    ranges
        .iter()
        .map(|&(s, e)| chars[s.min(chars.len())..e.min(chars.len())].iter().filter(|c| c.is_alphanumeric()).count())
        .sum()
}

/// The longest run of content characters (letters, digits, Han) of `para` between two
/// of its figures ([`formulaic::number_chars`]), or before the first or after the last:
/// what a refilling of its figures leaves as it was.
fn longest_fixed_run(para: &[char]) -> usize {
    let (mut run, mut longest) = (0usize, 0usize);
    for (c, number) in para.iter().zip(formulaic::number_chars(para)) {
        if number {
            run = 0;
        } else if c.is_alphanumeric() {
            run += 1;
            longest = longest.max(run);
        }
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_run_is_the_longest_stretch_between_figures() {
        let chars = |s: &str| s.chars().collect::<Vec<char>>();
        // Content characters only: punctuation is not counted.
        assert_eq!(longest_fixed_run(&chars("第十九次会议于22日召开，审议通过报告。")), 9);
        assert_eq!(longest_fixed_run(&chars("2019年")), 1);
        let court = format!("2019年3月，{}", "原告发现某商店擅自销售侵权商品".repeat(8));
        assert_eq!(longest_fixed_run(&chars(&court)), 121);
    }
}
