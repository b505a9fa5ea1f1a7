//! Conformance case of the one match query ([`MatchQuery`]): every field, alone and
//! combined, selects the same matches in every read that takes it (the pipeline's
//! `list_matches`, the dashboard's `query_matches` and `count_matches`, and the exports'
//! `query_matches_with_evidence`), on both backends, as a plain model of the query says.

use zhiwen_core::compare::Comparison;
use zhiwen_store::*;

use crate::fixtures::*;

/// What the model of the query knows of one stored match.
struct Fact {
    id: i64,
    owner: &'static str,
    work_id: i64,
    section_id: i64,
    page_id: i64,
    site: &'static str,
    kind: &'static str,
    status: ReviewStatus,
    score: f64,
    first_seen: Timestamp,
    last_seen: Timestamp,
}

/// The query's meaning, written plainly.
fn passes(q: &MatchQuery, f: &Fact) -> bool {
    q.owner.as_deref().is_none_or(|o| o == f.owner)
        && q.work_id.is_none_or(|v| v == f.work_id)
        && q.section_id.is_none_or(|v| v == f.section_id)
        && q.page_id.is_none_or(|v| v == f.page_id)
        && q.site.as_deref().is_none_or(|v| v.to_lowercase() == f.site)
        && q.kind.as_deref().is_none_or(|v| v == f.kind)
        && q.status.is_none_or(|v| v == f.status)
        && !q.not_status.contains(&f.status)
        && q.min_score.is_none_or(|v| f.score >= v)
        && q.max_score.is_none_or(|v| f.score <= v)
        && q.last_seen_from.is_none_or(|v| f.last_seen >= v)
        && q.last_seen_until.is_none_or(|v| f.last_seen < v)
        && q.first_seen_from.is_none_or(|v| f.first_seen >= v)
        && q.first_seen_until.is_none_or(|v| f.first_seen < v)
}

/// The longest evidence passage of a comparison, both sides (as the exports show it).
fn longest(c: &Comparison) -> (String, String) {
    c.evidence.iter().max_by_key(|e| e.chars).map(|e| (e.a_text.clone(), e.b_text.clone())).unwrap_or_default()
}

