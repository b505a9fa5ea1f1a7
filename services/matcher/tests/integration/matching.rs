use zhiwen_core::canon::InputFormat;
use zhiwen_matcher::{MatchKind, MatcherConfig};
use zhiwen_store::{Outcome, Subject};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pirate_page_is_matched_to_the_right_chapter_and_innocent_pages_leave_nothing() {
    let e = env(MatcherConfig::default()).await;
    let ch1 = String::from_utf8(sample("hongloumeng-01.txt")).expect("utf-8");
    let ch3 = classics()["novel-hongloumeng-003"].1.clone();
    let w =
        e.stores.works.upsert_work(&work("HLM", "红楼梦", &[("第一回", &ch1), ("第三回", &ch3)])).await.expect("work");
    let report = e.matcher.index_work(w.id).await.expect("index work");
    assert_eq!(report.indexed, 2);
    // Indexing again skips unchanged sections.
    assert_eq!(e.matcher.index_work(w.id).await.expect("reindex").unchanged, 2);

    let pirate = sample("pirate-copy-big5.html");
    let p1 = e.stores.pages.upsert_page(&html_page("http://pirate.example/hlm/1.html", pirate.clone())).await.unwrap();
    let p2 = e
        .stores
        .pages
        .upsert_page(&html_page("http://other.example/hlm/2.html", sample("other-chapter-gbk.html")))
        .await
        .unwrap();
    let out = e.matcher.match_page(p1.id).await.expect("match pirate");
    assert_eq!(out.matches.len(), 1, "{out:?}");
    let m = &out.matches[0];
    assert_eq!(m.section_id, w.sections[0].1, "matched to chapter 1");
    // The pirate page holds the first part of chapter 1 (with ads, navigation and
    // homophone substitutions): the page is inside the section.
    assert_eq!(m.kind, MatchKind::Excerpt);
    assert!(m.score >= 0.5);
    // Evidence quotes both originals: the section as stored, the page as decoded (Big5, traditional).
    assert!(ch1.contains(&m.evidence_section), "section quote is original text");
    let decoded = zhiwen_core::canon::decode(&pirate, None).expect("decode").text;
    assert!(decoded.contains(&m.evidence_page), "page quote is original text");
    assert!(m.evidence_page.chars().count() >= 50);
    let stored = e.stores.matches.get_match(m.match_id).await.unwrap().expect("stored");
    assert!(!stored.comparison.evidence.is_empty());
    assert!(stored.comparison.evidence.iter().all(|ev| decoded.contains(&ev.b_text) && ch1.contains(&ev.a_text)));

    // The other chapter (not registered) leaves no match record.
    let out2 = e.matcher.match_page(p2.id).await.expect("match other");
    assert!(out2.matches.is_empty(), "{out2:?}");
    assert_eq!(all_matches(&e.stores).await.len(), 1);

    // Idempotent: matching again changes nothing.
    let before = all_matches(&e.stores).await;
    let again = e.matcher.match_page(p1.id).await.expect("again");
    assert_eq!(again.matches[0].outcome, Outcome::Unchanged);
    e.matcher.match_page(p2.id).await.expect("again other");
    assert_eq!(all_matches(&e.stores).await, before);
}

