-- zhiwen embedded store, schema version 11: how a page's body is read (html or text) is
-- decided once, when the page is fetched or imported, and stored with it, so the matcher
-- and the evidence views read the body the way ingest did. Pages stored before keep NULL:
-- their readers sniff the body as before.

ALTER TABLE pages ADD COLUMN format TEXT;
