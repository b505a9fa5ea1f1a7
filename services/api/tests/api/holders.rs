//! Holders: profiles, rights documents, licensed domains and alert settings, and who may
//! change them; the alert e-mail of a match a task of the server's worker found.

use serde_json::json;

use crate::{assert_error, Env};

pub(crate) async fn profiles_documents_and_licensed(env: &Env) {
    let m = env.the_match().await;
    let (mid, wid) = (m["id"].clone(), m["work_id"].as_i64().unwrap());
    assert_eq!((m["owner"].as_str(), m["site"].as_str()), (Some("jinling-press"), Some("pirate.example")));
    let path = "/api/v1/holders/jinling-press";

    // Nothing recorded yet: an empty holder, version 0. Another holder sees a 404.
    let h = env.get(path, &env.holder).await.json();
    assert_eq!((h["owner"].as_str(), h["version"].as_u64()), (Some("jinling-press"), Some(0)));
    assert_error(&env.get(path, &env.other).await, 404, "not_found");
    let listed = env.get("/api/v1/holders", &env.other).await.json();
    assert!(listed["items"].as_array().unwrap().iter().all(|h| h["owner"] == "luoguan-books"), "{listed}");

    // The holder writes its own profile; a stale version is a conflict; bad input is a 400.
    let profile = json!({"version": 0, "legal_name": "金陵出版社有限公司", "contact_person": "王熙凤",
        "address": "南京市秦淮区1号", "phone": "025-1234567", "email": "legal@jinling.example"});
    let r = env.call("PUT", &format!("{path}/profile"), Some(&env.holder), Some(profile.clone())).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["version"], 1);
    assert_eq!(r.json()["profile"]["legal_name"], "金陵出版社有限公司");
    let r = env.call("PUT", &format!("{path}/profile"), Some(&env.holder), Some(profile.clone())).await;
    assert_error(&r, 409, "conflict");
    let mut bad = profile.clone();
    bad["version"] = json!(1);
    bad["email"] = json!("not an address");
    assert_error(
        &env.call("PUT", &format!("{path}/profile"), Some(&env.holder), Some(bad.clone())).await,
        400,
        "bad_request",
    );
    bad["email"] = json!("a@b.example");
    bad["address"] = json!("line\r\nBcc: x@y.example");
    assert_error(&env.call("PUT", &format!("{path}/profile"), Some(&env.holder), Some(bad)).await, 400, "bad_request");
    let mut extra = profile.clone();
    extra["owner"] = json!("luoguan-books");
    assert_error(
        &env.call("PUT", &format!("{path}/profile"), Some(&env.holder), Some(extra)).await,
        400,
        "bad_request",
    );
    // Whatever the body says, another holder cannot write it, nor an analyst.
    let r = env.call("PUT", &format!("{path}/profile"), Some(&env.other), Some(profile.clone())).await;
    assert_error(&r, 404, "not_found");
    let r = env.call("PUT", &format!("{path}/profile"), Some(&env.analyst), Some(profile.clone())).await;
    assert_error(&r, 403, "forbidden");
    assert_eq!(env.get(path, &env.admin).await.json()["profile"]["contact_person"], "王熙凤");

    // A rights document: uploaded raw, read back byte for byte, under its SHA-256.
    let pdf = b"%PDF-1.4 licence of jinling-press".to_vec();
    let name = "%E8%91%97%E4%BD%9C%E6%9D%83%E8%AF%81%E4%B9%A6.pdf"; // 著作权证书.pdf
    let r = env
        .raw(
            &format!("{path}/documents?name={name}&version=1"),
            &env.holder,
            &[("Content-Type", "application/pdf")],
            pdf.clone(),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let sha = r.json()["sha256"].as_str().unwrap().to_owned();
    assert_eq!(r.json()["name"], "著作权证书.pdf");
    let got = env.get(&format!("{path}/documents/{sha}"), &env.admin).await;
    assert_eq!((got.status, got.bytes.clone()), (200, pdf.clone()));
    let disposition = got.headers["content-disposition"].to_str().unwrap().to_owned();
    assert!(disposition.starts_with("attachment;") && disposition.contains("UTF-8''"), "{disposition}");
    assert_error(&env.get(&format!("{path}/documents/{sha}"), &env.other).await, 404, "not_found");
    let r = env.raw(&format!("{path}/documents?name=x.pdf&version=2"), &env.other, &[], pdf.clone()).await;
    assert_error(&r, 404, "not_found");
    let r = env.raw(&format!("{path}/documents?name=..%2Fx&version=2"), &env.holder, &[], pdf.clone()).await;
    assert_error(&r, 400, "bad_request");
    let big = vec![b'x'; (10 << 20) + 1];
    let r = env.raw(&format!("{path}/documents?name=big.bin&version=2"), &env.holder, &[], big).await;
    assert_error(&r, 413, "payload_too_large");
    assert_eq!(env.get(path, &env.admin).await.json()["documents"].as_array().unwrap().len(), 1);

    // Licensed domains: the match's site licensed -> the match is `licensed`, and the
    // export counts it apart; taking it off the list makes it `new` again.
    let r = env
        .call("POST", &format!("/api/v1/matches/{mid}/review"), Some(&env.admin), Some(json!({"status": "confirmed"})))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let body = json!({"version": 2, "domains": [{"domain": "HTTPS://Pirate.Example/"}, {"domain": "partner.example", "work_id": wid}]});
    let r = env.call("PUT", &format!("{path}/licensed"), Some(&env.holder), Some(body)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["relabelled"], json!({"licensed": 1, "unlicensed": 0}));
    let domains: Vec<&str> =
        v["holder"]["licensed"].as_array().unwrap().iter().map(|d| d["domain"].as_str().unwrap()).collect();
    assert_eq!(domains, ["pirate.example", "partner.example"]);
    let m = env.get(&format!("/api/v1/matches/{mid}"), &env.admin).await.json();
    assert_eq!(m["match"]["status"], "licensed");
    let licensed = env.get("/api/v1/matches?status=licensed", &env.holder).await.json();
    assert_eq!(licensed["items"].as_array().unwrap().len(), 1);
    // A reviewer cannot set or clear `licensed` by hand.
    let r = env
        .call("POST", &format!("/api/v1/matches/{mid}/review"), Some(&env.admin), Some(json!({"status": "licensed"})))
        .await;
    assert_error(&r, 400, "bad_request");
    let trail = |m: &serde_json::Value| m["review_log"].as_array().map_or(0, Vec::len);
    let before = trail(&env.get(&format!("/api/v1/matches/{mid}"), &env.admin).await.json());
    for to in ["confirmed", "new", "dismissed"] {
        let body = json!({"status": to});
        let r = env.call("POST", &format!("/api/v1/matches/{mid}/review"), Some(&env.holder), Some(body)).await;
        assert_error(&r, 409, "conflict");
        let body = json!({"ids": [mid], "status": to});
        let r = env.call("POST", "/api/v1/matches/review", Some(&env.admin), Some(body)).await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json(), json!({"updated": [], "unchanged": [], "not_found": [], "licensed": [mid]}));
    }
    let m = env.get(&format!("/api/v1/matches/{mid}"), &env.admin).await.json();
    assert_eq!(m["match"]["status"], "licensed");
    assert_eq!(trail(&m), before, "nothing added to the review trail");
    // Bad domains and another owner's work are refused, and change nothing.
    for bad in [json!([{"domain": "not a domain"}]), json!([{"domain": "x.example", "work_id": 987654}])] {
        let r = env
            .call("PUT", &format!("{path}/licensed"), Some(&env.holder), Some(json!({"version": 3, "domains": bad})))
            .await;
        assert_error(&r, 400, "bad_request");
    }
    let r = env
        .call("PUT", &format!("{path}/licensed"), Some(&env.other), Some(json!({"version": 3, "domains": []})))
        .await;
    assert_error(&r, 404, "not_found");
    let r = env
        .call("PUT", &format!("{path}/licensed"), Some(&env.admin), Some(json!({"version": 3, "domains": []})))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["relabelled"], json!({"licensed": 0, "unlicensed": 1}));
    assert_eq!(env.get(&format!("/api/v1/matches/{mid}"), &env.admin).await.json()["match"]["status"], "new");

    // Removing the document keeps the file (it may be cited) but not the entry.
    let r = env.call("DELETE", &format!("{path}/documents/{sha}?version=4"), Some(&env.holder), None).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["documents"], json!([]));
}

