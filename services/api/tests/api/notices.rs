//! Notices and removals over HTTP: a holder drafts and sends its own notice (once, to a
//! real SMTP server), never sees or sends another's, and follows the page's removal.

use serde_json::json;
use zhiwen_store::{RemovalCheck, RemovalState, Timestamp};
use zhiwen_testkit::smtp::SmtpServer;

use crate::{assert_error, Env};

pub(crate) async fn notices_sends_and_removals(env: &Env, smtp: &SmtpServer) {
    let m = env.the_match().await;
    let (mid, page_id) = (m["id"].clone(), m["page_id"].as_i64().unwrap());
    let r = env
        .call("POST", &format!("/api/v1/matches/{mid}/review"), Some(&env.admin), Some(json!({"status": "confirmed"})))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());

    // Another holder can neither draft for jinling-press nor see its notices; without a
    // complete profile of its own it cannot draft at all.
    let r = env
        .call(
            "POST",
            "/api/v1/notices",
            Some(&env.other),
            Some(json!({"owner": "jinling-press", "site": "pirate.example"})),
        )
        .await;
    assert_error(&r, 404, "not_found");
    let r = env.call("POST", "/api/v1/notices", Some(&env.other), Some(json!({"site": "pirate.example"}))).await;
    assert_error(&r, 400, "bad_request");
    // Staff must say whose notice it is.
    let r = env.call("POST", "/api/v1/notices", Some(&env.admin), Some(json!({"site": "pirate.example"}))).await;
    assert_error(&r, 400, "bad_request");

    // The holder drafts; the same request again is the same notice.
    let r = env.call("POST", "/api/v1/notices", Some(&env.holder), Some(json!({"site": "pirate.example"}))).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let notice = r.json();
    let id = notice["id"].as_i64().unwrap();
    assert_eq!((notice["state"].as_str(), notice["match_ids"].clone()), (Some("draft"), json!([mid])));
    let r = env.call("POST", "/api/v1/notices", Some(&env.holder), Some(json!({"site": "pirate.example"}))).await;
    assert_eq!((r.status, r.json()["id"].as_i64()), (200, Some(id)));
    let text = env.get(&format!("/api/v1/notices/{id}/files/notice.txt"), &env.holder).await;
    assert_eq!(text.status, 200);
    assert!(text.text().contains("金陵出版社有限公司") && text.text().contains("pirate.example"));
    assert_error(&env.get(&format!("/api/v1/notices/{id}"), &env.other).await, 404, "not_found");
    assert_error(&env.get(&format!("/api/v1/notices/{id}/files/notice.txt"), &env.other).await, 404, "not_found");
    assert_eq!(env.get(&format!("/api/v1/notices/{id}"), &env.analyst).await.status, 200);
    assert_eq!(env.get("/api/v1/notices", &env.other).await.json()["items"], json!([]));
    assert_eq!(env.get("/api/v1/notices", &env.holder).await.json()["items"].as_array().unwrap().len(), 1);
    let contacts = env.get("/api/v1/sites/pirate.example/contacts", &env.holder).await;
    assert_eq!(contacts.status, 200, "{}", contacts.text());
    assert!(contacts.json()["items"].as_array().unwrap().iter().any(|c| c["address"] == "abuse@pirate.example"));

    // Whatever the body says, another holder cannot send it.
    let body = json!({"recipient": "abuse@pirate.example"});
    let r = env.call("POST", &format!("/api/v1/notices/{id}/send"), Some(&env.other), Some(body.clone())).await;
    assert_error(&r, 404, "not_found");
    assert!(smtp.messages().is_empty());
    let r = env
        .call(
            "POST",
            &format!("/api/v1/notices/{id}/send"),
            Some(&env.holder),
            Some(json!({"recipient": "not an address"})),
        )
        .await;
    assert_error(&r, 400, "bad_request");
    let r = env.call("POST", &format!("/api/v1/notices/{id}/send"), Some(&env.holder), Some(body.clone())).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["state"], "sent");
    // Sent once, whatever the retries.
    let r = env.call("POST", &format!("/api/v1/notices/{id}/send"), Some(&env.holder), Some(body)).await;
    assert_eq!((r.status, r.json()["state"].as_str()), (200, Some("sent")));
    assert_eq!(smtp.messages().len(), 1);
    let m = env.get(&format!("/api/v1/matches/{mid}"), &env.admin).await.json();
    assert_eq!(m["match"]["status"], "takedown_sent");
    // Only an admin records the outcome of a send, and only of one left `sending`.
    let r = env
        .call("POST", &format!("/api/v1/notices/{id}/resolve"), Some(&env.holder), Some(json!({"delivered": true})))
        .await;
    assert_error(&r, 403, "forbidden");
    let r = env
        .call("POST", &format!("/api/v1/notices/{id}/resolve"), Some(&env.admin), Some(json!({"delivered": true})))
        .await;
    assert_error(&r, 409, "conflict");

    // The page comes down: the holder follows it; the other holder sees nothing.
    let check = RemovalCheck {
        page_id,
        url: m["match"]["url"].as_str().unwrap().to_owned(),
        owner: "jinling-press".into(),
        at: Timestamp::now(),
        state: Some(RemovalState::Removed),
        http_status: Some(404),
        detail: "HTTP 404".into(),
        unreachable: false,
    };
    env.stores.cases.record_check(&check).await.unwrap();
    let list = env.get("/api/v1/removals?state=removed", &env.holder).await.json();
    assert_eq!(list["items"].as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list["items"][0]["site"], "pirate.example");
    assert_eq!(env.get("/api/v1/removals", &env.other).await.json()["items"], json!([]));
    let timeline = env.get(&format!("/api/v1/removals/{page_id}"), &env.holder).await.json();
    assert_eq!(timeline["notices"][0]["id"].as_i64(), Some(id));
    assert_eq!(timeline["events"][0]["to"], "removed");
    assert_error(&env.get(&format!("/api/v1/removals/{page_id}"), &env.other).await, 404, "not_found");
    let stats = env.get("/api/v1/removals/stats", &env.holder).await.json();
    assert_eq!(
        (stats["total"]["notices_delivered"].as_u64(), stats["total"]["pages_removed"].as_u64()),
        (Some(1), Some(1)),
        "{stats}"
    );
    // The export carries what the re-check saw.
    let export = env.get("/api/v1/exports/matches?format=json", &env.holder).await.json();
    assert_eq!(export[0]["removal_state"], "removed", "{export}");
    assert!(export[0]["removed_at"].as_str().is_some_and(|t| t.ends_with('Z')), "{export}");
    let theirs = env.get("/api/v1/removals/stats?owner=jinling-press", &env.other).await.json();
    assert_eq!(theirs["total"]["pages_removed"].as_u64(), Some(0), "{theirs}");

    // Templates: everyone reads, only admins change, and a broken one is refused.
    assert_eq!(env.get("/api/v1/notice-templates", &env.holder).await.status, 200);
    let broken = json!({"source": "{{ unclosed"});
    let r = env.call("PUT", "/api/v1/notice-templates/zh-CN/text", Some(&env.holder), Some(broken.clone())).await;
    assert_error(&r, 403, "forbidden");
    let r = env.call("PUT", "/api/v1/notice-templates/zh-CN/text", Some(&env.admin), Some(broken)).await;
    assert_error(&r, 400, "bad_request");
}
