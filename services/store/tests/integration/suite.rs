//! The conformance cases: every backend must pass each of them unchanged.

use serde_json::json;
use zhiwen_store::*;

use crate::fixtures::*;

fn is_invalid(e: &StoreError) -> bool {
    matches!(e, StoreError::InvalidInput { .. }) && e.is_user_error() && !e.is_retryable()
}

pub async fn works_round_trip_and_idempotence(s: &Stores) {
    let w = work("zhonghua", "sg-001");
    let first = s.works.upsert_work(&w).await.unwrap();
    assert_eq!(first.outcome, Outcome::Inserted);
    assert_eq!(first.sections.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 1]);

    let stored = s.works.get_work(first.id).await.unwrap().unwrap();
    assert_eq!((stored.owner.as_str(), stored.external_id.as_str()), ("zhonghua", "sg-001"));
    assert_eq!((stored.title.as_str(), stored.author.as_str()), ("三国演义", "罗贯中"));
    assert_eq!(stored.text, w.text);
    assert_eq!(stored.charset.as_deref(), Some("GB18030"));
    assert_eq!(stored.source_file.as_deref(), Some("sanguo.txt"));
    assert_eq!(stored.section_count, 2);
    assert_eq!(s.works.find_work("zhonghua", "sg-001").await.unwrap().unwrap(), stored);
    assert!(s.works.find_work("other", "sg-001").await.unwrap().is_none());

    let sections = s.works.sections_of(first.id).await.unwrap();
    assert_eq!(sections.len(), 2);
    assert_eq!(sections[1].text, TEXT_B);
    assert_eq!(sections[1].char_start, TEXT_A.chars().count() as u64);
    assert_eq!(s.works.get_section(sections[0].id).await.unwrap().unwrap(), sections[0]);
    // Several in one read: ascending, each once, unknown ids left out.
    let ids = [sections[1].id, i64::MAX, sections[0].id, sections[1].id];
    assert_eq!(s.works.get_sections(&ids).await.unwrap(), sections);
    assert!(s.works.get_sections(&[]).await.unwrap().is_empty());

    // Re-importing the same work changes nothing and duplicates nothing.
    let again = s.works.upsert_work(&w).await.unwrap();
    assert_eq!(again, WorkUpserted { outcome: Outcome::Unchanged, ..first.clone() });
    assert_eq!(s.works.count_works().await.unwrap(), 1);
    assert_eq!(s.works.get_work(first.id).await.unwrap().unwrap(), stored);

    // A changed work keeps its id and the ids of its surviving sections.
    let mut changed = w.clone();
    changed.title = "三国志通俗演义".into();
    changed.text = TEXT_A.into();
    changed.sections.truncate(1);
    let updated = s.works.upsert_work(&changed).await.unwrap();
    assert_eq!(updated.id, first.id);
    assert_eq!(updated.outcome, Outcome::Updated);
    assert_eq!(updated.sections, vec![first.sections[0]]);
    assert_eq!(s.works.sections_of(first.id).await.unwrap().len(), 1);
    assert!(s.works.get_section(first.sections[1].1).await.unwrap().is_none());
    assert_eq!(s.works.get_work(first.id).await.unwrap().unwrap().title, "三国志通俗演义");

    // `updated_at` (what the matcher trusts to skip unchanged works) moves forward on every
    // change, even several within one millisecond, and stays put when nothing changed.
    let mut last = s.works.get_work(first.id).await.unwrap().unwrap().updated_at;
    assert!(last > stored.updated_at);
    for title in ["甲", "乙", "丙"] {
        let mut w = changed.clone();
        w.title = title.into();
        s.works.upsert_work(&w).await.unwrap();
        let summary = s.queries.work_summary(first.id).await.unwrap().unwrap();
        assert!(summary.updated_at > last, "{title}: {summary:?}");
        last = summary.updated_at;
    }
    let mut w = changed.clone();
    w.title = "丙".into();
    assert_eq!(s.works.upsert_work(&w).await.unwrap().outcome, Outcome::Unchanged);
    let listed = s.works.list_works(None, 0, 10).await.unwrap();
    assert_eq!(listed[0].updated_at, last);

    // The same external id under another owner is another work.
    let other = s.works.upsert_works(&[work("renmin", "sg-001"), work("renmin", "sg-002")]).await.unwrap();
    assert!(other.iter().all(|o| o.outcome == Outcome::Inserted));
    let ids: std::collections::HashSet<_> = other.iter().map(|o| o.id).chain([first.id]).collect();
    assert_eq!(ids.len(), 3);

    // Listing pages by id.
    let all = s.works.list_works(None, 0, 2).await.unwrap();
    assert_eq!(all.len(), 2);
    let rest = s.works.list_works(None, all[1].id, 10).await.unwrap();
    assert_eq!(rest.len(), 1);
    assert!(all[0].id < all[1].id && all[1].id < rest[0].id);
    let renmin = s.works.list_works(Some("renmin"), 0, 10).await.unwrap();
    assert_eq!(renmin.iter().map(|w| w.external_id.as_str()).collect::<Vec<_>>(), vec!["sg-001", "sg-002"]);
    assert!(is_invalid(&s.works.list_works(None, 0, 0).await.unwrap_err()));

    // Every work's version in one read, as the listing has them, and a change moves it.
    let everything = s.works.list_works(None, 0, 100).await.unwrap();
    let versions = s.works.work_versions().await.unwrap();
    assert_eq!(versions, everything.iter().map(|w| (w.id, w.updated_at)).collect::<Vec<_>>());
    let mut w = changed.clone();
    w.title = "丁".into();
    s.works.upsert_work(&w).await.unwrap();
    let after = s.works.work_versions().await.unwrap();
    let moved: Vec<i64> =
        versions.iter().zip(&after).filter(|(before, now)| before.1 != now.1).map(|(_, now)| now.0).collect();
    assert_eq!(moved, vec![first.id], "only the changed work has a new version");
}

pub async fn works_bad_input_writes_nothing(s: &Stores) {
    let mut empty = work("o", "empty");
    empty.text = "  \n".into();
    assert!(is_invalid(&s.works.upsert_work(&empty).await.unwrap_err()));

    let mut no_sections = work("o", "none");
    no_sections.sections.clear();
    assert!(is_invalid(&s.works.upsert_work(&no_sections).await.unwrap_err()));

    let mut no_owner = work("", "x");
    no_owner.owner = " ".into();
    assert!(is_invalid(&s.works.upsert_work(&no_owner).await.unwrap_err()));

    let mut nul = work("o", "nul");
    nul.title = "a\0b".into();
    assert!(is_invalid(&s.works.upsert_work(&nul).await.unwrap_err()));

    let mut huge_title = work("o", "t");
    huge_title.title = "长".repeat(10_000);
    assert!(is_invalid(&s.works.upsert_work(&huge_title).await.unwrap_err()));

    let mut bad_range = work("o", "range");
    bad_range.sections[1].char_end = 1_000_000;
    assert!(is_invalid(&s.works.upsert_work(&bad_range).await.unwrap_err()));

    let mut dup_ordinal = work("o", "ord");
    dup_ordinal.sections[1].ordinal = 0;
    assert!(matches!(s.works.upsert_work(&dup_ordinal).await.unwrap_err(), StoreError::Duplicate { .. }));

    // Duplicate external ids in one batch: refused before anything is written.
    let err = s.works.upsert_works(&[work("o", "a"), work("o", "b"), work("o", "a")]).await.unwrap_err();
    assert!(matches!(err, StoreError::Duplicate { .. }), "{err}");
    assert!(err.is_user_error());
    // A bad work late in a batch: nothing of the batch is written either.
    assert!(s.works.upsert_works(&[work("o", "good"), empty.clone()]).await.is_err());
    assert_eq!(s.works.count_works().await.unwrap(), 0);

    // Metadata read from files arrives as bytes: invalid UTF-8 is a clear error.
    let e = utf8_field("work title", b"\xb0\xa1 GBK bytes").unwrap_err();
    assert!(is_invalid(&e) && e.to_string().contains("UTF-8"), "{e}");
}

