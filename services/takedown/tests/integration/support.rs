//! The fixtures the notice and alert tests share: holder `jinling` and its work 三国演义.

use zhiwen_store::{NewSection, NewWork, Timestamp};

/// Holder `jinling`'s work 三国演义 (external id `sanguo`): `sections` sections
/// (第1回, 第2回, ...) of `text` each.
pub fn sanguo(text: &str, sections: u32) -> NewWork {
    NewWork {
        owner: "jinling".into(),
        external_id: "sanguo".into(),
        title: "三国演义".into(),
        author: "罗贯中".into(),
        source_file: None,
        charset: None,
        text: text.into(),
        sections: (0..sections)
            .map(|i| NewSection {
                ordinal: i,
                title: format!("第{}回", i + 1),
                text: text.into(),
                char_start: 0,
                char_end: text.chars().count() as u64,
            })
            .collect(),
    }
}

/// The holder record of `jinling` as first stored: its legal name set, the rest given
/// by `fill`.
pub fn jinling(fill: impl FnOnce(&mut zhiwen_store::Holder)) -> zhiwen_store::Holder {
    let mut holder = zhiwen_store::Holder::empty("jinling");
    holder.profile.legal_name = "金陵出版社有限公司".into();
    fill(&mut holder);
    holder.updated_at = Timestamp(1);
    holder
}
