-- zhiwen embedded store, schema version 15: bodies, texts and comparisons are written
-- with zstd (level 1, with a checksum) instead of raw deflate. Nothing is rewritten: a
-- blob is read with the codec that wrote it (a zstd frame's first bytes never open a
-- valid raw deflate stream), so the blobs written before stay as they are. The version
-- exists so that a binary from before zstd, which cannot read the new blobs, refuses the
-- migrated store instead of reporting its blobs as corrupt. Safe to run twice.

SELECT 1;
