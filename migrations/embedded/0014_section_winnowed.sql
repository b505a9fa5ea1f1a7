-- zhiwen embedded store, schema version 14: each section's winnowed keys in a compact
-- form (sorted 32-bit folds, 4 bytes each), written with its fingerprints and read
-- without them. A section index sampled 1 in m (`matcher.section_index_sampling`) makes
-- a candidate of one shared sampled key; the matcher confirms such a candidate against
-- these keys (at least `min_winnow_hits` shared) before it reads and analyses the
-- section's text. Empty after the migration: writing the fingerprints again
-- (`zhiwen reindex --only sections`) fills it; until then candidates are verified
-- without the confirmation, as before. Safe to run twice.

CREATE TABLE IF NOT EXISTS section_winnowed (
    section_id INTEGER PRIMARY KEY,
    params_tag TEXT    NOT NULL,
    keys       BLOB    NOT NULL
);
