//! The versioned migrations of both backends, embedded in the binary so `zhiwen
//! migrate` needs no files at run time. Each backend records applied versions in the
//! database (`schema_migrations` table / `_migrations` collection), applies the missing
//! ones in order, and refuses a database whose version is newer than [`LATEST`].

use serde::{Deserialize, Serialize};

/// One migration of the embedded (SQLite) schema.
pub(crate) struct SqlMigration {
    pub version: u32,
    pub name: &'static str,
    pub sql: &'static str,
}

/// The embedded schema's migrations, in order.
pub(crate) const EMBEDDED: &[SqlMigration] = &[
    SqlMigration { version: 1, name: "initial", sql: include_str!("../../../migrations/embedded/0001_initial.sql") },
    SqlMigration { version: 2, name: "api", sql: include_str!("../../../migrations/embedded/0002_api.sql") },
    SqlMigration {
        version: 3,
        name: "content_hash",
        sql: include_str!("../../../migrations/embedded/0003_content_hash.sql"),
    },
    SqlMigration {
        version: 4,
        name: "api_stats",
        sql: include_str!("../../../migrations/embedded/0004_api_stats.sql"),
    },
    SqlMigration {
        version: 5,
        name: "match_kind",
        sql: include_str!("../../../migrations/embedded/0005_match_kind.sql"),
    },
    SqlMigration {
        version: 6,
        name: "match_list_columns",
        sql: include_str!("../../../migrations/embedded/0006_match_list_columns.sql"),
    },
    SqlMigration {
        version: 7,
        name: "match_listing",
        sql: include_str!("../../../migrations/embedded/0007_match_listing.sql"),
    },
    SqlMigration {
        version: 8,
        name: "fingerprint_indexes",
        sql: include_str!("../../../migrations/embedded/0008_fingerprint_indexes.sql"),
    },
    SqlMigration {
        version: 9,
        name: "no_page_fingerprints",
        sql: include_str!("../../../migrations/embedded/0009_no_page_fingerprints.sql"),
    },
    SqlMigration { version: 10, name: "meta", sql: include_str!("../../../migrations/embedded/0010_meta.sql") },
    SqlMigration {
        version: 11,
        name: "page_format",
        sql: include_str!("../../../migrations/embedded/0011_page_format.sql"),
    },
    SqlMigration { version: 12, name: "evidence", sql: include_str!("../../../migrations/embedded/0012_evidence.sql") },
    SqlMigration { version: 13, name: "cases", sql: include_str!("../../../migrations/embedded/0013_cases.sql") },
    SqlMigration {
        version: 14,
        name: "section_winnowed",
        sql: include_str!("../../../migrations/embedded/0014_section_winnowed.sql"),
    },
    SqlMigration {
        version: 15,
        name: "zstd_blobs",
        sql: include_str!("../../../migrations/embedded/0015_zstd_blobs.sql"),
    },
    SqlMigration {
        version: 16,
        name: "indexed_works",
        sql: include_str!("../../../migrations/embedded/0016_indexed_works.sql"),
    },
    SqlMigration {
        version: 17,
        name: "canon_tag",
        sql: include_str!("../../../migrations/embedded/0017_canon_tag.sql"),
    },
];

/// The MongoDB migrations (JSON lists of database commands), in order.
pub(crate) const MONGODB: &[(u32, &str)] = &[
    (1, include_str!("../../../migrations/mongodb/0001_initial.json")),
    (2, include_str!("../../../migrations/mongodb/0002_api.json")),
    (3, include_str!("../../../migrations/mongodb/0003_content_hash.json")),
    (4, include_str!("../../../migrations/mongodb/0004_api_stats.json")),
    (5, include_str!("../../../migrations/mongodb/0005_match_kind.json")),
    (6, include_str!("../../../migrations/mongodb/0006_match_list_columns.json")),
    (7, include_str!("../../../migrations/mongodb/0007_match_listing.json")),
    (8, include_str!("../../../migrations/mongodb/0008_fingerprint_indexes.json")),
    (9, include_str!("../../../migrations/mongodb/0009_no_page_fingerprints.json")),
    (10, include_str!("../../../migrations/mongodb/0010_meta.json")),
    (11, include_str!("../../../migrations/mongodb/0011_page_format.json")),
    (12, include_str!("../../../migrations/mongodb/0012_evidence.json")),
    (13, include_str!("../../../migrations/mongodb/0013_cases.json")),
    (14, include_str!("../../../migrations/mongodb/0014_section_winnowed.json")),
    (15, include_str!("../../../migrations/mongodb/0015_zstd_blobs.json")),
    (16, include_str!("../../../migrations/mongodb/0016_indexed_works.json")),
    (17, include_str!("../../../migrations/mongodb/0017_canon_tag.json")),
];

/// Latest schema version this binary knows (both backends move in step).
pub const LATEST: u32 = 17;

/// Containment of the section in the page from which migration 5 calls a stored
/// `a_within_b` verdict `embedded` rather than `excerpt` (the matcher's default
/// containment threshold; rows written since then carry the matcher's own kind).
const BACKFILL_CONTAINMENT: f64 = 0.5;

/// Migration 5's kind of copy for a match stored with the verdict kind `verdict_kind`;
/// `None` when the stored kind is already a kind of copy. The SQL of the embedded
/// migration applies the same rule.
pub(crate) fn backfilled_kind(verdict_kind: &str, c: &zhiwen_core::compare::Comparison) -> Option<&'static str> {
    match verdict_kind {
        "b_within_a" => Some("excerpt"),
        "a_within_b" => {
            let inside = c.a_inside_b();
            Some(if inside >= BACKFILL_CONTAINMENT { "embedded" } else { "excerpt" })
        }
        _ => None,
    }
}

/// What `migrate` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrationReport {
    /// Backend name (`embedded` or `mongodb`).
    pub backend: String,
    /// Version before.
    pub from_version: u32,
    /// Version after.
    pub to_version: u32,
    /// Names of the migrations applied now, as `NNNN_name`.
    pub applied: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_ordered_and_end_at_latest() {
        for (i, m) in EMBEDDED.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1, "{}", m.name);
        }
        for (i, (v, json)) in MONGODB.iter().enumerate() {
            assert_eq!(*v as usize, i + 1);
            let doc: mongodb::bson::Document = serde_json::from_str(json).unwrap();
            assert_eq!(doc.get_i32("version").map(|v| v as u32).ok(), Some(*v));
        }
        assert_eq!(EMBEDDED.last().map(|m| m.version), Some(LATEST));
        assert_eq!(MONGODB.last().map(|m| m.0), Some(LATEST));
    }
}
