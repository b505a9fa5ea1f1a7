//! Fill an embedded store for the API load test (`scripts/api-load.sh`): works and pages
//! cut from the bundled samples, and N matches between them, each carrying a real
//! comparison made by the core (the same text pair compared once, recorded for every
//! (section, page) pair: the rows the API reads are exactly what the matcher writes).
//! Prints an admin key on stdout.
//!
//! `cargo run -p zhiwen-api --example load_fill -- DATA_DIR [MATCHES]`

use std::path::PathBuf;

use zhiwen_core::canon::InputFormat;
use zhiwen_core::compare::{compare, Thresholds};
use zhiwen_core::{Fingerprinter, Params};
use zhiwen_store::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or("usage: load_fill DATA_DIR [MATCHES]")?);
    let n: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(100_000);
    let samples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples/works/classics.jsonl");
    let texts: Vec<String> = std::fs::read_to_string(samples)?
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["text"].as_str().map(str::to_owned))
        .collect();
    let stores = open(&StoreConfig::embedded(&dir)).await?;
    let fp = Fingerprinter::new(Params::default())?;
    let a = fp.analyze_text(&texts[0], InputFormat::Text)?;
    let b = fp.analyze_text(&texts[0].chars().take(3000).collect::<String>(), InputFormat::Text)?;
    let comparison = compare(&a, &b, fp.params(), &Thresholds::default());
    let kind = zhiwen_matcher::MatchKind::of(&comparison, &Thresholds::default())
        .map_or("excerpt", zhiwen_matcher::MatchKind::as_str)
        .to_owned();
    let pages_per_section = 100;
    let sections_needed = n.div_ceil(pages_per_section);
    let works = sections_needed.div_ceil(5);
    let mut section_ids = Vec::new();
    for w in 0..works {
        let owner = if w % 2 == 0 { "jinling-press" } else { "luoguan-books" };
        let text = &texts[w % texts.len()];
        let chars: Vec<char> = text.chars().collect();
        let step = chars.len() / 5;
        let sections = (0..5)
            .map(|i| NewSection {
                ordinal: i as u32,
                title: format!("第{}回", i + 1),
                text: chars[i * step..(i + 1) * step].iter().collect(),
                char_start: (i * step) as u64,
                char_end: ((i + 1) * step) as u64,
            })
            .collect();
        let r = stores
            .works
            .upsert_work(&NewWork {
                owner: owner.into(),
                external_id: format!("load-{w}"),
                title: format!("压测作品 {w}"),
                author: "佚名".into(),
                source_file: None,
                charset: None,
                text: text.clone(),
                sections,
            })
            .await?;
        section_ids.extend(r.sections.iter().map(|(_, id)| *id));
    }
    let mut page_ids = Vec::new();
    for p in 0..pages_per_section {
        let page = NewPage {
            url: format!("https://site{}.example/book/{p}.html", p % 20),
            fetched_at: Timestamp::now(),
            http_status: Some(200),
            charset: Some("UTF-8".into()),
            body: Vec::new(),
            text: texts[p % texts.len()].chars().take(3000).collect(),
            format: None,
            canon_tag: None,
            source: PageSource::Crawl,
        };
        page_ids.push(stores.pages.upsert_page(&page).await?.id);
    }
    let day = 86_400_000;
    let now = Timestamp::now().0;
    let mut k = 0;
    'outer: for s in &section_ids {
        for p in &page_ids {
            if k == n {
                break 'outer;
            }
            let m = NewMatch {
                section_id: *s,
                page_id: *p,
                kind: kind.clone(),
                comparison: comparison.clone(),
                seen_at: Timestamp(now - (k as i64 % 60) * day),
            };
            stores.matches.upsert_match(&m).await?;
            k += 1;
            if k % 10_000 == 0 {
                eprintln!("{k} matches");
            }
        }
    }
    let key = zhiwen_api::generate_key(&stores, KeyRole::Admin, None, "load test", None).await?;
    println!("{}", key.secret);
    Ok(())
}