pub async fn pages_round_trip_and_sites(s: &Stores) {
    let p = page("HTTP://Pirate.Example.COM:80/book/1.html#top", TEXT_A, 1_700_000_000_000);
    let first = s.pages.upsert_page(&p).await.unwrap();
    assert_eq!(first.outcome, Outcome::Inserted);

    let stored = s.pages.get_page(first.id).await.unwrap().unwrap();
    assert_eq!(stored.url, "http://pirate.example.com/book/1.html");
    assert_eq!(stored.site, "pirate.example.com");
    assert_eq!(stored.body, p.body);
    assert_eq!(stored.text, TEXT_A);
    assert_eq!(stored.http_status, Some(200));
    assert_eq!(stored.charset.as_deref(), Some("GBK"));
    assert_eq!(stored.source, PageSource::Crawl);
    assert_eq!(stored.format, None, "a page stored without a format has none");
    assert_eq!((stored.first_fetched_at, stored.last_fetched_at), (p.fetched_at, p.fetched_at));
    assert_eq!(s.pages.find_page("http://pirate.example.com/book/1.html").await.unwrap().unwrap(), stored);
    assert!(s.pages.find_page("http://pirate.example.com/book/2.html").await.unwrap().is_none());
    assert!(s.pages.get_page(first.id + 1000).await.unwrap().is_none());

    // Re-import: nothing changes, nothing duplicates, the site still counts one page.
    assert_eq!(s.pages.upsert_page(&p).await.unwrap(), Upserted { id: first.id, outcome: Outcome::Unchanged });
    assert_eq!(s.pages.get_page(first.id).await.unwrap().unwrap(), stored);
    assert_eq!(s.pages.count_pages().await.unwrap(), 1);
    let site = s.pages.get_site("pirate.example.com").await.unwrap().unwrap();
    assert_eq!((site.page_count, site.first_seen, site.last_seen), (1, p.fetched_at, p.fetched_at));

    // A later fetch with new content updates it and keeps the first fetch time.
    let mut later = page("http://pirate.example.com/book/1.html", TEXT_B, 1_700_000_100_000);
    later.source = PageSource::Import("dump-2026.jsonl".into());
    later.format = Some(PageFormat::Text);
    assert_eq!(s.pages.upsert_page(&later).await.unwrap(), Upserted { id: first.id, outcome: Outcome::Updated });
    let updated = s.pages.get_page(first.id).await.unwrap().unwrap();
    assert_eq!(updated.text, TEXT_B);
    assert_eq!(updated.format, Some(PageFormat::Text), "the format decided at ingest is kept with the page");
    assert_eq!(updated.canon_tag, None, "a page stored without a canon tag has none");
    assert_eq!(updated.source, PageSource::Import("dump-2026.jsonl".into()));
    assert_eq!((updated.first_fetched_at, updated.last_fetched_at), (p.fetched_at, later.fetched_at));
    // An older fetch arriving late only widens the window.
    let older = page("http://pirate.example.com/book/1.html", TEXT_A, 1_600_000_000_000);
    assert_eq!(s.pages.upsert_page(&older).await.unwrap().outcome, Outcome::Unchanged);
    let widened = s.pages.get_page(first.id).await.unwrap().unwrap();
    assert_eq!(
        (widened.first_fetched_at, widened.last_fetched_at, widened.text.as_str()),
        (older.fetched_at, later.fetched_at, TEXT_B)
    );

    // Sites follow the pages.
    let second =
        s.pages.upsert_page(&page("https://pirate.example.com/book/2.html", TEXT_B, 1_700_000_200_000)).await.unwrap();
    s.pages.upsert_page(&page("https://mirror.example.org/x", TEXT_B, 1_700_000_300_000)).await.unwrap();
    let site = s.pages.get_site("Pirate.Example.com").await.unwrap().unwrap();
    assert_eq!((site.page_count, site.first_seen, site.last_seen), (2, older.fetched_at, Timestamp(1_700_000_200_000)));
    s.pages.set_site_notes("pirate.example.com", Some("known pirate site")).await.unwrap();
    let sites = s.pages.list_sites("", 10).await.unwrap();
    assert_eq!(
        sites.iter().map(|s| s.host.as_str()).collect::<Vec<_>>(),
        vec!["mirror.example.org", "pirate.example.com"]
    );
    assert_eq!(sites[1].notes.as_deref(), Some("known pirate site"));
    assert_eq!(s.pages.list_sites("mirror.example.org", 10).await.unwrap().len(), 1);
    assert!(matches!(s.pages.set_site_notes("nowhere.example", None).await.unwrap_err(), StoreError::NotFound { .. }));

    let listed = s.pages.list_pages(Some("pirate.example.com"), 0, 10).await.unwrap();
    assert_eq!(listed.iter().map(|p| p.id).collect::<Vec<_>>(), vec![first.id, second.id]);
    assert_eq!(s.pages.list_pages(None, first.id, 1).await.unwrap()[0].id, second.id);
}

/// The canon tag a page's text was made with: stored and read with every part of the
/// page, recorded for a text that is unchanged, never taken away from one by a fetch
/// without a tag, gone with a new text stored without one; an empty tag is refused.
pub async fn pages_keep_their_canon_tag(s: &Stores) {
    const TAG: &str = "c2-0123456789abcdef";
    let url = "http://tags.example.com/book/1.html";
    let plain = page(url, TEXT_A, 1_700_000_000_000);
    let id = s.pages.upsert_page(&plain).await.unwrap().id;
    assert_eq!(s.pages.get_page(id).await.unwrap().unwrap().canon_tag, None);
    let tagged = NewPage { canon_tag: Some(TAG.into()), ..plain.clone() };
    assert_eq!(s.pages.upsert_page(&tagged).await.unwrap(), Upserted { id, outcome: Outcome::Unchanged });
    for parts in [PageParts::All, PageParts::Source, PageParts::Text] {
        let read = s.pages.get_pages(&[id], parts).await.unwrap();
        assert_eq!(read[0].canon_tag.as_deref(), Some(TAG), "{parts:?}");
    }
    assert_eq!(s.pages.upsert_page(&plain).await.unwrap().outcome, Outcome::Unchanged);
    assert_eq!(s.pages.get_page(id).await.unwrap().unwrap().canon_tag.as_deref(), Some(TAG));
    let bad = NewPage { canon_tag: Some(" ".into()), ..tagged.clone() };
    assert!(matches!(s.pages.upsert_page(&bad).await, Err(StoreError::InvalidInput { .. })), "an empty tag");
    let newer = page(url, TEXT_B, 1_700_000_100_000);
    assert_eq!(s.pages.upsert_page(&newer).await.unwrap().outcome, Outcome::Updated);
    let renewed = s.pages.get_page(id).await.unwrap().unwrap();
    assert_eq!((renewed.text.as_str(), renewed.canon_tag), (TEXT_B, None));
    let retagged = NewPage { canon_tag: Some(TAG.into()), ..page(url, TEXT_A, 1_700_000_200_000) };
    assert_eq!(s.pages.upsert_page(&retagged).await.unwrap().outcome, Outcome::Updated);
    assert_eq!(s.pages.get_page(id).await.unwrap().unwrap().canon_tag.as_deref(), Some(TAG));
}

