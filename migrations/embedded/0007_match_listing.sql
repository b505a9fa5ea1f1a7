-- zhiwen embedded store, schema version 7: the default match listing (newest sighting
-- first, the dashboard's first view) reads one index and no table rows. Every column a
-- listing shows sits behind the comparison JSON in its row (about 20 KB, on overflow
-- pages), so reading them from the table walks each listed row's overflow chain; this
-- covering index holds them all. It replaces matches_last_seen, which is its prefix.

CREATE INDEX IF NOT EXISTS matches_listing ON matches(
    last_seen, id, work_id, section_id, page_id, site, kind, score, duplicate, copied_chars, coverage, first_seen,
    status
);
DROP INDEX IF EXISTS matches_last_seen;
