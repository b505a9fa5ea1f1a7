-- zhiwen embedded store, schema version 5: a match records the kind of copy the matcher
-- decided (identical, near_duplicate, excerpt, embedded) instead of the verdict's kind
-- (identical, near_duplicate, a_within_b, b_within_a), which stays in the comparison.
-- Older rows are rewritten by the matcher's rule: the page inside the section is an
-- excerpt; the section inside the page is embedded when most of the section is there
-- (its best containment reaches 0.5, the default containment threshold), else an excerpt.

UPDATE matches SET kind = CASE
    WHEN kind = 'a_within_b' AND MAX(
        COALESCE(json_extract(comparison, '$.containment_ab'), 0),
        COALESCE(json_extract(comparison, '$.winnow_containment_ab'), 0),
        COALESCE(json_extract(comparison, '$.evidence_coverage_a'), 0)
    ) >= 0.5 THEN 'embedded'
    ELSE 'excerpt'
END
WHERE kind IN ('a_within_b', 'b_within_a');

-- The statistics count matches first seen in a date range by kind (of the caller's works).
CREATE INDEX IF NOT EXISTS matches_kind_stats ON matches(first_seen, kind, work_id);
