//! Roles and holder isolation: who may read and write what.

use serde_json::{json, Value};

use crate::{assert_error, Env, Resp};

/// Every endpoint for every role, including a holder guessing another owner's ids.
pub(crate) async fn roles_and_ownership(env: &Env) {
    let m = env.the_match().await;
    let (mid, wid, sid, pid) = (m["id"].clone(), m["work_id"].clone(), m["section_id"].clone(), m["page_id"].clone());
    assert_eq!(m["owner"], "jinling-press");
    assert_eq!(m["site"], "pirate.example");
    let queued = env.call("POST", "/api/v1/tasks/match", Some(&env.admin), Some(json!({"scope": "all"}))).await;
    assert_eq!(queued.status, 202, "{}", queued.text());
    let tid = queued.json()["id"].clone();

    // (method, path, body, [admin, analyst, holder of the work, holder of another owner])
    let table: Vec<(&str, String, Option<Value>, [u16; 4])> = vec![
        ("GET", "/api/v1/me".into(), None, [200, 200, 200, 200]),
        ("GET", "/api/v1/stats".into(), None, [200, 200, 200, 200]),
        ("GET", format!("/api/v1/stats?work_id={wid}"), None, [200, 200, 200, 404]),
        ("GET", "/api/v1/works".into(), None, [200, 200, 200, 200]),
        ("GET", format!("/api/v1/works/{wid}"), None, [200, 200, 200, 404]),
        ("GET", format!("/api/v1/works/{wid}/sections/{sid}"), None, [200, 200, 200, 404]),
        ("GET", format!("/api/v1/works/{wid}/report"), None, [200, 200, 200, 404]),
        ("PATCH", format!("/api/v1/works/{wid}"), Some(json!({"author": "曹雪芹"})), [200, 403, 200, 404]),
        ("GET", "/api/v1/pages".into(), None, [200, 200, 200, 200]),
        ("GET", format!("/api/v1/pages/{pid}"), None, [200, 200, 200, 404]),
        ("GET", "/api/v1/matches".into(), None, [200, 200, 200, 200]),
        ("GET", format!("/api/v1/matches/{mid}"), None, [200, 200, 200, 404]),
        ("POST", format!("/api/v1/matches/{mid}/review"), Some(json!({"status": "new"})), [200, 200, 200, 404]),
        ("POST", "/api/v1/matches/review".into(), Some(json!({"ids": [mid], "status": "new"})), [200, 200, 200, 200]),
        ("GET", "/api/v1/exports/matches?format=csv".into(), None, [200, 200, 200, 200]),
        ("GET", "/api/v1/exports/matches?format=json".into(), None, [200, 200, 200, 200]),
        ("GET", "/api/v1/tasks".into(), None, [200, 200, 403, 403]),
        ("GET", format!("/api/v1/tasks/{tid}"), None, [200, 200, 403, 403]),
        ("POST", "/api/v1/tasks/match".into(), Some(json!({"scope": "new"})), [202, 403, 403, 403]),
        (
            "POST",
            "/api/v1/tasks/crawl".into(),
            Some(json!({"seeds": ["https://pirate.example/"]})),
            [202, 403, 403, 403],
        ),
        ("POST", format!("/api/v1/tasks/{tid}/cancel"), None, [200, 403, 403, 403]),
        ("GET", "/api/v1/holders".into(), None, [200, 200, 200, 200]),
        ("GET", "/api/v1/holders/jinling-press".into(), None, [200, 200, 200, 404]),
        // A stale version: the caller's rights are checked first (403/404), then the version (409).
        (
            "PUT",
            "/api/v1/holders/jinling-press/profile".into(),
            Some(
                json!({"version": 999, "legal_name": "x", "contact_person": "", "address": "", "phone": "", "email": ""}),
            ),
            [409, 403, 409, 404],
        ),
        (
            "PUT",
            "/api/v1/holders/jinling-press/licensed".into(),
            Some(json!({"version": 999, "domains": [{"domain": "pirate.example"}]})),
            [409, 403, 409, 404],
        ),
        (
            "PUT",
            "/api/v1/holders/jinling-press/alerts".into(),
            Some(
                json!({"version": 999, "recipients": [], "min_score": 0.8, "mode": "immediate", "max_per_hour": 6, "lang": "zh-CN"}),
            ),
            [409, 403, 409, 404],
        ),
        ("POST", "/api/v1/holders/jinling-press/documents?name=a.pdf&version=999".into(), None, [409, 403, 409, 404]),
        ("GET", "/api/v1/holders/jinling-press/documents/00ff".into(), None, [404, 404, 404, 404]),
        ("DELETE", "/api/v1/holders/jinling-press/documents/00ff?version=999".into(), None, [409, 403, 409, 404]),
        ("GET", "/api/v1/notices".into(), None, [200, 200, 200, 200]),
        // No profile yet: the notice cannot be drafted (400) by those who may; another holder: 404.
        (
            "POST",
            "/api/v1/notices".into(),
            Some(json!({"owner": "jinling-press", "site": "pirate.example"})),
            [400, 400, 400, 404],
        ),
        ("GET", "/api/v1/notices/987654".into(), None, [404, 404, 404, 404]),
        ("POST", "/api/v1/notices/987654/send".into(), Some(json!({})), [404, 404, 404, 404]),
        ("GET", "/api/v1/notice-templates".into(), None, [200, 200, 200, 200]),
        ("PUT", "/api/v1/notice-templates/en/subject".into(), Some(json!({"source": "x"})), [400, 403, 403, 403]),
        ("GET", "/api/v1/removals".into(), None, [200, 200, 200, 200]),
        ("GET", "/api/v1/removals/stats".into(), None, [200, 200, 200, 200]),
        ("GET", format!("/api/v1/removals/{pid}"), None, [404, 404, 404, 404]),
    ];
    let keys = [&env.admin, &env.analyst, &env.holder, &env.other];
    for (method, path, body, expected) in &table {
        // Without a key, or with a wrong one: 401 everywhere.
        let r = env.call(method, path, None, body.clone()).await;
        assert_error(&r, 401, "unauthorized");
        let r = env.call(method, path, Some("zw_notakey0000000000000000000000000000000000"), body.clone()).await;
        assert_error(&r, 401, "unauthorized");
        for (k, want) in keys.iter().zip(expected) {
            let r = env.call(method, path, Some(k), body.clone()).await;
            assert_eq!(r.status, *want, "{method} {path} as key {k}: {}", r.text());
            if *want >= 400 {
                let code = match want {
                    400 => "bad_request",
                    403 => "forbidden",
                    404 => "not_found",
                    409 => "conflict",
                    _ => unreachable!(),
                };
                assert_error(&r, *want, code);
            }
        }
    }

    // What the other holder sees in the listings: nothing of jinling-press.
    let other = &env.other;
    let r = env.get("/api/v1/matches", other).await.json();
    assert_eq!(r["items"], json!([]));
    let r = env.get("/api/v1/works", other).await.json();
    let owners: Vec<&str> = r["items"].as_array().unwrap().iter().map(|w| w["owner"].as_str().unwrap()).collect();
    assert_eq!(owners, vec!["luoguan-books", "luoguan-books"]);
    let r = env.get("/api/v1/works?owner=jinling-press", other).await.json();
    assert!(r["items"].as_array().unwrap().iter().all(|w| w["owner"] == "luoguan-books"), "{r}");
    let r = env.get("/api/v1/pages", other).await.json();
    assert_eq!(r["items"], json!([]));
    let r = env.get("/api/v1/stats", other).await.json();
    assert_eq!((r["total"].clone(), r["totals"]["matches_all_time"].clone()), (json!(0), json!(0)), "{r}");
    let r = env.get("/api/v1/exports/matches?format=csv", other).await.text();
    assert_eq!(r.lines().count(), 1, "only the header: {r}");
    let r = env.get(&format!("/api/v1/matches?work_id={wid}"), other).await.json();
    assert_eq!(r["items"], json!([]));
    let r = env
        .call("POST", "/api/v1/matches/review", Some(other), Some(json!({"ids": [mid], "status": "dismissed"})))
        .await;
    assert_eq!(r.json()["not_found"], json!([mid]));
    assert_eq!(env.get(&format!("/api/v1/matches/{mid}"), &env.admin).await.json()["match"]["status"], "new");
    // The holder of the work sees its match and page.
    let r = env.get("/api/v1/pages", &env.holder).await.json();
    assert_eq!(r["items"].as_array().unwrap().len(), 1, "{r}");
    // me
    let me = env.get("/api/v1/me", &env.holder).await.json();
    assert_eq!(
        (me["role"].clone(), me["owner"].clone(), me["name"].clone()),
        (json!("holder"), json!("jinling-press"), json!("金陵书局"))
    );

    // Works: create, delete by role; holders only for their own owner.
    let body = |owner: &str, id: &str| json!({"owner": owner, "external_id": id, "title": "测试作品", "author": "佚名", "text": "第一章 开端\n天下大势，分久必合，合久必分。周末七国分争，并入于秦。\n第二章 结局\n及秦灭之后，楚、汉分争，又并入于汉。"});
    let r = env.call("POST", "/api/v1/works", Some(&env.analyst), Some(body("luoguan-books", "t1"))).await;
    assert_error(&r, 403, "forbidden");
    let r = env.call("POST", "/api/v1/works", Some(other), Some(body("jinling-press", "t1"))).await;
    assert_error(&r, 403, "forbidden");
    let r = env.call("POST", "/api/v1/works", Some(other), Some(body("luoguan-books", "t1"))).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let new_id = r.json()["id"].clone();
    assert_eq!(r.json()["section_count"], 2, "split into chapters");
    let again = env.call("POST", "/api/v1/works", Some(other), Some(body("luoguan-books", "t1"))).await;
    assert_eq!((again.status, again.json()["outcome"].clone()), (200, json!("unchanged")));
    let r = env.call("POST", "/api/v1/works", Some(&env.admin), Some(body("", "t2"))).await;
    assert_error(&r, 400, "bad_request");
    let r = env.call("DELETE", &format!("/api/v1/works/{new_id}"), Some(&env.holder), None).await;
    assert_error(&r, 404, "not_found");
    let r = env.call("DELETE", &format!("/api/v1/works/{new_id}"), Some(&env.analyst), None).await;
    assert_error(&r, 403, "forbidden");
    let r = env.call("DELETE", &format!("/api/v1/works/{new_id}"), Some(other), None).await;
    assert_eq!((r.status, r.json()["sections"].clone()), (200, json!(2)), "{}", r.text());
    let r = env.get(&format!("/api/v1/works/{new_id}"), &env.admin).await;
    assert_error(&r, 404, "not_found");
}