/// A reader that found a page's stored text to be the canonical text of its body records
/// the tag: only while the text is the one it compared (by the content hash read with the
/// page), once (a second call tags nothing), and touching nothing else of the page; a
/// page gone or changed since is left alone, and an empty tag is refused.
pub async fn pages_take_the_canon_tag_of_their_text(s: &Stores) {
    const OLD: &str = "c1-00000000000000aa";
    const TAG: &str = "c2-0123456789abcdef";
    let a = page("http://retag.example.com/a.html", TEXT_A, 1_700_000_000_000);
    let b =
        NewPage { canon_tag: Some(OLD.into()), ..page("http://retag.example.com/b.html", TEXT_B, 1_700_000_000_000) };
    let c = page("http://retag.example.com/c.html", TEXT_A, 1_700_000_000_000);
    let ids: Vec<i64> = s.pages.upsert_pages(&[a, b, c.clone()]).await.unwrap().iter().map(|u| u.id).collect();
    let read = s.pages.get_pages(&ids, PageParts::Text).await.unwrap();
    let hashes: Vec<(i64, u64)> = read.iter().map(|p| (p.id, p.content_hash)).collect();
    // The third page changes before the tag is recorded: its old hash no longer holds.
    let changed = page("http://retag.example.com/c.html", TEXT_B, 1_700_000_100_000);
    assert_eq!(s.pages.upsert_page(&changed).await.unwrap().outcome, Outcome::Updated);
    let mut asked = hashes.clone();
    asked.push((ids[2] + 1_000, 1));
    assert_eq!(s.pages.tag_pages(&asked, TAG).await.unwrap(), 2, "the unchanged pages, old tag or none");
    assert_eq!(s.pages.tag_pages(&asked, TAG).await.unwrap(), 0, "idempotent");
    let after = s.pages.get_pages(&ids, PageParts::All).await.unwrap();
    let tags: Vec<Option<&str>> = after.iter().map(|p| p.canon_tag.as_deref()).collect();
    assert_eq!(tags, vec![Some(TAG), Some(TAG), None]);
    assert_eq!(
        after.iter().map(|p| (p.text.as_str(), p.content_hash, p.last_fetched_at)).collect::<Vec<_>>(),
        vec![
            (TEXT_A, read[0].content_hash, read[0].last_fetched_at),
            (TEXT_B, read[1].content_hash, read[1].last_fetched_at),
            (TEXT_B, after[2].content_hash, Timestamp(1_700_000_100_000)),
        ],
        "nothing else of a page changes"
    );
    assert_eq!(s.pages.tag_pages(&[], TAG).await.unwrap(), 0);
    assert!(matches!(s.pages.tag_pages(&hashes, " ").await, Err(StoreError::InvalidInput { .. })), "an empty tag");

    // More pages than one request to a server holds, in one call, every other one with
    // a hash that is not its text's.
    let many: Vec<NewPage> = (0..70)
        .map(|i| page(&format!("http://retag.example.com/many/{i}.html"), &format!("{TEXT_A}{i}"), 1_700_000_000_000))
        .collect();
    let stored = s.pages.upsert_pages(&many).await.unwrap();
    let ids: Vec<i64> = stored.iter().map(|u| u.id).collect();
    let read = s.pages.get_pages(&ids, PageParts::Text).await.unwrap();
    let asked: Vec<(i64, u64)> = read
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id, if i % 2 == 0 { p.content_hash } else { !p.content_hash }))
        .collect();
    assert_eq!(s.pages.tag_pages(&asked, TAG).await.unwrap(), 35);
    let tags: Vec<bool> =
        s.pages.get_pages(&ids, PageParts::Text).await.unwrap().iter().map(|p| p.canon_tag.is_some()).collect();
    assert_eq!(tags, (0..70).map(|i| i % 2 == 0).collect::<Vec<_>>());
}

pub async fn pages_batch_and_bad_input(s: &Stores) {
    assert_eq!(s.pages.max_page_id().await.unwrap(), 0, "no page yet");
    let batch: Vec<NewPage> = (0..60)
        .map(|i| page(&format!("https://site{}.example/p/{i}", i % 3), &format!("{TEXT_A}{i}"), 1_700_000_000_000 + i))
        .collect();
    let first = s.pages.upsert_pages(&batch).await.unwrap();
    assert!(first.iter().all(|u| u.outcome == Outcome::Inserted));
    let again = s.pages.upsert_pages(&batch).await.unwrap();
    assert!(again.iter().all(|u| u.outcome == Outcome::Unchanged));
    assert_eq!(first.iter().map(|u| u.id).collect::<Vec<_>>(), again.iter().map(|u| u.id).collect::<Vec<_>>());
    assert_eq!(s.pages.count_pages().await.unwrap(), 60);
    assert_eq!(s.pages.max_page_id().await.unwrap(), first.iter().map(|u| u.id).max().unwrap());
    assert_eq!(s.pages.get_site("site1.example").await.unwrap().unwrap().page_count, 20);

    // Which URLs are stored, read in one call whatever their number (more than one
    // request to the server asks for), each normalised as stored; nothing for none.
    let mut asked: Vec<String> = (0..60).rev().map(|i| format!("HTTPS://Site{}.example/p/{i}#top", i % 3)).collect();
    asked.extend((60..100).map(|i| format!("https://site{}.example/p/{i}", i % 3)));
    asked.push("https://site0.example/p/0".into());
    let stored = s.pages.stored_urls(&asked).await.unwrap();
    let expected: std::collections::HashSet<String> = batch.iter().map(|p| p.url.clone()).collect();
    assert_eq!(stored, expected);
    assert!(s.pages.stored_urls(&[]).await.unwrap().is_empty());
    assert!(is_invalid(
        &s.pages.stored_urls(&["https://site0.example/p/0".into(), "ftp://x.example/".into()]).await.unwrap_err()
    ));

    // Paging through every page by id, in bounded steps.
    let mut seen = Vec::new();
    let mut after = 0;
    loop {
        let chunk = s.pages.list_pages(None, after, 7).await.unwrap();
        let Some(last) = chunk.last() else { break };
        after = last.id;
        seen.extend(chunk.into_iter().map(|p| p.id));
    }
    assert_eq!(seen, first.iter().map(|u| u.id).collect::<Vec<_>>());

    // A daily task's scope: the pages fetched since a time (inclusive), ascending, from
    // an id on; a page fetched again later enters it.
    let ids: Vec<i64> = first.iter().map(|u| u.id).collect();
    let since = Timestamp(1_700_000_000_040);
    assert_eq!(s.pages.page_ids_fetched_since(since, 0).await.unwrap(), ids[40..].to_vec());
    assert_eq!(s.pages.page_ids_fetched_since(since, ids[45]).await.unwrap(), ids[46..].to_vec());
    assert!(s.pages.page_ids_fetched_since(Timestamp(1_800_000_000_000), 0).await.unwrap().is_empty());
    let again = page("https://site0.example/p/3", &format!("{TEXT_A}3"), 1_700_000_000_100);
    assert_eq!(s.pages.upsert_page(&again).await.unwrap().id, ids[3]);
    let mut expected = vec![ids[3]];
    expected.extend_from_slice(&ids[40..]);
    assert_eq!(s.pages.page_ids_fetched_since(since, 0).await.unwrap(), expected);

    // More ids than one request to the server asks for: every page, ascending.
    let all = s.pages.get_pages(&ids.iter().rev().copied().collect::<Vec<_>>(), PageParts::All).await.unwrap();
    assert_eq!(all.iter().map(|p| p.id).collect::<Vec<_>>(), ids);

    // Several pages in one read: ascending, each id once, unknown ids left out.
    let read = s.pages.get_pages(&[ids[5], i64::MAX, ids[2], ids[5]], PageParts::All).await.unwrap();
    assert_eq!(read.iter().map(|p| p.id).collect::<Vec<_>>(), vec![ids[2], ids[5]]);
    for p in &read {
        assert_eq!(Some(p), s.pages.get_page(p.id).await.unwrap().as_ref());
    }
    assert!(s.pages.get_pages(&[], PageParts::All).await.unwrap().is_empty());

    // Bad input: nothing of the batch is written.
    let dup = vec![page("https://new.example/a", TEXT_A, 1), page("HTTPS://NEW.example/a#x", TEXT_A, 2)];
    assert!(matches!(s.pages.upsert_pages(&dup).await.unwrap_err(), StoreError::Duplicate { .. }));
    let bad_url = vec![page("https://new.example/b", TEXT_A, 1), page("ftp://new.example/c", TEXT_A, 1)];
    assert!(is_invalid(&s.pages.upsert_pages(&bad_url).await.unwrap_err()));
    let mut empty = page("https://new.example/d", "", 1);
    empty.body.clear();
    assert!(is_invalid(&s.pages.upsert_page(&empty).await.unwrap_err()));
    assert!(is_invalid(&s.pages.upsert_page(&page("not a url", TEXT_A, 1)).await.unwrap_err()));
    let mut absurd = page("https://new.example/e", TEXT_A, 1);
    absurd.charset = Some("x".repeat(MAX_FIELD_BYTES + 1));
    assert!(is_invalid(&s.pages.upsert_page(&absurd).await.unwrap_err()));
    assert_eq!(s.pages.count_pages().await.unwrap(), 60);
    assert!(s.pages.get_site("new.example").await.unwrap().is_none());

    // Reading only some parts: what is not read is empty, the rest as stored. A page
    // without a body is read with its text when its source is asked for.
    let bodyless = NewPage { body: Vec::new(), ..page("https://site0.example/no-body", TEXT_B, 1_700_000_000_200) };
    let bodyless = s.pages.upsert_page(&bodyless).await.unwrap().id;
    let pair = [ids[2], bodyless];
    let whole = s.pages.get_pages(&pair, PageParts::All).await.unwrap();
    assert!(!whole[0].body.is_empty() && whole[1].body.is_empty() && !whole[1].text.is_empty());
    let source = s.pages.get_pages(&pair, PageParts::Source).await.unwrap();
    assert_eq!(source[0], Page { text: String::new(), ..whole[0].clone() });
    assert_eq!(source[1], whole[1]);
    let text = s.pages.get_pages(&pair, PageParts::Text).await.unwrap();
    assert_eq!(text[0], Page { body: Vec::new(), ..whole[0].clone() });
    assert_eq!(text[1], whole[1]);
}

