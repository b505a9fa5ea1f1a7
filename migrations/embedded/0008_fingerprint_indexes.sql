-- zhiwen embedded store, schema version 8: drop the fingerprints index on
-- (kind, params_tag, subject_id). No query needs it (scans and stale-record listings walk
-- the primary key in subject order; counting one parameter tag is rare), while every
-- fingerprint written, one per matched page, paid for its entry.

DROP INDEX IF EXISTS fingerprints_tag;