pub async fn match_query_fields_in_every_read(s: &Stores) {
    let wa = s.works.upsert_work(&work("甲", "qa")).await.unwrap();
    let wb = s.works.upsert_work(&work("乙", "qb")).await.unwrap();
    let p1 = s.pages.upsert_page(&page("https://a.example/1", TEXT_A, 1)).await.unwrap().id;
    let p2 = s.pages.upsert_page(&page("https://b.example/2", TEXT_A, 1)).await.unwrap().id;
    let p3 = s.pages.upsert_page(&page("https://b.example/3", TEXT_A, 1)).await.unwrap().id;
    let copy = comparison(TEXT_A, TEXT_A);
    let other = comparison(TEXT_B, TEXT_A);
    assert!(!copy.evidence.is_empty(), "a copy has evidence");
    let day1 = Timestamp(1_763_683_200_000); // 2025-11-21T00:00:00Z
    let (day2, day3) = (Timestamp(day1.0 + 86_400_000), Timestamp(day1.0 + 2 * 86_400_000));

    let mut facts = Vec::new();
    #[allow(clippy::too_many_arguments)]
    async fn record(
        s: &Stores,
        owner: &'static str,
        work_id: i64,
        section_id: i64,
        (page_id, site): (i64, &'static str),
        kind: &'static str,
        comparison: &Comparison,
        seen: &[Timestamp],
        status: ReviewStatus,
    ) -> Fact {
        let mut id = 0;
        for &seen_at in seen {
            let m = NewMatch { section_id, page_id, kind: kind.into(), comparison: comparison.clone(), seen_at };
            id = s.matches.upsert_match(&m).await.unwrap().id;
        }
        if status != ReviewStatus::New {
            s.matches.set_review(id, status, "reviewer", None, seen[0]).await.unwrap();
        }
        let (first_seen, last_seen) = (seen[0], seen[seen.len() - 1]);
        let score = comparison.verdict.score;
        Fact { id, owner, work_id, section_id, page_id, site, kind, status, score, first_seen, last_seen }
    }
    let (a0, a1, b0) = (wa.sections[0].1, wa.sections[1].1, wb.sections[0].1);
    let a = (p1, "a.example");
    let (b2, b3) = ((p2, "b.example"), (p3, "b.example"));
    facts.push(record(s, "甲", wa.id, a0, a, "identical", &copy, &[day1, day3], ReviewStatus::New).await);
    facts.push(record(s, "甲", wa.id, a1, b2, "excerpt", &other, &[day2], ReviewStatus::New).await);
    facts.push(record(s, "乙", wb.id, b0, b2, "embedded", &copy, &[day2], ReviewStatus::Dismissed).await);
    facts.push(record(s, "乙", wb.id, b0, b3, "excerpt", &copy, &[day3], ReviewStatus::Confirmed).await);
    let comparisons = [&copy, &other, &copy, &copy];

    let q = MatchQuery::default;
    let mut queries = vec![
        q(),
        MatchQuery { owner: Some("甲".into()), ..q() },
        MatchQuery { owner: Some("乙".into()), ..q() },
        MatchQuery { owner: Some("nobody".into()), ..q() },
        // An owner's restriction holds whatever else is asked for.
        MatchQuery { owner: Some("乙".into()), work_id: Some(wa.id), ..q() },
        MatchQuery { owner: Some("乙".into()), page_id: Some(p1), ..q() },
        MatchQuery { work_id: Some(wa.id), ..q() },
        MatchQuery { section_id: Some(b0), ..q() },
        MatchQuery { page_id: Some(p2), ..q() },
        MatchQuery { site: Some("B.Example".into()), ..q() },
        MatchQuery { kind: Some("excerpt".into()), ..q() },
        MatchQuery { status: Some(ReviewStatus::Dismissed), ..q() },
        MatchQuery { not_status: vec![ReviewStatus::Dismissed, ReviewStatus::Confirmed], ..q() },
        MatchQuery { not_status: vec![ReviewStatus::New], ..q() },
        MatchQuery { min_score: Some(copy.verdict.score), ..q() },
        MatchQuery { max_score: Some(other.verdict.score), ..q() },
        MatchQuery { last_seen_from: Some(day3), ..q() },
        MatchQuery { last_seen_until: Some(day3), ..q() },
        MatchQuery { first_seen_from: Some(day2), ..q() },
        MatchQuery { first_seen_until: Some(day2), ..q() },
        MatchQuery { first_seen_from: Some(day2), first_seen_until: Some(day3), ..q() },
        MatchQuery { owner: Some("甲".into()), kind: Some("excerpt".into()), site: Some("b.example".into()), ..q() },
        MatchQuery { status: Some(ReviewStatus::Confirmed), not_status: vec![ReviewStatus::Confirmed], ..q() },
    ];
    // Every field of the query is exercised above (this fails to build when a field is
    // added and not listed here).
    let MatchQuery {
        owner: _,
        work_id: _,
        section_id: _,
        page_id: _,
        site: _,
        kind: _,
        status: _,
        not_status: _,
        min_score: _,
        max_score: _,
        last_seen_from: _,
        last_seen_until: _,
        first_seen_from: _,
        first_seen_until: _,
    } = q();
    queries.push(MatchQuery { last_seen_from: Some(day1), last_seen_until: Some(day3), ..q() });

    let by_id = MatchSort { key: MatchSortKey::Id, descending: false };
    for query in &queries {
        let expected: Vec<i64> = facts.iter().filter(|f| passes(query, f)).map(|f| f.id).collect();
        let listed: Vec<i64> = s.matches.list_matches(query, 0, 100).await.unwrap().iter().map(|m| m.id).collect();
        assert_eq!(listed, expected, "list_matches {query:?}");
        let rows = s.queries.query_matches(query, by_id, None, 100).await.unwrap();
        assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), expected, "query_matches {query:?}");
        assert_eq!(s.queries.count_matches(query).await.unwrap(), expected.len() as u64, "count {query:?}");
        let with = s.queries.query_matches_with_evidence(query, by_id, None, 100).await.unwrap();
        assert_eq!(with.iter().map(|r| r.row.clone()).collect::<Vec<_>>(), rows, "with evidence {query:?}");
        for r in &with {
            let i = facts.iter().position(|f| f.id == r.row.id).unwrap();
            let (section, page) = longest(comparisons[i]);
            assert_eq!((&r.evidence_section, &r.evidence_page), (&section, &page), "match {}", r.row.id);
            let f = &facts[i];
            assert_eq!((r.row.owner.as_str(), r.row.work_id, r.row.page_id), (f.owner, f.work_id, f.page_id));
            assert_eq!((r.row.first_seen, r.row.last_seen, r.row.status), (f.first_seen, f.last_seen, f.status));
        }
    }
    // A copy's evidence is there; a comparison without passages has none.
    let with = s.queries.query_matches_with_evidence(&q(), by_id, None, 100).await.unwrap();
    assert!(!with[0].evidence_section.is_empty() && !with[0].evidence_page.is_empty());
    if other.evidence.is_empty() {
        assert_eq!((with[1].evidence_section.as_str(), with[1].evidence_page.as_str()), ("", ""));
    }

    // Paged by cursor (one row at a time, newest first), the exports' read walks the same rows.
    let desc = MatchSort { key: MatchSortKey::LastSeen, descending: true };
    let all = s.queries.query_matches(&q(), desc, None, 100).await.unwrap();
    let (mut walked, mut after) = (Vec::new(), None);
    loop {
        let page = s.queries.query_matches_with_evidence(&q(), desc, after, 1).await.unwrap();
        let Some(last) = page.last() else { break };
        after = Some(MatchCursor { value: last.row.sort_value(desc.key), id: last.row.id });
        walked.extend(page.into_iter().map(|r| r.row));
    }
    assert_eq!(walked, all);
}
