-- zhiwen embedded store, schema version 17: the canonicalisation a page's stored text is
-- the canonical text of (the core's CanonParams tag: its parameters and algorithm
-- version). A matcher analyses a page whose tag is its own from that text, without
-- decoding and extracting the body again, and reads the body only to quote the evidence
-- of a copy it found. Pages stored before keep NULL: their text is made from the body,
-- as before, until they are stored again.

ALTER TABLE pages ADD COLUMN canon_tag TEXT;
