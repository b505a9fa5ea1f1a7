-- zhiwen embedded store, schema version 16: a mark per work whose sections all have
-- stored fingerprints (made with `params_tag` from the text of work version `version`,
-- its `updated_at` in ms) with their keys in the candidate index. A matcher's first task
-- trusts the mark instead of reading every section's text and fingerprints to see that
-- (two minutes per million sections). The matcher removes a work's mark before it writes
-- any of its sections' fingerprints, and writes it once all are written. Empty after the
-- migration: each work is checked as before once, and marked. Safe to run twice.

CREATE TABLE IF NOT EXISTS indexed_works (
    work_id    INTEGER PRIMARY KEY,
    version    INTEGER NOT NULL,
    params_tag TEXT    NOT NULL
);
