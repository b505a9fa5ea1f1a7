-- zhiwen embedded store, schema version 4: indexes behind the admin API's statistics
-- and filtered listings. The statistics group matches first seen in a date range by
-- status, site, work, section and day: one covering index answers all of them without
-- reading the rows (which carry the comparison JSON). A site filter sorted by score
-- gets its own index.

CREATE INDEX matches_stats ON matches(first_seen, status, site, work_id, section_id, first_day);
CREATE INDEX matches_site_score ON matches(site, score, id);
