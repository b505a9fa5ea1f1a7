use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use zhiwen_matcher::webhook::Webhook;
use zhiwen_matcher::{MatchKind, MatchRecord, WebhookConfig};
use zhiwen_store::Outcome;

/// Answers 500 to the first request and 200 to the next ones; keeps the bodies.
async fn flaky_listener() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = bodies.clone();
    tokio::spawn(async move {
        let mut n = 0;
        while let Ok((mut sock, _)) = listener.accept().await {
            n += 1;
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            loop {
                let k = sock.read(&mut chunk).await.unwrap_or(0);
                if k == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..k]);
                let text = String::from_utf8_lossy(&buf).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len = text[..end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if buf.len() >= end + 4 + len {
                        seen.lock().unwrap().push(String::from_utf8_lossy(&buf[end + 4..]).to_string());
                        break;
                    }
                }
            }
            let status = if n == 1 { "500 Internal Server Error" } else { "200 OK" };
            let _ = sock
                .write_all(format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").as_bytes())
                .await;
        }
    });
    (url, bodies)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_matches_are_posted_as_json_with_a_retry_after_a_failure() {
    let (url, bodies) = flaky_listener().await;
    let config = WebhookConfig { url: Some(url), base_delay_ms: 20, ..Default::default() };
    let hook = Webhook::from_config(&config).unwrap().expect("configured");
    let rec = MatchRecord {
        match_id: 7,
        section_id: 1,
        work_id: 2,
        page_id: 3,
        url: "http://pirate.example/hlm/1.html".into(),
        site: "pirate.example".into(),
        kind: MatchKind::Excerpt,
        score: 0.93,
        outcome: Outcome::Inserted,
        licensed: false,
        evidence_section: "此开卷第一回也".into(),
        evidence_page: "此開卷第一回也".into(),
    };
    hook.send(&[&rec]).await.expect("delivered on the second attempt");
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 2, "one failure, one retry");
    let v: serde_json::Value = serde_json::from_str(&bodies[1]).unwrap();
    assert_eq!(v["event"], "zhiwen.matches");
    assert_eq!(v["matches"][0]["kind"], "excerpt");
    assert_eq!(v["matches"][0]["evidence_page"], "此開卷第一回也");
    // No URL: no webhook.
    assert!(Webhook::from_config(&WebhookConfig::default()).unwrap().is_none());
}