/// A matcher remembers which sections it indexed; a section whose text changed in the
/// store since (another process edited the work) is fingerprinted and indexed again,
/// and pages are matched against the new text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_section_changed_in_the_store_since_it_was_indexed_is_indexed_again() {
    let e = env(MatcherConfig::default()).await;
    let ch1 = String::from_utf8(sample("hongloumeng-01.txt")).expect("utf-8");
    let (before, after) = (chars(&ch1, 0, 1500), chars(&ch1, 1500, 1500));
    let w = e.stores.works.upsert_work(&work("HLM", "红楼梦", &[("第一节", &before)])).await.expect("work");
    assert_eq!(e.matcher.index_work(w.id).await.expect("index").indexed, 1);
    assert_eq!(e.matcher.index_work(w.id).await.expect("index again").unchanged, 1);
    let w2 = e.stores.works.upsert_work(&work("HLM", "红楼梦", &[("第一节", &after)])).await.expect("changed work");
    assert_eq!(w2.id, w.id);
    let report = e.matcher.index_work(w.id).await.expect("index the changed work");
    assert_eq!((report.indexed, report.unchanged), (1, 0));
    assert_eq!(e.matcher.index_work(w.id).await.expect("and again").unchanged, 1);
    let page = e.stores.pages.upsert_page(&text_page("http://pirate.example/hlm/new", &after)).await.expect("page");
    let out = e.matcher.match_page(page.id).await.expect("match");
    assert_eq!(out.matches.len(), 1, "the new text is found: {out:?}");
    // A new title only: the importer drops the fingerprints of an updated work's
    // sections, and the same text is fingerprinted and stored again.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let w3 = e.stores.works.upsert_work(&work("HLM", "红楼梦 新版", &[("第一节", &after)])).await.expect("new title");
    assert_eq!(w3.outcome, Outcome::Updated);
    for (_, id) in &w3.sections {
        e.stores.fingerprints.delete_fingerprints(Subject::section(*id)).await.expect("drop fingerprints");
    }
    assert_eq!(e.matcher.index_work(w.id).await.expect("index the renamed work").indexed, 1);
    let id = w3.sections[0].1;
    let stored = e.stores.fingerprints.get_fingerprints(Subject::section(id)).await.expect("read").expect("stored");
    // What is stored of a section: its fingerprints without the word shingles, which
    // nothing reads back.
    let made = e.matcher.fingerprinter().analyze_text(&after, InputFormat::Text).expect("analysis").fingerprints;
    assert!(!made.shingles.is_empty());
    assert_eq!(stored.fingerprints, made.without_word_shingles());
    assert!(stored.fingerprints.shingles.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn excerpt_and_embedded_kinds_and_the_reverse_direction() {
    let c = classics();
    let e = env(MatcherConfig::default()).await;
    let sg1 = &c["novel-sanguo-001"].1;
    let sg2 = &c["novel-sanguo-002"].1;
    let xy1 = &c["novel-xiyouji-001"].1;
    let xy2 = &c["novel-xiyouji-002"].1;
    // Pages stored BEFORE the work exists.
    let excerpt = format!("{}{}{}", chars(xy1, 0, 2500), chars(sg1, 1000, 700), chars(xy2, 0, 2500));
    let embedded = format!("{}{}{}", chars(xy2, 0, 3000), sg2, chars(xy1, 3000, 3000));
    let innocent = c["novel-shuihu-010"].1.clone();
    let mut ids = Vec::new();
    for (url, text) in [
        ("http://blog.example/a", excerpt.as_str()),
        ("http://mirror.example/b", embedded.as_str()),
        ("http://shuihu.example/c", innocent.as_str()),
    ] {
        let p = e.stores.pages.upsert_page(&text_page(url, text)).await.unwrap();
        assert_eq!(e.matcher.index_page(p.id).await.unwrap().indexed, 1);
        ids.push(p.id);
    }
    let w = e.stores.works.upsert_work(&work("SG", "三国演义", &[("第一回", sg1), ("第二回", sg2)])).await.unwrap();
    let out = e.matcher.match_work(w.id).await.expect("reverse");
    let mut found: Vec<(i64, i64, MatchKind)> = out.matches.iter().map(|m| (m.section_id, m.page_id, m.kind)).collect();
    found.sort();
    assert_eq!(
        found,
        vec![(w.sections[0].1, ids[0], MatchKind::Excerpt), (w.sections[1].1, ids[1], MatchKind::Embedded)],
        "{out:?}"
    );
    // The forward direction agrees pair by pair.
    let before = all_matches(&e.stores).await;
    for id in &ids {
        e.matcher.match_page(*id).await.expect("forward");
    }
    assert_eq!(all_matches(&e.stores).await, before);
}

/// Pages matched in a batch before any work exists have no candidate, so their analyses
/// are released between their lookup and their verification: their page-namespace keys
/// are still written, and a work registered afterwards finds its copy among them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_without_candidates_are_still_found_by_a_later_work() {
    let c = classics();
    let e = env(MatcherConfig::default()).await;
    let sg1 = &c["novel-sanguo-001"].1;
    let xy1 = &c["novel-xiyouji-001"].1;
    let excerpt = format!("{}{}", chars(xy1, 0, 2500), chars(sg1, 1000, 700));
    let mut ids = Vec::new();
    for (url, text) in
        [("http://blog.example/a", excerpt.as_str()), ("http://shuihu.example/c", &c["novel-shuihu-010"].1)]
    {
        ids.push(e.stores.pages.upsert_page(&text_page(url, text)).await.unwrap().id);
    }
    let outcomes = e.matcher.match_pages(ids.clone()).await.expect("batch");
    assert!(outcomes.iter().all(|(_, r)| r.as_ref().is_ok_and(|o| o.candidates == 0 && o.matches.is_empty())));
    let w = e.stores.works.upsert_work(&work("SG", "三国演义", &[("第一回", sg1)])).await.unwrap();
    let out = e.matcher.match_work(w.id).await.expect("reverse");
    let found: Vec<(i64, MatchKind)> = out.matches.iter().map(|m| (m.page_id, m.kind)).collect();
    assert_eq!(found, vec![(ids[0], MatchKind::Excerpt)], "{out:?}");
}

