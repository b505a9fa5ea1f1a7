//! One integration-test binary for the stores (one link instead of one per file).
//!
//! `suite` holds the conformance cases, written once against [`zhiwen_store::Stores`].
//! `conformance!` runs each case as its own test on a fresh embedded store, and all of
//! them against one real MongoDB-wire server (SecantusDB, started by the test kit), each
//! case in its own database. Without the server the MongoDB part is skipped, unless
//! `ZHIWEN_REQUIRE_SERVERS=1`, where it fails.

mod admin;
mod content_hash;
mod evidence;
mod fixtures;
mod match_query;
mod migrations;
mod readers;
mod retry;
mod suite;
mod takedown;
mod watched;

macro_rules! conformance {
    ($($case:ident),* $(,)?) => {
        mod embedded {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let env = crate::fixtures::Embedded::new().await;
                    crate::cases::$case(&env.stores).await;
                }
            )*
        }

        mod mongodb {
            /// Every case against one server (starting one takes seconds), one database each.
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn conformance_suite() {
                let Some(server) = zhiwen_testkit::mongo::MongoServer::start() else { return };
                $(
                    eprintln!("mongodb conformance: {}", stringify!($case));
                    let stores = crate::fixtures::mongo_stores(&server, stringify!($case)).await;
                    crate::cases::$case(&stores).await;
                )*
                crate::migrations::mongo_backend_checks(&server).await;
                crate::evidence::mongo_evidence_checks(&server).await;
            }
        }
    };
}

/// Every conformance case, by name.
mod cases {
    pub use crate::admin::*;
    pub use crate::content_hash::*;
    pub use crate::evidence::*;
    pub use crate::match_query::*;
    pub use crate::suite::*;
    pub use crate::takedown::*;
    pub use crate::watched::*;
}

conformance!(
    watched_sites_life_cycle,
    works_round_trip_and_idempotence,
    works_bad_input_writes_nothing,
    pages_round_trip_and_sites,
    pages_keep_their_canon_tag,
    pages_take_the_canon_tag_of_their_text,
    pages_batch_and_bad_input,
    large_page_and_work_round_trip,
    fingerprints_params_and_scans,
    winnowed_keys_follow_the_fingerprints,
    works_marked_indexed,
    matches_upsert_review_and_filters,
    matches_in_batches,
    match_query_fields_in_every_read,
    tasks_life_cycle,
    api_keys_life_cycle,
    queries_sort_filter_group_and_delete,
    pages_by_content_hash,
    match_detail_in_one_read,
    concurrent_first_writes,
    meta_values,
    evidence_files_by_content,
    evidence_captures_append_and_read,
    evidence_leaves_dense_under_concurrent_appends,
    evidence_tree_heads,
    evidence_retention,
    holders_versions_and_licensed,
    notices_idempotent_and_compare_and_set,
    removal_watches_record_transitions,
    licensed_status_is_stored,
    alert_outbox_dedup_rate_limit_and_digest,
);
