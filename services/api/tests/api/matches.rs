//! Matches with their evidence and reviews, statistics, exports and the evidence report.

use serde_json::{json, Value};
use zhiwen_matcher::MatcherConfig;

use crate::{assert_error, Env};

/// Listing, paging, evidence, review trail, statistics.
pub(crate) async fn matches_evidence_and_review(env: &Env) {
    let m = env.the_match().await;
    let id = m["id"].as_i64().unwrap();
    assert_eq!(m["work_title"], "红楼梦 第一回 甄士隐梦幻识通灵 贾雨村风尘怀闺秀");
    assert!(m["score"].as_f64().unwrap() > 0.5 && m["copied_chars"].as_u64().unwrap() > 1000, "{m}");

    let d = env.get(&format!("/api/v1/matches/{id}"), &env.analyst).await.json();
    let explanation = d["explanation"]["zh"].as_str().unwrap();
    assert!(explanation.starts_with("第1章") && explanation.contains("% 的内容出现在此网页上"), "{explanation}");
    assert!(d["explanation"]["en"].as_str().unwrap().contains("of chapter 1 appears on this page"), "{d}");
    // The verdict's reasons: one line per evidence passage at least, in both languages.
    let passages = d["passages"].as_array().map_or(0, Vec::len);
    for lang in ["zh", "en"] {
        let lines = d["explanation"]["reasons"][lang].as_array().unwrap_or_else(|| panic!("reasons.{lang}: {d}"));
        assert!(passages > 0 && lines.len() >= passages, "{lang}: {} lines for {passages} passages", lines.len());
    }
    assert!(d["explanation"]["reasons"]["zh"][0].as_str().unwrap().starts_with("段落 1"), "{d}");
    let passages = d["passages"].as_array().unwrap();
    assert!(!passages.is_empty());
    let work = env.stores.works.get_section(m["section_id"].as_i64().unwrap()).await.unwrap().unwrap();
    let chars: Vec<char> = work.text.chars().collect();
    for p in passages {
        let (s, e) = (p["work"]["start"].as_u64().unwrap() as usize, p["work"]["end"].as_u64().unwrap() as usize);
        // The quoted work passage is exactly the section's text at its offsets.
        assert_eq!(chars[s..e].iter().collect::<String>(), p["work"]["text"].as_str().unwrap());
        // With up to 60 characters of the section's text on either side.
        let around = |a: usize, b: usize| chars[a.min(chars.len())..b.min(chars.len())].iter().collect::<String>();
        assert_eq!(p["work"]["before"].as_str().unwrap(), around(s.saturating_sub(60), s));
        assert_eq!(p["work"]["after"].as_str().unwrap(), around(e, e + 60));
        // The page side quotes the pirate copy in traditional script.
        let page_text = p["page"]["text"].as_str().unwrap();
        assert!(page_text.contains("開卷第一回"), "{page_text:.80}");
        // The pirate page is HTML: its quote also reads as a reader sees it, without markup.
        let visible = &p["page"]["visible"];
        for piece in ["before", "text", "after"] {
            let v = visible[piece].as_str().unwrap_or_else(|| panic!("page.visible.{piece}: {p}"));
            // (A `>` of the text itself, an ad's `net>txt`, stays: only tags go.)
            let tag = v
                .match_indices('<')
                .any(|(i, _)| v[i + 1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '/' || c == '!'));
            assert!(!tag, "page.visible.{piece} has markup: {v:.200}");
        }
        assert!(visible["text"].as_str().unwrap().contains("開卷第一回"), "{visible}");
        assert!(p["work"].get("visible").is_none(), "the work side is plain text: {p}");
    }
    assert!(d["scores"]["containment_ab"].as_f64().is_some());

    // The match carries the kind of copy the matcher decided (not the verdict's kind, which
    // the detail shows beside it); the kind filter and the statistics speak the same kinds.
    let stored = env.stores.matches.get_match(id).await.unwrap().unwrap();
    let kind = zhiwen_matcher::MatchKind::of(&stored.comparison, &MatcherConfig::default().thresholds).unwrap();
    assert_eq!((m["kind"].as_str(), d["match"]["kind"].as_str()), (Some(kind.as_str()), Some(kind.as_str())), "{d}");
    assert_eq!(d["match"]["verdict_kind"], stored.comparison.verdict.kind.as_str());
    for k in zhiwen_store::MATCH_KINDS {
        let r = env.get(&format!("/api/v1/matches?kind={k}"), &env.analyst).await.json();
        assert_eq!(r["items"].as_array().unwrap().len(), usize::from(k == kind.as_str()), "kind={k}: {r}");
    }
    for bad in ["a_within_b", "b_within_a", "copy"] {
        assert_error(&env.get(&format!("/api/v1/matches?kind={bad}"), &env.analyst).await, 400, "bad_request");
    }
    let s = env.get("/api/v1/stats", &env.holder).await.json();
    let by_kind = s["by_kind"].as_object().unwrap();
    assert_eq!(by_kind.len(), 4, "{s}");
    assert_eq!(
        (by_kind[kind.as_str()].clone(), by_kind.values().filter_map(Value::as_u64).sum::<u64>()),
        (json!(1), 1)
    );

    // Review with an audit trail, bulk review, status filter.
    let r = env
        .call(
            "POST",
            &format!("/api/v1/matches/{id}/review"),
            Some(&env.holder),
            Some(json!({"status": "confirmed", "note": "已核实，确为盗版"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let log = r.json()["review_log"].as_array().unwrap().clone();
    let last = log.last().unwrap();
    assert_eq!((last["to"].clone(), last["note"].clone()), (json!("confirmed"), json!("已核实，确为盗版")));
    assert!(last["by"].as_str().unwrap().contains("金陵书局"), "{last}");
    let r = env
        .call(
            "POST",
            "/api/v1/matches/review",
            Some(&env.analyst),
            Some(json!({"ids": [id, 999999], "status": "takedown_sent"})),
        )
        .await
        .json();
    assert_eq!((r["updated"].clone(), r["not_found"].clone()), (json!([id]), json!([999999])));
    let r = env
        .call(
            "POST",
            "/api/v1/matches/review",
            Some(&env.analyst),
            Some(json!({"ids": [id], "status": "takedown_sent"})),
        )
        .await
        .json();
    assert_eq!(r["unchanged"], json!([id]));
    let r = env.get("/api/v1/matches?status=takedown_sent", &env.analyst).await.json();
    assert_eq!(r["items"].as_array().unwrap().len(), 1);
    let r = env.get("/api/v1/matches?status=new", &env.analyst).await.json();
    assert_eq!(r["items"], json!([]));
    let r = env.get("/api/v1/matches?min_score=0.9999&max_score=1", &env.analyst).await.json();
    assert_eq!(r["items"].as_array().unwrap().len(), usize::from(m["score"].as_f64().unwrap() >= 0.9999));
    let r = env.get("/api/v1/matches?site=other.example", &env.analyst).await.json();
    assert_eq!(r["items"], json!([]));
    assert_error(&env.get("/api/v1/matches?status=bogus", &env.analyst).await, 400, "bad_request");
    assert_error(&env.get("/api/v1/matches?sort=name", &env.analyst).await, 400, "bad_request");
    assert_error(&env.get("/api/v1/matches?cursor=zz", &env.analyst).await, 400, "bad_request");
    assert_error(&env.get("/api/v1/matches?from=yesterday", &env.analyst).await, 400, "bad_request");
    assert_error(&env.get("/api/v1/matches?min_score=7", &env.analyst).await, 400, "bad_request");
    // Times past what a date can say are refused, not computed with (a debug build's
    // overflow check made `/stats` drop the connection).
    for q in ["to=-9223372036854775808", "from=-9223372036854775808&to=-9223372036854775807", "to=9223372036854775807"]
    {
        assert_error(&env.get(&format!("/api/v1/stats?{q}"), &env.analyst).await, 400, "bad_request");
        assert_error(&env.get(&format!("/api/v1/matches?{q}"), &env.analyst).await, 400, "bad_request");
    }

    // Statistics follow the review.
    let s = env.get("/api/v1/stats", &env.holder).await.json();
    assert_eq!((s["total"].clone(), s["new_today"].clone()), (json!(1), json!(1)), "{s}");
    assert_eq!(s["by_status"]["takedown_sent"], 1);
    assert_eq!(s["top_sites"][0]["site"], "pirate.example");
    assert_eq!(s["top_works"][0]["title"], m["work_title"]);
    assert_eq!(s["by_day"].as_array().unwrap().len(), 1);

    // Work detail: per-section copy counts.
    let w = env.get(&format!("/api/v1/works/{}", m["work_id"]), &env.holder).await.json();
    assert_eq!((w["match_count"].clone(), w["sections"][0]["match_count"].clone()), (json!(1), json!(1)), "{w}");

    // Works search and paging (4 sample works).
    let r = env.get("/api/v1/works?q=水浒", &env.admin).await.json();
    assert_eq!(r["items"][0]["title"].as_str().unwrap().chars().take(3).collect::<String>(), "水浒传");
    let first = env.get("/api/v1/works?limit=3", &env.admin).await.json();
    assert_eq!(first["items"].as_array().unwrap().len(), 3);
    let cursor = first["next_cursor"].as_str().unwrap();
    let second = env.get(&format!("/api/v1/works?limit=3&cursor={cursor}"), &env.admin).await.json();
    assert_eq!((second["items"].as_array().unwrap().len(), second["next_cursor"].clone()), (1, Value::Null));

    // Pages by URL; raw body on request.
    let p = env.get("/api/v1/pages?url=http://pirate.example/book/pirate-copy-big5.html", &env.holder).await.json();
    let pid = p["items"][0]["id"].as_i64().unwrap();
    let page = env.get(&format!("/api/v1/pages/{pid}?body=true"), &env.holder).await.json();
    assert_eq!(page["charset"], "Big5");
    assert!(page["text"].as_str().unwrap().contains("此开卷第一回也"), "{:.200}", page["text"]);
    assert!(page["body_base64"].as_str().is_some_and(|b| b.len() > 1000));
}

pub(crate) async fn exports_and_report(env: &Env) {
    let m = env.the_match().await;
    let r = env.get("/api/v1/exports/matches?format=csv", &env.analyst).await;
    assert_eq!(r.status, 200);
    assert!(r.bytes.starts_with(b"\xEF\xBB\xBF"), "UTF-8 BOM");
    assert!(r.headers["content-disposition"].to_str().unwrap().starts_with("attachment; filename=\"zhiwen-matches-"));
    let csv = r.text();
    // Records, not lines: the evidence passages may span lines (quoted cells).
    let mut reader = csv::Reader::from_reader(csv.trim_start_matches('\u{feff}').as_bytes());
    let headers = reader.headers().unwrap().clone();
    assert_eq!(headers.iter().collect::<Vec<_>>(), zhiwen_matcher::export::COLUMNS.to_vec(), "{csv}");
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(records.len(), 1, "{csv}");
    let line = records[0].iter().collect::<Vec<_>>().join(",");
    assert!(line.contains("红楼梦 第一回") && line.contains("pirate.example"), "{csv}");
    let kind_col = headers.iter().position(|h| h == "kind").unwrap();
    assert_eq!(records[0].get(kind_col), m["kind"].as_str(), "{csv}");
    let json = env.get("/api/v1/exports/matches?format=json", &env.analyst).await.json();
    assert_eq!(json.as_array().unwrap()[0]["match_id"], m["id"]);
    // The evidence comes with the row, as in the command line's export.
    assert!(json[0]["evidence_page"].as_str().is_some_and(|e| !e.is_empty()), "{json}");
    let jsonl = env.get("/api/v1/exports/matches?format=jsonl", &env.analyst).await;
    assert_eq!(jsonl.status, 200);
    let line: Value = serde_json::from_str(jsonl.text().lines().next().unwrap()).unwrap();
    assert_eq!(line["match_id"], m["id"]);
    let empty = env.get("/api/v1/exports/matches?format=json&site=nowhere.example", &env.analyst).await.json();
    assert_eq!(empty, json!([]));
    let x = env.get("/api/v1/exports/matches?format=xlsx", &env.analyst).await;
    assert_eq!(x.status, 200);
    assert!(x.bytes.starts_with(b"PK"), "an XLSX is a zip");
    assert_error(&env.get("/api/v1/exports/matches?format=pdf", &env.analyst).await, 400, "bad_request");

    let report = env.get(&format!("/api/v1/works/{}/report", m["work_id"]), &env.holder).await;
    assert_eq!(report.status, 200);
    let html = report.text();
    assert!(html.contains("<html lang=zh-CN>") && html.contains("侵权证据报告"), "{html:.300}");
    assert!(
        html.contains("http://pirate.example/book/pirate-copy-big5.html") && html.contains("<mark>"),
        "{html:.300}"
    );
    // The page side quotes the page as a reader sees it: no escaped markup of the page.
    assert!(!html.contains("&lt;/") && !html.contains("&lt;p"), "markup quoted in the report: {html:.2000}");
    let en = env.get(&format!("/api/v1/works/{}/report?lang=en", m["work_id"]), &env.holder).await.text();
    assert!(en.contains("Evidence report") && en.contains("Infringing page"), "{en:.300}");
    pdf_report(env, &m).await;
    // A dismissed match leaves the default report.
    env.call(
        "POST",
        &format!("/api/v1/matches/{}/review", m["id"]),
        Some(&env.admin),
        Some(json!({"status": "dismissed"})),
    )
    .await;
    let html = env.get(&format!("/api/v1/works/{}/report", m["work_id"]), &env.holder).await.text();
    assert!(html.contains("没有匹配记录") && !html.contains("<mark>"), "{html:.300}");
}

/// The PDF of the evidence report: printed by Chromium from the same HTML, with the
/// Chinese as text (what `pdftotext` reads back), downloaded under a stable name.
async fn pdf_report(env: &Env, m: &Value) {
    let path = format!("/api/v1/works/{}/report?format=pdf", m["work_id"]);
    assert_error(&env.get(&path.replace("pdf", "docx"), &env.holder).await, 400, "bad_request");
    if env.state.config.chromium.is_none() {
        zhiwen_testkit::unavailable::<()>("Chromium (Debian package chromium)", "not on PATH");
        return;
    }
    let r = env.get(&path, &env.holder).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.headers["content-type"], "application/pdf");
    let disposition = r.headers["content-disposition"].to_str().unwrap();
    assert_eq!(disposition, format!("attachment; filename=\"evidence-report-work-{}.pdf\"", m["work_id"]));
    assert!(r.bytes.starts_with(b"%PDF-"), "{:?}", &r.bytes[..r.bytes.len().min(16)]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.pdf");
    std::fs::write(&file, &r.bytes).unwrap();
    let text = match std::process::Command::new("pdftotext").arg("-enc").arg("UTF-8").arg(&file).arg("-").output() {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        other => {
            zhiwen_testkit::unavailable::<()>("pdftotext (Debian package poppler-utils)", &format!("{other:?}"));
            return;
        }
    };
    // Chromium may break a long URL over lines; the words themselves stay whole.
    for expected in ["侵权证据报告", "红楼梦", "pirate.example", "原作品", "涉嫌侵权网页"] {
        assert!(text.contains(expected), "{expected:?} not in the PDF text: {text:.600}");
    }
    // Another holder guessing the work id gets 404 for the PDF as for the HTML.
    assert_error(&env.get(&path, &env.other).await, 404, "not_found");
}