/// A copy on a domain its holder licensed is recorded as `licensed`, without a capture;
/// changing the list re-labels the stored matches both ways, and a second run changes
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matches_on_licensed_domains_are_labelled_and_relabelled() {
    use zhiwen_matcher::licensed::{relabel, Relabelled, LICENSED_BY};
    use zhiwen_store::{Holder, LicensedDomain, MatchQuery, ReviewStatus, TaskState, Timestamp};

    let e = env(MatcherConfig::default()).await;
    let ch1 = String::from_utf8(sample("hongloumeng-01.txt")).expect("utf-8");
    let w = e.stores.works.upsert_work(&work("HLM", "红楼梦", &[("第一回", &ch1)])).await.expect("work");
    e.matcher.index_work(w.id).await.expect("index work");
    let mut holder = Holder::empty("demo-press");
    holder.licensed.push(LicensedDomain {
        domain: "partner.example".into(),
        work_id: None,
        added_at: Timestamp(1),
        added_by: "admin".into(),
    });
    let holder = e.stores.cases.put_holder(&holder).await.expect("holder");

    let pirate = sample("pirate-copy-big5.html");
    let licensed_page =
        e.stores.pages.upsert_page(&html_page("http://www.partner.example/hlm/1.html", pirate.clone())).await.unwrap();
    let pirate_page = e.stores.pages.upsert_page(&html_page("http://pirate.example/hlm/1.html", pirate)).await.unwrap();
    let on_partner = e.matcher.match_page(licensed_page.id).await.expect("match").matches;
    let on_pirate = e.matcher.match_page(pirate_page.id).await.expect("match").matches;
    assert_eq!((on_partner.len(), on_pirate.len()), (1, 1));
    assert!(on_partner[0].licensed && !on_pirate[0].licensed);
    let stored = e.stores.matches.get_match(on_partner[0].match_id).await.unwrap().unwrap();
    assert_eq!(stored.status, ReviewStatus::Licensed);
    assert_eq!(stored.review_log.last().map(|r| r.by.as_str()), Some(LICENSED_BY));
    // Only the infringing copy is queued for an evidence capture.
    let queued = e.stores.tasks.list_tasks(Some(TaskState::Queued), None, 0, 100).await.unwrap();
    let keys: Vec<&str> = queued.iter().map(|t| t.key.as_str()).collect();
    assert_eq!(keys, [format!("capture:match:{}:first_match", on_pirate[0].match_id)]);

    // The partner leaves the list and the pirate site joins it: both are re-labelled.
    let mut changed = holder.clone();
    changed.licensed[0].domain = "pirate.example".into();
    let changed = e.stores.cases.put_holder(&changed).await.unwrap();
    assert_eq!(relabel(&e.stores, &changed).await.unwrap(), Relabelled { licensed: 1, unlicensed: 1 });
    assert_eq!(relabel(&e.stores, &changed).await.unwrap(), Relabelled::default());
    let status = |id| {
        let s = e.stores.clone();
        async move { s.matches.get_match(id).await.unwrap().unwrap().status }
    };
    assert_eq!(status(on_partner[0].match_id).await, ReviewStatus::New);
    assert_eq!(status(on_pirate[0].match_id).await, ReviewStatus::Licensed);
    // A dismissed match keeps its status.
    e.stores
        .matches
        .set_review(on_partner[0].match_id, ReviewStatus::Dismissed, "r", None, Timestamp(9))
        .await
        .unwrap();
    let mut back = changed.clone();
    back.licensed[0].domain = "partner.example".into();
    let back = e.stores.cases.put_holder(&back).await.unwrap();
    assert_eq!(relabel(&e.stores, &back).await.unwrap(), Relabelled { licensed: 0, unlicensed: 1 });
    let licensed = MatchQuery { status: Some(ReviewStatus::Licensed), ..MatchQuery::default() };
    assert!(e.stores.matches.list_matches(&licensed, 0, 10).await.unwrap().is_empty());
}

