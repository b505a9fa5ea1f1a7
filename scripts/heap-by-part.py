#!/usr/bin/env python3
"""The heap of a zhiwen process at its peak, by part (docs/benchmarks.md, issue #31).

Reads the flame graph heaptrack_print writes for the peak:

    heaptrack -o PROFILE zhiwen match --all --no-capture      # a system-allocator build
    heaptrack_print -f PROFILE.zst --print-flamegraph FG --flamegraph-cost-type peak
    scripts/heap-by-part.py FG

and sums each allocation stack into the first part whose frame it holds, in this order:
jieba (the segmenter's dictionary, trie and part-of-speech tables), SQLite (its page caches), the analyses of
registered sections (the section cache), the embedded index; the rest is the pages being
loaded, prepared, verified and recorded, and the task around them.
"""
import sys

PARTS = [
    # Its part-of-speech tables (and the text they are parsed from, a static of
    # jieba-rs) are made on the first tagging, under a page or a section.
    ("jieba (dictionary, trie and part-of-speech tables)", ("jieba_rs::Jieba", "posseg.rs")),
    ("SQLite", ("sqlite3",)),
    ("analyses of registered sections", ("section_entry_from_text",)),
    ("embedded index", ("embedded.rs", "zhiwen_index")),
]
REST = "pages in flight and the rest"


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: heap-by-part.py FLAMEGRAPH", file=sys.stderr)
        return 2
    totals = {name: 0 for name, _ in PARTS}
    totals[REST] = 0
    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        for line in f:
            stack, _, cost = line.rstrip("\n").rpartition(" ")
            if not stack or not cost.isdigit():
                continue
            frames = stack.split(";")
            part = next((name for name, marks in PARTS if any(m in fr for fr in frames for m in marks)), REST)
            totals[part] += int(cost)
    for name, cost in totals.items():
        print(f"{cost / 1e6:8.1f} MB  {name}")
    print(f"{sum(totals.values()) / 1e6:8.1f} MB  peak heap")
    return 0


if __name__ == "__main__":
    sys.exit(main())
