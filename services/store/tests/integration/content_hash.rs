//! Conformance: pages found by the hash of their text, across URLs (content deduplication).

use zhiwen_core::hash::hash_bytes;
use zhiwen_store::Stores;

use crate::fixtures::page;

pub async fn pages_by_content_hash(s: &Stores) {
    let text = "满纸荒唐言，一把辛酸泪。都云作者痴，谁解其中味？";
    let other = "假作真时真亦假，无为有处有还无。";
    let h = hash_bytes(text.as_bytes());
    assert!(s.pages.find_pages_by_content_hash(h, 10).await.unwrap().is_empty());

    let a = s.pages.upsert_page(&page("http://a.example/1.html", text, 1_000)).await.unwrap();
    let b = s.pages.upsert_page(&page("http://b.example/x/2.html", text, 2_000)).await.unwrap();
    let c = s.pages.upsert_page(&page("http://a.example/3.html", other, 3_000)).await.unwrap();

    let found = s.pages.find_pages_by_content_hash(h, 10).await.unwrap();
    assert_eq!(found.iter().map(|p| p.id).collect::<Vec<_>>(), vec![a.id, b.id], "ascending by id");
    assert_eq!(found[0].url, "http://a.example/1.html");
    assert_eq!(found[1].site, "b.example");
    assert!(found.iter().all(|p| p.content_hash == h));
    // The hash is the store's own content hash of the page.
    assert_eq!(s.pages.get_page(a.id).await.unwrap().unwrap().content_hash, h);
    // The limit holds, and other texts are not returned.
    assert_eq!(s.pages.find_pages_by_content_hash(h, 1).await.unwrap().len(), 1);
    let others = s.pages.find_pages_by_content_hash(hash_bytes(other.as_bytes()), 10).await.unwrap();
    assert_eq!(others.iter().map(|p| p.id).collect::<Vec<_>>(), vec![c.id]);

    // A page whose text changes moves to its new hash.
    s.pages.upsert_page(&page("http://b.example/x/2.html", other, 4_000)).await.unwrap();
    let found = s.pages.find_pages_by_content_hash(h, 10).await.unwrap();
    assert_eq!(found.iter().map(|p| p.id).collect::<Vec<_>>(), vec![a.id]);
    assert_eq!(s.pages.find_pages_by_content_hash(hash_bytes(other.as_bytes()), 10).await.unwrap().len(), 2);

    // Hashes with the top bit set (stored as negative integers) round-trip.
    let high = (0..1000u32)
        .map(|i| format!("第{i}回 文本"))
        .find(|t| hash_bytes(t.as_bytes()) >> 63 == 1)
        .expect("a text whose hash has the top bit set");
    let d = s.pages.upsert_page(&page("http://c.example/high", &high, 5_000)).await.unwrap();
    let found = s.pages.find_pages_by_content_hash(hash_bytes(high.as_bytes()), 10).await.unwrap();
    assert_eq!(found.iter().map(|p| p.id).collect::<Vec<_>>(), vec![d.id]);
}