/// A section cache that keeps nothing (`section_cache_mb = 0`: every analysis is over the
/// budget and dropped at once) changes no verdict: a candidate section that is not cached
/// is read and analysed again, and an entry completed after it left is weighed for nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_section_cache_that_keeps_nothing_finds_the_same_copies() {
    let mut found = Vec::new();
    for mb in [0, MatcherConfig::default().section_cache_mb] {
        let e = env(MatcherConfig { section_cache_mb: mb, ..Default::default() }).await;
        let ch1 = String::from_utf8(sample("hongloumeng-01.txt")).expect("utf-8");
        let ch3 = classics()["novel-hongloumeng-003"].1.clone();
        let w = e
            .stores
            .works
            .upsert_work(&work("HLM", "红楼梦", &[("第一回", &ch1), ("第三回", &ch3)]))
            .await
            .expect("work");
        e.matcher.index_work(w.id).await.expect("index work");
        let page = html_page("http://pirate.example/hlm/1.html", sample("pirate-copy-big5.html"));
        let p = e.stores.pages.upsert_page(&page).await.expect("page");
        let out = e.matcher.match_page(p.id).await.expect("match");
        let again = e.matcher.match_page(p.id).await.expect("match again");
        assert!(again.matches.iter().all(|m| m.outcome == Outcome::Unchanged), "{again:?}");
        found.push(out.matches.iter().map(|m| (m.kind, m.score, m.evidence_page.clone())).collect::<Vec<_>>());
    }
    assert_eq!(found[0].len(), 1, "{found:?}");
    assert_eq!(found[0], found[1]);
}

/// A matcher indexing sections 1 in 8 (`section_index_sampling = 8`) with chapter one of
/// the bundled sample registered and indexed: the environment, the chapter's text and
/// its section's id.
async fn sampled_chapter_one() -> (Env, String, i64) {
    let e = env(MatcherConfig { section_index_sampling: 8, ..MatcherConfig::default() }).await;
    let ch1 = String::from_utf8(sample("hongloumeng-01.txt")).expect("utf-8");
    let w = e.stores.works.upsert_work(&work("HLM", "红楼梦", &[("第一回", &ch1)])).await.expect("work");
    e.matcher.index_work(w.id).await.expect("index work");
    (e, ch1, w.sections[0].1)
}

