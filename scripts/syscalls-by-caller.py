#!/usr/bin/env python3
"""The system calls of a zhiwen process, by the project function that made them
(docs/benchmarks.md, issue #31).

Reads what `perf script` prints for a recording of system-call entries with their stacks:

    perf record -e syscalls:sys_enter_fcntl,syscalls:sys_enter_pwrite64,syscalls:sys_enter_pread64 \\
        --call-graph dwarf,32768 -o PERF zhiwen match --all --no-capture
    perf script -i PERF > CALLS
    scripts/syscalls-by-caller.py CALLS [TOP]

and counts each call under its system call and the first frame (from the call upwards)
of the store, the matcher or the index; `?` when none of them is on the stack.

With `--share NAME...` it reads a CPU-time recording instead (`perf record -e cpu-clock
-F 1000 --call-graph dwarf,16384 ...`) and prints, for each NAME, the share of all samples
whose stack holds a frame containing NAME (the function's time with its callees):

    scripts/syscalls-by-caller.py CALLS --share Fingerprinter::complete Jieba::new
"""
import collections
import re
import sys

OURS = ("zhiwen_store", "zhiwen_matcher", "zhiwen_index")
EVENT = re.compile(r"syscalls:sys_enter_(\w+)")
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\(")
HASH = re.compile(r"::h[0-9a-f]{16}")


def samples(path: str):
    """Each sample of `perf script`'s output: its header line and its frames' symbols."""
    header, frames = None, []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            if not line[0].isspace():
                if header is not None:
                    yield header, frames
                header, frames = line, []
                continue
            m = FRAME.match(line)
            if m:
                frames.append(HASH.sub("", m.group(1)))
    if header is not None:
        yield header, frames


def share(path: str, names: list) -> int:
    total = 0
    under: collections.Counter = collections.Counter()
    for _, frames in samples(path):
        total += 1
        for name in names:
            if any(name in frame for frame in frames):
                under[name] += 1
    for name in names:
        print(f"{100 * under[name] / max(total, 1):6.1f}%  {name}")
    print(f"{total:7}  samples")
    return 0


def main() -> int:
    if len(sys.argv) >= 4 and sys.argv[2] == "--share":
        return share(sys.argv[1], sys.argv[3:])
    if len(sys.argv) not in (2, 3):
        print("usage: syscalls-by-caller.py PERF_SCRIPT_OUTPUT [TOP | --share NAME...]", file=sys.stderr)
        return 2
    top = int(sys.argv[2]) if len(sys.argv) == 3 else 30
    counts: collections.Counter = collections.Counter()
    for header, frames in samples(sys.argv[1]):
        m = EVENT.search(header)
        if m is None:
            continue
        caller = next((frame[:120] for frame in frames if any(o in frame for o in OURS)), "?")
        counts[(m.group(1), caller)] += 1
    for (name, where), n in counts.most_common(top):
        print(f"{n:7}  {name:9}  {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
