-- zhiwen embedded store, schema version 13: what a rights holder does after a match.
-- Holders (profile, rights documents, licensed domains), takedown notices and the
-- removal watch of noticed pages are small documents read and written whole: one row
-- each, its JSON, a version for compare-and-set updates and a per-kind sequence number
-- (a notice's id; the order of listings). Matches may now be 'licensed' (on a domain
-- the holder allows): the CHECK of matches.status is widened by code after this script
-- (SQLite cannot alter a constraint; the change touches no stored row).

CREATE TABLE IF NOT EXISTS case_docs (
    kind       TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    owner      TEXT    NOT NULL,
    version    INTEGER NOT NULL CHECK (version >= 1),
    doc        TEXT    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (kind, key)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS case_docs_seq ON case_docs(kind, seq);
CREATE INDEX IF NOT EXISTS case_docs_owner ON case_docs(kind, owner, seq);