/// Sections enter the index with 1 in 8 of their winnowed keys and nothing else
/// (`section_index_sampling = 8`), and the store records that layout: a matcher
/// configured with every key still looks a page up as coarsely as the sections were
/// written, and finds the same copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_is_looked_up_as_coarsely_as_the_sections_were_indexed() {
    let (e, ch1, _) = sampled_chapter_one().await;
    let fp = zhiwen_core::Fingerprinter::new(zhiwen_core::Params::default()).expect("fingerprinter");
    let every =
        fp.analyze_text(&ch1, zhiwen_core::canon::InputFormat::Text).expect("analysis").fingerprints.index_keys();
    let stats = e.matcher.index().stats().await.expect("stats");
    let postings = stats.namespace(zhiwen_index::Namespace::Sections).postings;
    assert!(postings > 0 && postings * 6 < every.len() as u64, "{postings} postings of {} keys", every.len());

    let page = e.stores.pages.upsert_page(&html_page("http://pirate.example/1", sample("pirate-copy-big5.html"))).await;
    let page = page.expect("page").id;
    let sampled = e.matcher.match_page(page).await.expect("match");
    assert_eq!(sampled.matches.len(), 1, "{sampled:?}");

    let config = MatcherConfig { section_index_sampling: 1, ..MatcherConfig::default() };
    let finer = zhiwen_matcher::Matcher::new(e.stores.clone(), e.matcher.index().clone(), fp, config);
    let out = finer.match_page(page).await.expect("match");
    assert_eq!(out.matches.len(), 1, "{out:?}");
    assert_eq!(out.matches[0].outcome, Outcome::Unchanged);
    assert_eq!(out.keys_looked_up, sampled.keys_looked_up, "looked up as the sections were indexed");
}

/// With 1 in 8 keys indexed, one shared sampled key makes a candidate: a page holding a
/// 10-character run of a section (at most 3 shared winnowed keys) is one when the run
/// holds a sampled key. The section's stored winnowed keys rule it out before its text is
/// read (nothing verified); without them (a store written before they existed) the
/// candidate is verified as before, and is no copy either way. The whole chapter copied
/// is found with the keys.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chance_candidate_of_the_sampled_layout_is_ruled_out_by_the_stored_keys() {
    let (e, ch1, section) = sampled_chapter_one().await;
    // The cached analysis of the section is not trusted in a new epoch: the stored keys are read.
    e.matcher.revalidate_sections();
    let filler = "今天下午我们公司开会讨论明年的销售计划，经理要求每个部门提交详细的预算报告。";
    let chars: Vec<char> = ch1.chars().collect();
    let mut chance = None;
    for (i, start) in (0..chars.len().saturating_sub(10)).step_by(3).enumerate() {
        let run: String = chars[start..start + 10].iter().collect();
        let page = text_page(&format!("http://chance.example/{i}"), &format!("{filler}{run}{filler}"));
        let p = e.stores.pages.upsert_page(&page).await.expect("page").id;
        let out = e.matcher.match_page(p).await.expect("match");
        if out.candidates > 0 {
            chance = Some((p, out));
            break;
        }
    }
    let (p, out) = chance.expect("a 10-character run sharing a sampled key");
    assert_eq!((out.candidates, out.verified, out.matches.len()), (1, 0, 0), "{out:?}");

    let copy = e.stores.pages.upsert_page(&text_page("http://pirate.example/whole", &ch1)).await.expect("page").id;
    let found = e.matcher.match_page(copy).await.expect("match");
    assert_eq!((found.verified, found.matches.len()), (1, 1), "{found:?}");

    e.stores.fingerprints.delete_fingerprints(Subject::section(section)).await.expect("delete");
    e.matcher.revalidate_sections();
    let out = e.matcher.match_page(p).await.expect("match");
    assert_eq!((out.candidates, out.verified, out.matches.len()), (1, 1, 0), "{out:?}");
}

