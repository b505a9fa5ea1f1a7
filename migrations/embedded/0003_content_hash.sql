-- zhiwen embedded store, schema version 3: pages by content hash.
-- Imports and the crawler skip a page whose extracted text is already stored under
-- another URL, across runs; this index answers "which pages have this text?".

CREATE INDEX pages_content_hash ON pages(content_hash, id);