/// MongoDB documents are limited to 16 MB: a 20 MB body and a 20 MB text must still
/// round-trip (chunked there), as must a work larger than the limit.
pub async fn large_page_and_work_round_trip(s: &Stores) {
    let body = noise(20 * 1024 * 1024, 7);
    let text = han_noise(20 * 1024 * 1024, 11);
    let mut p = page("https://big.example/huge.html", "", 1_700_000_000_000);
    p.body = body.clone();
    p.text = text.clone();
    let id = s.pages.upsert_page(&p).await.unwrap().id;
    let stored = s.pages.get_page(id).await.unwrap().unwrap();
    assert!(stored.body == body, "20 MB body did not round-trip");
    assert!(stored.text == text, "20 MB text did not round-trip");
    assert_eq!(s.pages.upsert_page(&p).await.unwrap().outcome, Outcome::Unchanged);

    // Shrinking it afterwards leaves no stale pieces behind.
    let small = page("https://big.example/huge.html", TEXT_A, 1_700_000_000_001);
    assert_eq!(s.pages.upsert_page(&small).await.unwrap().outcome, Outcome::Updated);
    let stored = s.pages.get_page(id).await.unwrap().unwrap();
    assert_eq!((stored.text.as_str(), stored.body.as_slice()), (TEXT_A, small.body.as_slice()));

    let big = han_noise(18 * 1024 * 1024, 13);
    let n = big.chars().count() as u64;
    let w = NewWork { text: big.clone(), sections: vec![section(0, "", &big, 0)], ..work("o", "big") };
    assert_eq!(w.sections[0].char_end, n);
    let up = s.works.upsert_work(&w).await.unwrap();
    assert!(s.works.get_work(up.id).await.unwrap().unwrap().text == big);
    assert!(s.works.get_section(up.sections[0].1).await.unwrap().unwrap().text == big);
}

pub async fn fingerprints_params_and_scans(s: &Stores) {
    // Subjects are stored sections and pages; 40 pages, more than one request to the
    // server reads at a time.
    let pages = s
        .pages
        .upsert_pages(&(0..40).map(|i| page(&format!("https://fp.example/{i}"), TEXT_B, i)).collect::<Vec<_>>())
        .await
        .unwrap();
    let section_id = s.works.upsert_work(&work("o", "fp")).await.unwrap().sections[0].1;

    let fa = fingerprints(TEXT_A);
    let section = Subject::section(section_id);
    assert_eq!(s.fingerprints.put_fingerprints(section, &fa).await.unwrap(), Outcome::Inserted);
    assert_eq!(s.fingerprints.put_fingerprints(section, &fa).await.unwrap(), Outcome::Unchanged);
    let rec = s.fingerprints.get_fingerprints(section).await.unwrap().unwrap();
    assert_eq!(rec.subject, section);
    assert_eq!(rec.params_tag, fa.params_tag);
    assert_eq!(rec.fingerprints, fa);
    assert!(s.fingerprints.get_fingerprints(Subject::page(section_id)).await.unwrap().is_none());

    let fb = fingerprints(TEXT_B);
    let items: Vec<_> = pages.iter().map(|u| (Subject::page(u.id), fb.clone())).collect();
    let counts = s.fingerprints.put_fingerprints_many(&items).await.unwrap();
    assert_eq!(counts, BatchCounts { inserted: 40, updated: 0, unchanged: 0 });
    assert_eq!(s.fingerprints.put_fingerprints_many(&items).await.unwrap().unchanged, 40);
    assert_eq!(s.fingerprints.count_fingerprints(SubjectKind::Page, None).await.unwrap(), 40);
    assert_eq!(s.fingerprints.count_fingerprints(SubjectKind::Section, Some(&fa.params_tag)).await.unwrap(), 1);
    // Many at once: those stored (more than one request's worth), none for the others.
    let mut wanted: Vec<Subject> = pages.iter().map(|u| Subject::page(u.id)).collect();
    wanted.extend([section, Subject::page(-7), Subject::section(-5)]);
    let mut many = s.fingerprints.get_fingerprints_many(&wanted).await.unwrap();
    many.sort_by_key(|r| (r.subject.kind.as_str(), r.subject.id));
    let mut expected: Vec<Subject> = pages.iter().map(|u| Subject::page(u.id)).collect();
    expected.push(section);
    expected.sort_by_key(|s| (s.kind.as_str(), s.id));
    assert_eq!(many.iter().map(|r| r.subject).collect::<Vec<_>>(), expected);
    assert!(many.iter().all(|r| r.fingerprints == if r.subject == section { fa.clone() } else { fb.clone() }));
    assert!(s.fingerprints.get_fingerprints_many(&[]).await.unwrap().is_empty());

    // A parameter change is detected, not mixed in silently.
    let mut old = fb.clone();
    old.params_tag = "v0-old-params".into();
    let stale_ids = [pages[3].id, pages[17].id];
    for id in stale_ids {
        assert_eq!(s.fingerprints.put_fingerprints(Subject::page(id), &old).await.unwrap(), Outcome::Updated);
    }
    assert_eq!(
        s.fingerprints.stale_subjects(SubjectKind::Page, &fb.params_tag, 0, 100).await.unwrap(),
        stale_ids.to_vec()
    );
    assert_eq!(
        s.fingerprints.stale_subjects(SubjectKind::Page, &fb.params_tag, stale_ids[0], 1).await.unwrap(),
        vec![stale_ids[1]]
    );
    assert!(s.fingerprints.stale_subjects(SubjectKind::Section, &fa.params_tag, 0, 100).await.unwrap().is_empty());
    assert_eq!(s.fingerprints.count_fingerprints(SubjectKind::Page, Some("v0-old-params")).await.unwrap(), 2);

    // Scanning for a reindex, in bounded pages.
    let mut scanned = Vec::new();
    let mut after = 0;
    loop {
        let chunk = s.fingerprints.scan_fingerprints(SubjectKind::Page, after, 6).await.unwrap();
        let Some(last) = chunk.last() else { break };
        after = last.subject.id;
        scanned.extend(chunk);
    }
    assert_eq!(
        scanned.iter().map(|r| r.subject.id).collect::<Vec<_>>(),
        pages.iter().map(|u| u.id).collect::<Vec<_>>()
    );
    assert!(scanned.iter().all(|r| r.subject.kind == SubjectKind::Page));
    assert_eq!(scanned[3].params_tag, "v0-old-params");

    assert!(s.fingerprints.delete_fingerprints(Subject::page(pages[0].id)).await.unwrap());
    assert!(!s.fingerprints.delete_fingerprints(Subject::page(pages[0].id)).await.unwrap());

    // Bad input writes nothing.
    let dup = vec![(Subject::page(pages[0].id), fb.clone()), (Subject::page(pages[0].id), fb.clone())];
    assert!(matches!(s.fingerprints.put_fingerprints_many(&dup).await.unwrap_err(), StoreError::Duplicate { .. }));
    let mut untagged = fb.clone();
    untagged.params_tag.clear();
    assert!(is_invalid(&s.fingerprints.put_fingerprints(Subject::page(pages[0].id), &untagged).await.unwrap_err()));
    assert!(s.fingerprints.get_fingerprints(Subject::page(pages[0].id)).await.unwrap().is_none());
}