/// A work indexed by one process is marked in the store with its version and the
/// parameter tag; a new process (a new matcher over the same store and index) trusts the
/// mark and reads none of the work's sections, finds its copies all the same, and checks
/// the sections again when the mark is gone or the work changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_matcher_reads_no_section_of_a_work_marked_indexed_at_its_version() {
    let e = env(MatcherConfig::default()).await;
    let ch1 = String::from_utf8(sample("hongloumeng-01.txt")).expect("utf-8");
    let (first, second) = (chars(&ch1, 0, 1500), chars(&ch1, 1500, 1500));
    let w = e.stores.works.upsert_work(&work("HLM", "红楼梦", &[("一", &first), ("二", &second)])).await.expect("work");
    assert_eq!(e.matcher.index_work(w.id).await.expect("index").indexed, 2);
    let tag = e.matcher.fingerprinter().params_tag().to_owned();
    let version = e.stores.queries.work_summary(w.id).await.unwrap().expect("work").updated_at.0;
    assert_eq!(e.stores.fingerprints.indexed_works(&tag).await.unwrap(), vec![(w.id, version)]);
    assert!(e.stores.fingerprints.indexed_works("another tag").await.unwrap().is_empty());

    let new_process = || {
        let fp = zhiwen_core::Fingerprinter::new(zhiwen_core::Params::default()).expect("fingerprinter");
        zhiwen_matcher::Matcher::new(e.stores.clone(), e.matcher.index().clone(), fp, MatcherConfig::default())
    };
    // To see that no section is read, one section's fingerprints are dropped behind the
    // matcher's back (nothing in zhiwen does that without changing the work's version):
    // a matcher that checked the sections would write them again.
    let dropped = Subject::section(w.sections[0].1);
    e.stores.fingerprints.delete_fingerprints(dropped).await.unwrap();
    let second_process = new_process();
    let report = second_process.index_work(w.id).await.expect("index in a new process");
    assert_eq!((report.indexed, report.unchanged), (0, 2));
    assert!(e.stores.fingerprints.get_fingerprints(dropped).await.unwrap().is_none(), "no section was read");
    // The index written by the first process serves the second.
    let page = e.stores.pages.upsert_page(&text_page("http://pirate.example/hlm/2", &second)).await.expect("page");
    let out = second_process.match_page(page.id).await.expect("match");
    assert_eq!(out.matches.iter().map(|m| m.section_id).collect::<Vec<_>>(), vec![w.sections[1].1]);

    // No mark (a store migrated from before marks, or a write that stopped half way): the
    // sections are checked, the missing record written again, and the work marked.
    e.stores.fingerprints.unmark_work_indexed(w.id).await.unwrap();
    let report = new_process().index_work(w.id).await.expect("index without the mark");
    assert_eq!((report.indexed, report.unchanged), (1, 1));
    assert!(e.stores.fingerprints.get_fingerprints(dropped).await.unwrap().is_some());
    assert_eq!(e.stores.fingerprints.indexed_works(&tag).await.unwrap(), vec![(w.id, version)]);

    // A changed work has a newer version than its mark: checked, and marked again.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let changed = chars(&ch1, 3000, 1500);
    let w2 = e.stores.works.upsert_work(&work("HLM", "红楼梦", &[("一", &first), ("二", &changed)])).await.unwrap();
    assert_eq!(w2.outcome, Outcome::Updated);
    let report = new_process().index_work(w.id).await.expect("index the changed work");
    assert_eq!((report.indexed, report.unchanged), (1, 1));
    let newer = e.stores.queries.work_summary(w.id).await.unwrap().expect("work").updated_at.0;
    assert!(newer > version);
    assert_eq!(e.stores.fingerprints.indexed_works(&tag).await.unwrap(), vec![(w.id, newer)]);
}