/// Everything a holder's works are, as an admin reads it: the list, each work with its
/// sections' texts, and the matches with their review state.
async fn owner_snapshot(env: &Env, owner: &str) -> Value {
    let list = env.get(&format!("/api/v1/works?owner={owner}&limit=1000"), &env.admin).await.json();
    let mut works = Vec::new();
    for w in list["items"].as_array().unwrap() {
        let id = w["id"].as_i64().unwrap();
        let mut detail = env.get(&format!("/api/v1/works/{id}"), &env.admin).await.json();
        let mut texts = Vec::new();
        for s in detail["sections"].as_array().unwrap() {
            let s = env.get(&format!("/api/v1/works/{id}/sections/{}", s["id"]), &env.admin).await.json();
            texts.push(s["text"].clone());
        }
        detail["section_texts"] = json!(texts);
        works.push(detail);
    }
    let matches = env.get("/api/v1/matches?limit=1000", &env.admin).await.json()["items"].clone();
    json!({"works": works, "matches": matches})
}

/// A holder can create, change or delete nothing of another owner, whichever way it names
/// that owner (query, JSON body, lines of an uploaded file, multipart fields, headers),
/// and no answer tells it whether the other owner has a given work.
pub(crate) async fn holders_write_only_their_own(env: &Env) {
    let victim = "jinling-press";
    let attacker = &env.other;
    let before = owner_snapshot(env, victim).await;
    let victim_work = before["works"][0].clone();
    let (vid, vext) = (victim_work["id"].as_i64().unwrap(), victim_work["external_id"].as_str().unwrap().to_owned());
    let mid = env.the_match().await["id"].clone();
    let text = "第一章 开端\n天下大势，分久必合，合久必分。周末七国分争，并入于秦。\n第二章 结局\n及秦灭之后，楚、汉分争，又并入于汉。";
    let jsonl = |id: &str, owner: Option<&str>| {
        let mut v = json!({"id": id, "title": "冒名顶替", "text": text});
        if let Some(o) = owner {
            v["owner"] = json!(o);
        }
        format!("{v}\n").into_bytes()
    };
    let created_owner = |r: &Resp| -> Vec<String> {
        r.json()["works"].as_array().map_or_else(Vec::new, |ws| ws.iter().map(|w| w["id"].to_string()).collect())
    };

    // JSON body naming the victim: refused.
    let r = env
        .call(
            "POST",
            "/api/v1/works",
            Some(attacker),
            Some(json!({"owner": victim, "external_id": vext, "title": "x", "text": text})),
        )
        .await;
    assert_error(&r, 403, "forbidden");
    // Query parameter and header naming the victim: ignored, the work is the attacker's own.
    for (path, headers) in [
        (format!("/api/v1/works?owner={victim}"), vec![("Content-Type", "application/json")]),
        (
            "/api/v1/works".to_owned(),
            vec![("Content-Type", "application/json"), ("X-Owner", victim), ("X-Zhiwen-Owner", victim)],
        ),
    ] {
        let body = json!({"external_id": vext, "title": "同名", "text": text}).to_string().into_bytes();
        let r = env.raw(&path, attacker, &headers, body).await;
        assert_eq!(r.status, 201, "{path}: {}", r.text());
        let id = r.json()["id"].as_i64().unwrap();
        let w = env.get(&format!("/api/v1/works/{id}"), &env.admin).await.json();
        assert_eq!(w["owner"], "luoguan-books", "{w}");
        assert_eq!(env.call("DELETE", &format!("/api/v1/works/{id}"), Some(attacker), None).await.status, 200);
    }
    // Upload with ?owner= naming the victim: refused.
    let r = env
        .raw(&format!("/api/v1/works/upload?filename=x.jsonl&owner={victim}"), attacker, &[], jsonl("n1", None))
        .await;
    assert_error(&r, 403, "forbidden");
    // Lines of the uploaded file naming the victim: refused, with the same answer whether
    // the victim has a work of that id or not.
    let existing = env.raw("/api/v1/works/upload?filename=x.jsonl", attacker, &[], jsonl(&vext, Some(victim))).await;
    let absent =
        env.raw("/api/v1/works/upload?filename=x.jsonl", attacker, &[], jsonl("no-such-work", Some(victim))).await;
    assert_error(&existing, 400, "bad_request");
    assert_eq!(existing.text(), absent.text(), "the answer must not depend on what the victim has");
    assert!(existing.json()["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains(zhiwen_ingest::works::OTHER_OWNER)));
    // ...also mixed with a valid line of its own: that one is stored, the other rejected.
    let mut body = jsonl("own-1", None);
    body.extend(jsonl(&vext, Some(victim)));
    body.extend(jsonl("own-2", Some("luoguan-books")));
    let r = env.raw("/api/v1/works/upload?filename=x.jsonl", attacker, &[], body).await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["rejected"], json!([{"item": "x.jsonl:2", "reason": zhiwen_ingest::works::OTHER_OWNER}]));
    assert!(r.json()["works"].as_array().unwrap().iter().all(|w| w["id"] != json!(vid)), "{}", r.text());
    for id in created_owner(&r) {
        let w = env.get(&format!("/api/v1/works/{id}"), &env.admin).await.json();
        assert_eq!(w["owner"], "luoguan-books", "{w}");
        env.call("DELETE", &format!("/api/v1/works/{id}"), Some(attacker), None).await;
    }
    // A multipart form with an owner field: the body is the file, the field names nobody.
    let form = format!(
        "--b0\r\nContent-Disposition: form-data; name=\"owner\"\r\n\r\n{victim}\r\n--b0\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.jsonl\"\r\n\r\n{}--b0--\r\n",
        String::from_utf8(jsonl(&vext, None)).unwrap()
    );
    let r = env
        .raw(
            "/api/v1/works/upload?filename=x.jsonl",
            attacker,
            &[("Content-Type", "multipart/form-data; boundary=b0")],
            form.into_bytes(),
        )
        .await;
    assert!(r.status < 500, "{}", r.text());
    if r.status < 300 {
        for id in created_owner(&r) {
            let w = env.get(&format!("/api/v1/works/{id}"), &env.admin).await.json();
            assert_eq!(w["owner"], "luoguan-books", "{w}");
            env.call("DELETE", &format!("/api/v1/works/{id}"), Some(attacker), None).await;
        }
    }
    // Changing, deleting, reviewing the victim's things: not found, as if absent.
    let r = env.call("PATCH", &format!("/api/v1/works/{vid}"), Some(attacker), Some(json!({"title": "篡改"}))).await;
    assert_error(&r, 404, "not_found");
    let r = env.call("DELETE", &format!("/api/v1/works/{vid}"), Some(attacker), None).await;
    assert_error(&r, 404, "not_found");
    let r = env
        .call("POST", &format!("/api/v1/matches/{mid}/review"), Some(attacker), Some(json!({"status": "dismissed"})))
        .await;
    assert_error(&r, 404, "not_found");
    let r = env
        .call("POST", "/api/v1/matches/review", Some(attacker), Some(json!({"ids": [mid], "status": "dismissed"})))
        .await;
    assert_eq!(r.json()["not_found"], json!([mid]));
    // A field an endpoint does not take is refused, not ignored (an owner in a patch).
    let own = env.get("/api/v1/works", attacker).await.json()["items"][0]["id"].clone();
    let r = env.call("PATCH", &format!("/api/v1/works/{own}"), Some(attacker), Some(json!({"owner": victim}))).await;
    assert_error(&r, 400, "bad_request");
    let r = env
        .call(
            "POST",
            &format!("/api/v1/matches/{mid}/review"),
            Some(&env.holder),
            Some(json!({"status": "new", "owner": "luoguan-books"})),
        )
        .await;
    assert_error(&r, 400, "bad_request");

    assert_eq!(owner_snapshot(env, victim).await, before, "the victim's works and matches changed");

    // An admin's upload may name owners in its lines (an operator's import).
    let r = env
        .raw(
            "/api/v1/works/upload?filename=x.jsonl&owner=luoguan-books",
            &env.admin,
            &[],
            jsonl("admin-1", Some("third-owner")),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    for id in created_owner(&r) {
        let w = env.get(&format!("/api/v1/works/{id}"), &env.admin).await.json();
        assert_eq!(w["owner"], "third-owner", "{w}");
        env.call("DELETE", &format!("/api/v1/works/{id}"), Some(&env.admin), None).await;
    }
}
