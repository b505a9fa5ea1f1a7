-- zhiwen embedded store, schema version 6: the two comparison fields every match listing
-- shows (copied characters, share of the section found on the page) become columns, so
-- a listing reads neither the comparison JSON nor its overflow pages.

ALTER TABLE matches ADD COLUMN copied_chars INTEGER NOT NULL DEFAULT 0;
ALTER TABLE matches ADD COLUMN coverage REAL NOT NULL DEFAULT 0;
UPDATE matches SET
    copied_chars = COALESCE(json_extract(comparison, '$.copied_chars'), 0),
    coverage = COALESCE(json_extract(comparison, '$.evidence_coverage_a'), 0);
