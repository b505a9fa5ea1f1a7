#!/usr/bin/env python3
"""The peer of scripts/bench-vs-peer.sh: what a user would pick instead of zhiwen for
candidate lookup, run on the same files as `zhiwen import works` and `zhiwen import pages`.

jieba words -> word shingles -> datasketch MinHash (128 permutations, hashed in bulk with
`update_batch`, the library's fast path) -> MinHashLSH (threshold 0.5): every work is
inserted, every page is queried. Pages are decoded with the charset of their HTTP header
(else their <meta> charset, else UTF-8) and their tags are stripped with a regular
expression. Nothing is verified, stored or explained: only candidates.

Usage: peer_datasketch.py WORKS_JSONL PAGES_WARC
Prints one JSON object: counts, bytes, candidate pairs, and the CPU seconds of jieba alone
on the works (to compare the fingerprint pipelines' speed on long text).
"""

import json
import re
import sys
import time

SHINGLE_WORDS = 3
NUM_PERM = 128
THRESHOLD = 0.5

TAG = re.compile(rb"<(script|style)\b.*?</\1\s*>|<!--.*?-->|<[^>]*>", re.S | re.I)
META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_\-]+)""", re.I)
ENTITY = re.compile(r"&(nbsp|amp|lt|gt|quot|#\d+);")


def read_warc(path):
    """(url, charset or None, body bytes) of each response record."""
    with open(path, "rb") as f:
        data = f.read()
    at = 0
    while at < len(data):
        head_end = data.index(b"\r\n\r\n", at)
        headers = {}
        for line in data[at:head_end].split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            headers[k.strip().lower()] = v.strip().decode("utf-8", "replace")
        length = int(headers[b"content-length"])
        block = data[head_end + 4 : head_end + 4 + length]
        at = head_end + 4 + length + 4
        http_end = block.index(b"\r\n\r\n")
        charset = None
        for line in block[:http_end].split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-type":
                m = re.search(rb"charset=([A-Za-z0-9_\-]+)", v)
                charset = m.group(1).decode() if m else None
        yield headers.get(b"warc-target-uri", ""), charset, block[http_end + 4 :]


def page_text(charset, body):
    if charset is None:
        m = META_CHARSET.search(body[:4096])
        charset = m.group(1).decode() if m else "utf-8"
    if charset.lower() in ("gb2312", "gbk"):
        charset = "gb18030"
    try:
        text = body.decode(charset, "replace")
    except LookupError:
        text = body.decode("utf-8", "replace")
    text = TAG.sub(b" ", text.encode("utf-8")).decode("utf-8", "replace")
    return ENTITY.sub(" ", text)


def shingles(words):
    words = [w for w in words if w.strip()]
    if len(words) < SHINGLE_WORDS:
        return [" ".join(words).encode("utf-8")] if words else []
    return list({" ".join(words[i : i + SHINGLE_WORDS]).encode("utf-8") for i in range(len(words) - SHINGLE_WORDS + 1)})


def main():
    works_path, pages_path = sys.argv[1], sys.argv[2]
    t0 = time.process_time()
    import jieba
    from datasketch import MinHash, MinHashLSH

    jieba.setLogLevel(60)
    jieba.initialize()
    init_cpu = time.process_time() - t0

    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM)
    works_bytes = 0
    works = 0
    jieba_works_cpu = 0.0
    works_text_bytes = 0
    with open(works_path, "rb") as f:
        for line in f:
            works_bytes += len(line)
            w = json.loads(line)
            text = w["text"]
            works_text_bytes += len(text.encode("utf-8"))
            t = time.process_time()
            words = jieba.lcut(text)
            jieba_works_cpu += time.process_time() - t
            m = MinHash(num_perm=NUM_PERM)
            m.update_batch(shingles(words))
            lsh.insert(w["id"], m)
            works += 1

    pages = 0
    pages_bytes = 0
    pairs = 0
    for url, charset, body in read_warc(pages_path):
        pages_bytes += len(body)
        m = MinHash(num_perm=NUM_PERM)
        m.update_batch(shingles(jieba.lcut(page_text(charset, body))))
        pairs += len(lsh.query(m))
        pages += 1

    print(
        json.dumps(
            {
                "works": works,
                "works_file_bytes": works_bytes,
                "pages": pages,
                "pages_body_bytes": pages_bytes,
                "candidate_pairs": pairs,
                "jieba_init_cpu_secs": round(init_cpu, 3),
                "jieba_works_cpu_secs": round(jieba_works_cpu, 3),
                "jieba_works_mib_per_cpu_sec": round(works_text_bytes / 2**20 / max(jieba_works_cpu, 1e-9), 2),
            }
        )
    )


if __name__ == "__main__":
    main()