/// The alert settings of `luoguan-books`, set by that holder: what another holder or an
/// analyst cannot change, and what is refused.
pub(crate) async fn alert_settings(env: &Env) {
    let path = "/api/v1/holders/luoguan-books";
    let h = env.get(path, &env.other).await.json();
    assert_eq!(h["alerts"]["recipients"], json!([]), "alerts are off by default: {h}");
    assert_eq!((h["alerts"]["mode"].as_str(), h["alerts"]["lang"].as_str()), (Some("immediate"), Some("zh-CN")));
    let version = h["version"].as_u64().unwrap();
    let settings = json!({"version": version, "recipients": [" watch@luoguan.example ", "watch@luoguan.example"],
        "min_score": 0.5, "mode": "immediate", "max_per_hour": 5, "lang": "en"});
    let alerts = format!("{path}/alerts");

    // Another holder and an analyst cannot change them, whatever the body says.
    assert_error(&env.call("PUT", &alerts, Some(&env.holder), Some(settings.clone())).await, 404, "not_found");
    assert_error(&env.call("PUT", &alerts, Some(&env.analyst), Some(settings.clone())).await, 403, "forbidden");
    assert_eq!(env.get(path, &env.admin).await.json()["alerts"]["recipients"], json!([]));
    // Bad input is a 400 and changes nothing.
    for (field, value) in [
        ("recipients", json!(["not an address"])),
        ("recipients", json!(["a@b.example>, c@d.example"])),
        ("min_score", json!(1.5)),
        ("max_per_hour", json!(0)),
        ("lang", json!("fr")),
        ("mode", json!("hourly")),
    ] {
        let mut bad = settings.clone();
        bad[field] = value;
        let r = env.call("PUT", &alerts, Some(&env.other), Some(bad)).await;
        assert_error(&r, 400, "bad_request");
    }

    // The holder sets its own; the addresses are trimmed and kept once.
    let r = env.call("PUT", &alerts, Some(&env.other), Some(settings.clone())).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let stored = r.json();
    assert_eq!(stored["version"].as_u64(), Some(version + 1));
    assert_eq!(
        stored["alerts"],
        json!({"recipients": ["watch@luoguan.example"], "min_score": 0.5, "mode": "immediate", "max_per_hour": 5, "lang": "en"})
    );
    // The version read is checked.
    assert_error(&env.call("PUT", &alerts, Some(&env.other), Some(settings)).await, 409, "conflict");
    assert_eq!(env.get(path, &env.admin).await.json()["alerts"]["lang"], "en");
}