/// Works marked indexed: listed by parameter tag with the version marked, replaced by a
/// new mark (any tag), removed by an unmark (twice is no error) and with the work.
pub async fn works_marked_indexed(s: &Stores) {
    let a = s.works.upsert_work(&work("o", "marked-a")).await.unwrap().id;
    let b = s.works.upsert_work(&work("o", "marked-b")).await.unwrap().id;
    let f = &s.fingerprints;
    assert!(f.indexed_works("tag-1").await.unwrap().is_empty());
    f.mark_work_indexed(a, 100, "tag-1").await.unwrap();
    f.mark_work_indexed(a, 100, "tag-1").await.unwrap();
    f.mark_work_indexed(b, 7, "tag-2").await.unwrap();
    assert_eq!(f.indexed_works("tag-1").await.unwrap(), vec![(a, 100)]);
    assert_eq!(f.indexed_works("tag-2").await.unwrap(), vec![(b, 7)]);
    // A new mark replaces the old one, whatever its tag.
    f.mark_work_indexed(a, 101, "tag-2").await.unwrap();
    assert!(f.indexed_works("tag-1").await.unwrap().is_empty());
    let mut two = f.indexed_works("tag-2").await.unwrap();
    two.sort_unstable();
    assert_eq!(two, vec![(a, 101), (b, 7)]);
    f.unmark_work_indexed(a).await.unwrap();
    f.unmark_work_indexed(a).await.unwrap();
    assert_eq!(f.indexed_works("tag-2").await.unwrap(), vec![(b, 7)]);
    // Deleting a work deletes its mark.
    assert!(s.queries.delete_work(b).await.unwrap().is_some());
    assert!(f.indexed_works("tag-2").await.unwrap().is_empty());
}

/// Each section's compact winnowed keys are written with its fingerprints, replaced with
/// them, read without them, and deleted with them; pages have none.
pub async fn winnowed_keys_follow_the_fingerprints(s: &Stores) {
    let w = s.works.upsert_work(&work("o", "winnowed")).await.unwrap();
    let section = Subject::section(w.sections[0].1);
    let page = Subject::page(s.pages.upsert_page(&page("https://wk.example/1", TEXT_B, 1)).await.unwrap().id);
    let (fa, fb) = (fingerprints(TEXT_A), fingerprints(TEXT_B));
    assert!(s.fingerprints.get_winnowed_many(&[section, page]).await.unwrap().is_empty());
    s.fingerprints.put_fingerprints_many(&[(section, fa.clone()), (page, fb.clone())]).await.unwrap();
    let read = s.fingerprints.get_winnowed_many(&[section, page, Subject::section(-3)]).await.unwrap();
    let expected = WinnowedKeys { subject: section, params_tag: fa.params_tag.clone(), keys: fa.winnowed_digest() };
    assert!(expected.keys.len() > 20, "{} keys", expected.keys.len());
    assert_eq!(read, vec![expected]);
    assert!(s.fingerprints.get_winnowed_many(&[]).await.unwrap().is_empty());

    // Replaced with the fingerprints (other text, other parameters).
    let mut other = fb.clone();
    other.params_tag = "v0-other-params".into();
    assert_eq!(s.fingerprints.put_fingerprints(section, &other).await.unwrap(), Outcome::Updated);
    let read = s.fingerprints.get_winnowed_many(&[section]).await.unwrap();
    assert_eq!((read[0].params_tag.as_str(), &read[0].keys), ("v0-other-params", &fb.winnowed_digest()));
    assert_ne!(fa.winnowed_digest(), fb.winnowed_digest());

    // Deleted with them.
    assert!(s.fingerprints.delete_fingerprints(section).await.unwrap());
    assert!(s.fingerprints.get_winnowed_many(&[section]).await.unwrap().is_empty());
}

