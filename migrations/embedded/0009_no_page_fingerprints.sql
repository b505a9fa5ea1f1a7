-- zhiwen embedded store, schema version 9: pages no longer have stored fingerprint
-- records. A page is analysed from its stored text whenever it is matched, in either
-- direction, and `zhiwen reindex` rebuilds the page namespace of the index from the
-- texts. Safe to run twice.

DELETE FROM fingerprints WHERE kind = 'page';
