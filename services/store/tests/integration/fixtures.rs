//! Backends and test data.

use std::sync::OnceLock;

use tempfile::TempDir;
use zhiwen_core::canon::InputFormat;
use zhiwen_core::compare::{compare, Comparison, Thresholds};
use zhiwen_core::{Analysis, Fingerprinter, Fingerprints, Params};
use zhiwen_store::*;
use zhiwen_testkit::mongo::MongoServer;

/// A fresh embedded store in a temporary directory.
pub struct Embedded {
    pub stores: Stores,
    pub _dir: TempDir,
}

impl Embedded {
    pub async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let stores = open(&StoreConfig::embedded(dir.path())).await.unwrap();
        Embedded { stores, _dir: dir }
    }
}

/// Migrated stores in the database `case` of `server`.
pub async fn mongo_stores(server: &MongoServer, case: &str) -> Stores {
    let config = StoreConfig::mongo(server.uri(), format!("t_{case}"));
    migrate(&config).await.unwrap();
    open(&config).await.unwrap()
}

pub const TEXT_A: &str = "第一回 宴桃园豪杰三结义 斩黄巾英雄首立功。话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，遂分为三国。推其致乱之由，殆始于桓、灵二帝。";
pub const TEXT_B: &str = "第二回 张翼德怒鞭督邮 何国舅谋诛宦竖。且说董卓字仲颖，陇西临洮人也，官拜河东太守，自来骄傲。当日怠慢了玄德，张飞性发，便欲杀之。玄德与关公急止之曰：他是朝廷命官，岂可擅杀？";

fn fingerprinter() -> &'static Fingerprinter {
    static FP: OnceLock<Fingerprinter> = OnceLock::new();
    FP.get_or_init(|| Fingerprinter::new(Params::default()).unwrap())
}

pub fn analysis(text: &str) -> Analysis {
    fingerprinter().analyze_text(text, InputFormat::Text).unwrap()
}

pub fn fingerprints(text: &str) -> Fingerprints {
    analysis(text).fingerprints
}

/// A real comparison of `a` against `b`.
pub fn comparison(a: &str, b: &str) -> Comparison {
    compare(&analysis(a), &analysis(b), fingerprinter().params(), &Thresholds::default())
}

pub fn section(ordinal: u32, title: &str, text: &str, start: u64) -> NewSection {
    NewSection {
        ordinal,
        title: title.into(),
        text: text.into(),
        char_start: start,
        char_end: start + text.chars().count() as u64,
    }
}

/// A two-section work of `owner`/`id`.
pub fn work(owner: &str, id: &str) -> NewWork {
    let text = format!("{TEXT_A}{TEXT_B}");
    let n = TEXT_A.chars().count() as u64;
    NewWork {
        owner: owner.into(),
        external_id: id.into(),
        title: "三国演义".into(),
        author: "罗贯中".into(),
        source_file: Some("sanguo.txt".into()),
        charset: Some("GB18030".into()),
        text,
        sections: vec![section(0, "第一回", TEXT_A, 0), section(1, "第二回", TEXT_B, n)],
    }
}

pub fn page(url: &str, text: &str, at: i64) -> NewPage {
    NewPage {
        url: url.into(),
        fetched_at: Timestamp(at),
        http_status: Some(200),
        charset: Some("GBK".into()),
        // Raw bytes need not be UTF-8 (a GBK page).
        body: [b"<html>\xc8\xfd\xb9\xfa".as_slice(), text.as_bytes(), b"</html>"].concat(),
        text: text.into(),
        format: None,
        canon_tag: None,
        source: PageSource::Crawl,
    }
}

/// Deterministic, incompressible bytes.
pub fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        out.extend_from_slice(&seed.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Deterministic, poorly compressible Han text of at least `bytes` bytes.
pub fn han_noise(bytes: usize, seed: u64) -> String {
    noise((bytes / 3 + 1) * 2, seed)
        .chunks(2)
        .map(|c| {
            char::from_u32(0x4E00 + (u16::from_le_bytes([c[0], c.get(1).copied().unwrap_or(0)]) as u32 % 20_000))
                .unwrap()
        })
        .collect()
}