pub async fn matches_upsert_review_and_filters(s: &Stores) {
    let w1 = s.works.upsert_work(&work("o", "m1")).await.unwrap();
    let w2 = s.works.upsert_work(&work("o", "m2")).await.unwrap();
    let p1 = s.pages.upsert_page(&page("https://a.example/1", TEXT_A, 1)).await.unwrap().id;
    let p2 = s.pages.upsert_page(&page("https://b.example/2", TEXT_A, 1)).await.unwrap().id;
    let copy = comparison(TEXT_A, TEXT_A);
    let other = comparison(TEXT_A, TEXT_B);
    let day1 = Timestamp(1_763_683_200_000); // 2025-11-21T00:00:00Z
    let day2 = Timestamp(day1.0 + 86_400_000);

    let m = NewMatch {
        section_id: w1.sections[0].1,
        page_id: p1,
        kind: "identical".into(),
        comparison: copy.clone(),
        seen_at: day1,
    };
    let first = s.matches.upsert_match(&m).await.unwrap();
    assert_eq!(first.outcome, Outcome::Inserted);
    // Re-running the same task changes nothing.
    assert_eq!(s.matches.upsert_match(&m).await.unwrap(), Upserted { id: first.id, outcome: Outcome::Unchanged });
    // A later run with the same scores only moves last_seen.
    let later = NewMatch { seen_at: day2, ..m.clone() };
    assert_eq!(s.matches.upsert_match(&later).await.unwrap().outcome, Outcome::Unchanged);
    let stored = s.matches.get_match(first.id).await.unwrap().unwrap();
    assert_eq!((stored.first_seen, stored.last_seen), (day1, day2));
    assert_eq!((stored.work_id, stored.page_id, stored.site.as_str()), (w1.id, p1, "a.example"));
    assert_eq!(stored.comparison, copy);
    // The match records the kind of copy it was given; the verdict's kind stays in the comparison.
    assert_eq!(stored.kind, "identical");
    assert_eq!(stored.comparison.verdict.kind, copy.verdict.kind);
    assert_eq!(stored.score, copy.verdict.score);
    assert_eq!(stored.status, ReviewStatus::New);
    assert_eq!(s.matches.find_match(m.section_id, p1).await.unwrap().unwrap(), stored);

    // New scores update it; first_seen stays.
    let rescored =
        NewMatch { kind: "excerpt".into(), comparison: other.clone(), seen_at: Timestamp(day2.0 + 1), ..m.clone() };
    assert_eq!(s.matches.upsert_match(&rescored).await.unwrap().outcome, Outcome::Updated);
    let stored = s.matches.get_match(first.id).await.unwrap().unwrap();
    assert_eq!((stored.first_seen, stored.comparison.clone()), (day1, other.clone()));
    assert_eq!(stored.kind, "excerpt");
    assert_eq!(
        s.matches.upsert_match(&m).await.unwrap().outcome,
        Outcome::Unchanged,
        "an older run must not overwrite newer scores"
    );
    let stored = s.matches.get_match(first.id).await.unwrap().unwrap();
    assert_eq!((stored.comparison, stored.kind.as_str()), (other.clone(), "excerpt"));
    // Same scores in a newer run under other thresholds: the kind follows, nothing else moves.
    let reclassified = NewMatch { kind: "embedded".into(), ..rescored.clone() };
    assert_eq!(s.matches.upsert_match(&reclassified).await.unwrap().outcome, Outcome::Unchanged);
    assert_eq!(s.matches.get_match(first.id).await.unwrap().unwrap().kind, "embedded");
    s.matches.upsert_match(&rescored).await.unwrap();
    // A verdict kind or any other word is no kind of copy: clear error, nothing written.
    for bad in ["a_within_b", "", "copy"] {
        let err = s.matches.upsert_match(&NewMatch { kind: bad.into(), ..rescored.clone() }).await.unwrap_err();
        assert!(is_invalid(&err) && err.to_string().contains("match kind"), "{err}");
    }
    assert_eq!(s.matches.get_match(first.id).await.unwrap().unwrap().kind, "excerpt");

    // Missing section or page: clear error, nothing written.
    let missing = NewMatch { page_id: p2 + 1000, ..m.clone() };
    assert!(matches!(s.matches.upsert_match(&missing).await.unwrap_err(), StoreError::NotFound { .. }));

    // Review trail.
    assert_eq!(
        s.matches.set_review(first.id, ReviewStatus::Confirmed, "alice", Some("clear copy"), day2).await.unwrap(),
        Outcome::Updated
    );
    assert_eq!(
        s.matches.set_review(first.id, ReviewStatus::Confirmed, "alice", None, day2).await.unwrap(),
        Outcome::Unchanged
    );
    assert_eq!(
        s.matches.set_review(first.id, ReviewStatus::TakedownSent, "bob", None, Timestamp(day2.0 + 5)).await.unwrap(),
        Outcome::Updated
    );
    let reviewed = s.matches.get_match(first.id).await.unwrap().unwrap();
    assert_eq!(reviewed.status, ReviewStatus::TakedownSent);
    assert_eq!(
        reviewed.review_log,
        vec![
            ReviewEvent {
                by: "alice".into(),
                at: day2,
                from: ReviewStatus::New,
                to: ReviewStatus::Confirmed,
                note: Some("clear copy".into())
            },
            ReviewEvent {
                by: "bob".into(),
                at: Timestamp(day2.0 + 5),
                from: ReviewStatus::Confirmed,
                to: ReviewStatus::TakedownSent,
                note: None
            },
        ]
    );
    assert!(matches!(
        s.matches.set_review(first.id + 999, ReviewStatus::Dismissed, "x", None, day2).await.unwrap_err(),
        StoreError::NotFound { .. }
    ));
    assert!(is_invalid(&s.matches.set_review(first.id, ReviewStatus::Dismissed, " ", None, day2).await.unwrap_err()));

    // More matches for the filters and statistics.
    let m2 = s
        .matches
        .upsert_match(&NewMatch {
            section_id: w1.sections[1].1,
            page_id: p2,
            kind: "excerpt".into(),
            comparison: copy.clone(),
            seen_at: day2,
        })
        .await
        .unwrap();
    let m3 = s
        .matches
        .upsert_match(&NewMatch {
            section_id: w2.sections[0].1,
            page_id: p2,
            kind: "embedded".into(),
            comparison: copy.clone(),
            seen_at: day2,
        })
        .await
        .unwrap();
    s.matches.set_review(m3.id, ReviewStatus::Dismissed, "carol", None, day2).await.unwrap();

    let ids = |v: Vec<Match>| v.into_iter().map(|m| m.id).collect::<Vec<_>>();
    let all = MatchQuery::default();
    assert_eq!(ids(s.matches.list_matches(&all, 0, 100).await.unwrap()), vec![first.id, m2.id, m3.id]);
    assert_eq!(ids(s.matches.list_matches(&all, first.id, 1).await.unwrap()), vec![m2.id]);
    let by_site = MatchQuery { site: Some("b.example".into()), ..Default::default() };
    assert_eq!(ids(s.matches.list_matches(&by_site, 0, 100).await.unwrap()), vec![m2.id, m3.id]);
    let by_work = MatchQuery { work_id: Some(w1.id), ..Default::default() };
    assert_eq!(ids(s.matches.list_matches(&by_work, 0, 100).await.unwrap()), vec![first.id, m2.id]);
    let by_section = MatchQuery { section_id: Some(w2.sections[0].1), ..Default::default() };
    assert_eq!(ids(s.matches.list_matches(&by_section, 0, 100).await.unwrap()), vec![m3.id]);
    let by_status = MatchQuery { status: Some(ReviewStatus::Dismissed), ..Default::default() };
    assert_eq!(ids(s.matches.list_matches(&by_status, 0, 100).await.unwrap()), vec![m3.id]);
    let by_kind = MatchQuery { kind: Some("excerpt".into()), ..Default::default() };
    assert_eq!(ids(s.matches.list_matches(&by_kind, 0, 100).await.unwrap()), vec![first.id, m2.id]);
    let by_kind = MatchQuery { kind: Some("embedded".into()), ..Default::default() };
    assert_eq!(ids(s.matches.list_matches(&by_kind, 0, 100).await.unwrap()), vec![m3.id]);
    let by_score =
        MatchQuery { min_score: Some(copy.verdict.score), max_score: Some(copy.verdict.score), ..Default::default() };
    let expected_score =
        if other.verdict.score == copy.verdict.score { vec![first.id, m2.id, m3.id] } else { vec![m2.id, m3.id] };
    assert_eq!(ids(s.matches.list_matches(&by_score, 0, 100).await.unwrap()), expected_score);
    let by_date =
        MatchQuery { last_seen_from: Some(day2), last_seen_until: Some(Timestamp(day2.0 + 1)), ..Default::default() };
    assert_eq!(ids(s.matches.list_matches(&by_date, 0, 100).await.unwrap()), vec![m2.id, m3.id]);

    // The statistics of the same query: the total and the counts by group.
    let groups = |q: MatchQuery, by: MatchGroup| async move {
        let mut v = s.queries.group_matches(&q, by).await.unwrap();
        v.sort();
        v
    };
    let pairs = |v: &[(&str, u64)]| v.iter().map(|(k, n)| (k.to_string(), *n)).collect::<Vec<_>>();
    assert_eq!(s.queries.count_matches(&all).await.unwrap(), 3);
    assert_eq!(
        groups(all.clone(), MatchGroup::Status).await,
        pairs(&[("dismissed", 1), ("new", 1), ("takedown_sent", 1)])
    );
    assert_eq!(groups(all.clone(), MatchGroup::Site).await, pairs(&[("a.example", 1), ("b.example", 2)]));
    let mut by_work_counts = vec![(w1.id.to_string(), 2), (w2.id.to_string(), 1)];
    by_work_counts.sort();
    assert_eq!(groups(all.clone(), MatchGroup::Work).await, by_work_counts);
    assert_eq!(groups(all.clone(), MatchGroup::FirstDay).await, pairs(&[("2025-11-21", 1), ("2025-11-22", 2)]));
    assert_eq!(s.queries.count_matches(&by_site).await.unwrap(), 2);
    assert_eq!(groups(by_site.clone(), MatchGroup::Work).await.len(), 2);
}