/// The work `luoguan-books` registered while the worker ran (`worker_runs_tasks`) was
/// matched by a task of the worker, and its holder got one alert e-mail, in English
/// (sent beside the task, so it may arrive just after it).
pub(crate) async fn a_new_match_is_alerted(smtp: &zhiwen_testkit::smtp::SmtpServer) {
    for _ in 0..100 {
        if !smtp.messages().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let messages = smtp.messages();
    assert_eq!(messages.len(), 1, "one alert e-mail");
    let text = String::from_utf8_lossy(&messages[0]).into_owned();
    assert!(text.contains("watch@luoguan.example"), "{text}");
    let parsed = mail_parser::MessageParser::default().parse(&messages[0]).expect("an e-mail");
    let subject = parsed.subject().unwrap_or_default().to_owned();
    assert!(subject.contains("1 new match"), "{subject}");
    let body = parsed.body_text(0).map(|b| b.into_owned()).unwrap_or_default();
    for needle in ["新登记的作品", "Page: http", "Score: ", "https://dash.zhiwen.test/matches/"] {
        assert!(body.contains(needle), "{needle} missing from:\n{body}");
    }
}

/// `jinling-press` in digest mode: its new match gets no e-mail at once; the digest task
/// of a daily slot, run by the server's worker, sends one e-mail with it; the same slot
/// queues no second task, and the next slot's digest has nothing to send.
pub(crate) async fn the_worker_sends_the_daily_digest(env: &Env, smtp: &zhiwen_testkit::smtp::SmtpServer) {
    let before = smtp.messages().len();
    let path = "/api/v1/holders/jinling-press";
    let version = env.get(path, &env.holder).await.json()["version"].as_u64().unwrap();
    let settings = json!({"version": version, "recipients": ["digest@jinling.example"], "min_score": 0.5,
        "mode": "digest", "max_per_hour": 1, "lang": "zh-CN"});
    let r = env.call("PUT", &format!("{path}/alerts"), Some(&env.holder), Some(settings)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let m = env.the_match().await;
    let found = zhiwen_takedown::NewMatchAlert {
        match_id: m["id"].as_i64().unwrap(),
        work_id: m["work_id"].as_i64().unwrap(),
        score: m["score"].as_f64().unwrap(),
    };
    let alerts = env.state.alerts.clone().expect("alerts are on");
    let report = alerts.on_new_matches(&[found]).await.expect("queued");
    assert_eq!((report.queued, report.emails), (1, 0), "digest mode: nothing at once");
    assert_eq!(smtp.messages().len(), before);

    let slot = chrono::DateTime::parse_from_rfc3339("2026-11-25T18:00:00Z").unwrap().with_timezone(&chrono::Utc);
    let run_digest = |slot: chrono::DateTime<chrono::Utc>| async move {
        let task = zhiwen_api::alerts::digest_task(slot, chrono_tz::Asia::Shanghai);
        let (t, outcome) = env.stores.tasks.create_task(&task).await.unwrap();
        let token = zhiwen_ingest::CancellationToken::new();
        let worker = tokio::spawn(zhiwen_api::worker::run(env.state.clone(), Default::default(), token.clone()));
        let mut state = zhiwen_store::TaskState::Queued;
        for _ in 0..300 {
            state = env.stores.tasks.get_task(t.id).await.unwrap().unwrap().state;
            if state != zhiwen_store::TaskState::Queued && state != zhiwen_store::TaskState::Running {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        token.cancel();
        worker.await.unwrap();
        (t, outcome, state)
    };
    let (t, outcome, state) = run_digest(slot).await;
    assert_eq!((outcome, state), (zhiwen_store::Outcome::Inserted, zhiwen_store::TaskState::Succeeded));
    assert_eq!(t.params["day"], "2026-11-26", "the slot's day in the schedule's time zone");
    let messages = smtp.messages();
    assert_eq!(messages.len(), before + 1, "one digest");
    let parsed = mail_parser::MessageParser::default().parse(&messages[before]).expect("an e-mail");
    let subject = parsed.subject().unwrap_or_default().to_owned();
    assert!(subject.contains("2026-11-26") && subject.contains("1 处"), "{subject}");
    let body = parsed.body_text(0).map(|b| b.into_owned()).unwrap_or_default();
    assert!(body.contains(m["url"].as_str().unwrap()) && body.contains("相似度："), "{body}");

    // The same slot again: the same task, nothing sent; the next slot: nothing waits.
    let (again, outcome, _) = run_digest(slot).await;
    assert_eq!((again.id, outcome), (t.id, zhiwen_store::Outcome::Unchanged));
    let (_, outcome, state) = run_digest(slot + chrono::Duration::days(1)).await;
    assert_eq!((outcome, state), (zhiwen_store::Outcome::Inserted, zhiwen_store::TaskState::Succeeded));
    assert_eq!(smtp.messages().len(), before + 1, "no second digest");
}