/// A task records the copies of a batch of pages in one call: results in order, stored
/// exactly as one by one, and bad input (a missing page, one pair twice) writes nothing.
pub async fn matches_in_batches(s: &Stores) {
    let w = s.works.upsert_work(&work("o", "batch")).await.unwrap();
    let section = w.sections[0].1;
    let p1 = s.pages.upsert_page(&page("https://a.example/1", TEXT_A, 1)).await.unwrap().id;
    let p2 = s.pages.upsert_page(&page("https://b.example/2", TEXT_A, 1)).await.unwrap().id;
    let p3 = s.pages.upsert_page(&page("https://c.example/3", TEXT_A, 1)).await.unwrap().id;
    let at = Timestamp(1_763_683_200_000);
    let new = |page_id| NewMatch {
        section_id: section,
        page_id,
        kind: "identical".into(),
        comparison: comparison(TEXT_A, TEXT_A),
        seen_at: at,
    };
    let earlier = s.matches.upsert_match(&new(p2)).await.unwrap();
    let batch = vec![new(p1), new(p2), new(p3)];
    // Which pages have a match: asked more than one read's worth of ids (repeats and
    // unknown ids among them), and nothing.
    let asked: Vec<i64> = [p3, p2, p2, p1].into_iter().chain((1..=100).map(|i| p3 + i)).collect();
    let matched = |ids: Vec<i64>| {
        let matches = s.matches.clone();
        async move { matches.matched_pages(&ids).await.unwrap() }
    };
    assert_eq!(matched(asked.clone()).await, std::collections::HashSet::from([p2]));
    assert!(matched(Vec::new()).await.is_empty());

    let missing = [new(p1), new(p3 + 1000)];
    assert!(matches!(s.matches.upsert_matches(&missing).await.unwrap_err(), StoreError::NotFound { .. }));
    let twice = [new(p1), new(p1)];
    assert!(matches!(s.matches.upsert_matches(&twice).await.unwrap_err(), StoreError::Duplicate { .. }));
    assert!(s.matches.find_match(section, p1).await.unwrap().is_none(), "bad batch wrote a match");

    let done = s.matches.upsert_matches(&batch).await.unwrap();
    assert_eq!(
        done.iter().map(|u| u.outcome).collect::<Vec<_>>(),
        vec![Outcome::Inserted, Outcome::Unchanged, Outcome::Inserted]
    );
    assert_eq!(done[1].id, earlier.id);
    for (up, m) in done.iter().zip(&batch) {
        let stored = s.matches.find_match(m.section_id, m.page_id).await.unwrap().unwrap();
        assert_eq!(
            (stored.id, stored.work_id, stored.first_seen, &stored.comparison),
            (up.id, w.id, at, &m.comparison)
        );
    }
    assert_eq!(s.pages.get_page(p3).await.unwrap().unwrap().site, "c.example");
    assert_eq!(s.matches.find_match(section, p3).await.unwrap().unwrap().site, "c.example");
    // Again: the same ids, nothing changed.
    let again = s.matches.upsert_matches(&batch).await.unwrap();
    assert_eq!(again.iter().map(|u| u.id).collect::<Vec<_>>(), done.iter().map(|u| u.id).collect::<Vec<_>>());
    assert!(again.iter().all(|u| u.outcome == Outcome::Unchanged));
    assert!(s.matches.upsert_matches(&[]).await.unwrap().is_empty());
    assert_eq!(matched(asked).await, std::collections::HashSet::from([p1, p2, p3]));
}

pub async fn tasks_life_cycle(s: &Stores) {
    let t = NewTask {
        key: "match:2026-11-21".into(),
        kind: "match".into(),
        params: json!({"day": "2026-11-21", "limit": 5}),
    };
    let (created, outcome) = s.tasks.create_task(&t).await.unwrap();
    assert_eq!(outcome, Outcome::Inserted);
    assert_eq!(
        (created.state, created.params.clone(), created.progress),
        (TaskState::Queued, t.params.clone(), Progress::default())
    );
    // Idempotent by key.
    let (again, outcome) = s.tasks.create_task(&t).await.unwrap();
    assert_eq!((again.id, outcome), (created.id, Outcome::Unchanged));
    let conflicting = NewTask { params: json!({"day": "other"}), ..t.clone() };
    assert!(matches!(s.tasks.create_task(&conflicting).await.unwrap_err(), StoreError::Conflict { .. }));
    let (other, _) = s
        .tasks
        .create_task(&NewTask { key: "reindex:1".into(), kind: "reindex".into(), params: json!(null) })
        .await
        .unwrap();
    let (third, _) = s
        .tasks
        .create_task(&NewTask { key: "match:2026-11-22".into(), kind: "match".into(), params: json!({}) })
        .await
        .unwrap();

    // Claims take the oldest queued task of the kind, once.
    let claimed = s.tasks.claim_task(Some("match"), "worker-1").await.unwrap().unwrap();
    assert_eq!(
        (claimed.id, claimed.state, claimed.worker.as_deref()),
        (created.id, TaskState::Running, Some("worker-1"))
    );
    assert!(claimed.started_at.is_some());
    let second = s.tasks.claim_task(Some("match"), "worker-2").await.unwrap().unwrap();
    assert_eq!(second.id, third.id);
    assert!(s.tasks.claim_task(Some("match"), "worker-2").await.unwrap().is_none());

    // A task whose worker went away is taken over by one worker only.
    let taken = s.tasks.take_over_task(second.id, Some("worker-2"), "worker-3").await.unwrap().unwrap();
    assert_eq!((taken.id, taken.state, taken.worker.as_deref()), (third.id, TaskState::Running, Some("worker-3")));
    assert!(s.tasks.take_over_task(second.id, Some("worker-2"), "worker-4").await.unwrap().is_none());
    assert!(s.tasks.take_over_task(second.id, None, "worker-4").await.unwrap().is_none());
    assert!(s.tasks.take_over_task(other.id, None, "worker-4").await.unwrap().is_none(), "not running");

    let checkpoint = json!({"after_page": 1234});
    let progressed = s
        .tasks
        .update_progress(claimed.id, Progress { done: 10, total: 100, failed: 1 }, Some(&checkpoint))
        .await
        .unwrap();
    assert_eq!(progressed.progress, Progress { done: 10, total: 100, failed: 1 });
    assert_eq!(progressed.checkpoint, Some(checkpoint.clone()));
    let progressed =
        s.tasks.update_progress(claimed.id, Progress { done: 20, total: 100, failed: 1 }, None).await.unwrap();
    assert_eq!(progressed.checkpoint, Some(checkpoint), "no new checkpoint keeps the old one");

    let done = s.tasks.finish_task(claimed.id).await.unwrap();
    assert_eq!(done.state, TaskState::Succeeded);
    assert!(done.finished_at.is_some());
    assert!(matches!(s.tasks.finish_task(claimed.id).await.unwrap_err(), StoreError::Conflict { .. }));
    assert!(matches!(
        s.tasks.update_progress(claimed.id, Progress::default(), None).await.unwrap_err(),
        StoreError::Conflict { .. }
    ));
    assert!(matches!(s.tasks.fail_task(other.id, "not claimed").await.unwrap_err(), StoreError::Conflict { .. }));
    assert!(matches!(s.tasks.finish_task(9_999).await.unwrap_err(), StoreError::NotFound { .. }));

    let failed = s.tasks.fail_task(third.id, "redis unavailable").await.unwrap();
    assert_eq!((failed.state, failed.error.as_deref()), (TaskState::Failed, Some("redis unavailable")));
    assert_eq!(s.tasks.cancel_task(other.id).await.unwrap().state, TaskState::Cancelled);
    assert!(s.tasks.claim_task(None, "w").await.unwrap().is_none());

    // Re-creating a finished task's key does not re-run it.
    let (same, outcome) = s.tasks.create_task(&t).await.unwrap();
    assert_eq!((same.state, outcome), (TaskState::Succeeded, Outcome::Unchanged));

    assert_eq!(s.tasks.find_task("reindex:1").await.unwrap().unwrap().id, other.id);
    assert_eq!(s.tasks.get_task(third.id).await.unwrap().unwrap().state, TaskState::Failed);
    let all: Vec<i64> = s.tasks.list_tasks(None, None, 0, 10).await.unwrap().into_iter().map(|t| t.id).collect();
    assert_eq!(all, vec![created.id, other.id, third.id]);
    let failed: Vec<i64> =
        s.tasks.list_tasks(Some(TaskState::Failed), None, 0, 10).await.unwrap().into_iter().map(|t| t.id).collect();
    assert_eq!(failed, vec![third.id]);
    // By kind, with and without a state (each way a backend may read them).
    let ids = |tasks: Vec<Task>| tasks.into_iter().map(|t| t.id).collect::<Vec<_>>();
    assert_eq!(ids(s.tasks.list_tasks(None, Some("match"), 0, 10).await.unwrap()), vec![created.id, third.id]);
    assert_eq!(ids(s.tasks.list_tasks(None, Some("match"), created.id, 10).await.unwrap()), vec![third.id]);
    assert_eq!(ids(s.tasks.list_tasks(Some(TaskState::Failed), Some("match"), 0, 10).await.unwrap()), vec![third.id]);
    assert_eq!(
        ids(s.tasks.list_tasks(Some(TaskState::Failed), Some("match"), third.id, 10).await.unwrap()),
        Vec::<i64>::new()
    );
    assert!(s.tasks.list_tasks(Some(TaskState::Failed), Some("reindex"), 0, 10).await.unwrap().is_empty());
    assert_eq!(
        ids(s.tasks.list_tasks(Some(TaskState::Cancelled), Some("reindex"), 0, 10).await.unwrap()),
        vec![other.id]
    );
    assert_eq!(
        ids(s.tasks.list_tasks(Some(TaskState::Succeeded), Some("match"), 0, 1).await.unwrap()),
        vec![created.id]
    );
    let latest = |kind: &'static str, state| {
        let tasks = s.tasks.clone();
        async move { tasks.latest_task(kind, state).await.unwrap().map(|t| t.id) }
    };
    assert_eq!(latest("match", TaskState::Succeeded).await, Some(claimed.id));
    let later = NewTask { key: "match:2026-11-23".into(), kind: "match".into(), params: json!({}) };
    s.tasks.create_task(&later).await.unwrap();
    let started = s.tasks.claim_task(Some("match"), "worker-5").await.unwrap().unwrap();
    s.tasks.finish_task(started.id).await.unwrap();
    assert_eq!(latest("match", TaskState::Succeeded).await, Some(started.id), "the one started last");
    assert_eq!(latest("match", TaskState::Failed).await, Some(third.id));
    assert_eq!(latest("reindex", TaskState::Succeeded).await, None);
    assert_eq!(latest("nothing", TaskState::Cancelled).await, None);
    assert!(is_invalid(
        &s.tasks.create_task(&NewTask { key: "".into(), kind: "x".into(), params: json!(1) }).await.unwrap_err()
    ));
}

/// Concurrent first writes through one client all succeed, each with its own id. (Two
/// processes racing to create a MongoDB id counter is checked with two clients in
/// `migrations::two_clients_create_the_id_counters_together`.)
pub async fn concurrent_first_writes(s: &Stores) {
    let writes = (0..8).map(|i| {
        let pages = s.pages.clone();
        tokio::spawn(async move {
            let p = page(&format!("http://race.example/{i}"), "同时写入的第一批网页。", 1_000 + i);
            pages.upsert_page(&p).await
        })
    });
    let mut ids = std::collections::HashSet::new();
    for w in writes.collect::<Vec<_>>() {
        let up = w.await.unwrap().unwrap();
        assert_eq!(up.outcome, Outcome::Inserted);
        ids.insert(up.id);
    }
    assert_eq!(ids.len(), 8, "distinct ids: {ids:?}");
    assert_eq!(s.pages.count_pages().await.unwrap(), 8);

    // Two workers recording the same new match at the same moment: both succeed (the
    // loser of the insert race updates what the winner inserted), one record remains.
    let w = s.works.upsert_work(&work("o", "race")).await.unwrap();
    let section = w.sections[0].1;
    let mut page_ids: Vec<i64> = ids.into_iter().collect();
    page_ids.sort_unstable();
    for &page_id in &page_ids[..4] {
        let writes = (0..8).map(|_| {
            let matches = s.matches.clone();
            let m = NewMatch {
                section_id: section,
                page_id,
                kind: "identical".into(),
                comparison: comparison(TEXT_A, TEXT_A),
                seen_at: Timestamp(1_763_683_200_000),
            };
            tokio::spawn(async move { matches.upsert_matches(&[m]).await })
        });
        let mut recorded = std::collections::HashSet::new();
        for w in writes.collect::<Vec<_>>() {
            let up = w.await.unwrap().unwrap_or_else(|e| panic!("a concurrent writer failed: {e}"));
            recorded.insert(up[0].id);
        }
        assert_eq!(recorded.len(), 1, "one match for one (section, page): {recorded:?}");
        assert!(s.matches.find_match(section, page_id).await.unwrap().is_some());
    }

    // Workers indexing the same new sections at once (both read "none stored", both
    // insert): every writer succeeds, one record per subject remains, and each subject
    // counts as inserted by one writer only.
    let fp = fingerprints(TEXT_A);
    let subjects: Vec<Subject> = page_ids.iter().map(|&id| Subject::page(id)).collect();
    let writes = (0..8).map(|_| {
        let store = s.fingerprints.clone();
        let items: Vec<(Subject, zhiwen_core::Fingerprints)> = subjects.iter().map(|&sub| (sub, fp.clone())).collect();
        tokio::spawn(async move { store.put_fingerprints_many(&items).await })
    });
    let mut inserted = 0;
    for w in writes.collect::<Vec<_>>() {
        let counts = w.await.unwrap().unwrap_or_else(|e| panic!("a concurrent writer failed: {e}"));
        assert_eq!(counts.inserted + counts.updated + counts.unchanged, subjects.len() as u64);
        inserted += counts.inserted;
    }
    assert_eq!(inserted, subjects.len() as u64, "each subject inserted once");
    assert_eq!(s.fingerprints.get_fingerprints_many(&subjects).await.unwrap().len(), subjects.len());
}

/// Named values: absent until put, replaced by a later put, separate per name.
pub async fn meta_values(s: &Stores) {
    assert_eq!(s.meta.get_meta(INDEX_IDENTITY).await.unwrap(), None);
    s.meta.put_meta(INDEX_IDENTITY, "a1").await.unwrap();
    s.meta.put_meta(INDEX_IDENTITY, "a1").await.unwrap();
    assert_eq!(s.meta.get_meta(INDEX_IDENTITY).await.unwrap().as_deref(), Some("a1"));
    s.meta.put_meta(INDEX_IDENTITY, "rebuilding:b2").await.unwrap();
    s.meta.put_meta("other", "x").await.unwrap();
    assert_eq!(s.meta.get_meta(INDEX_IDENTITY).await.unwrap().as_deref(), Some("rebuilding:b2"));
    assert_eq!(s.meta.get_meta("other").await.unwrap().as_deref(), Some("x"));
    assert_eq!(s.meta.get_meta("missing").await.unwrap(), None);
}
