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
"""
import collections
import re
import sys

OURS = ("zhiwen_store", "zhiwen_matcher", "zhiwen_index")
EVENT = re.compile(r"syscalls:sys_enter_(\w+)")
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\(")
HASH = re.compile(r"::h[0-9a-f]{16}")


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print("usage: syscalls-by-caller.py PERF_SCRIPT_OUTPUT [TOP]", file=sys.stderr)
        return 2
    top = int(sys.argv[2]) if len(sys.argv) == 3 else 30
    counts: collections.Counter = collections.Counter()
    event, caller = None, None

    def flush() -> None:
        if event is not None:
            counts[(event, caller or "?")] += 1

    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            if not line[0].isspace():
                flush()
                m = EVENT.search(line)
                event, caller = (m.group(1) if m else None), None
                continue
            m = FRAME.match(line)
            if caller is None and m and any(o in m.group(1) for o in OURS):
                caller = HASH.sub("", m.group(1))[:120]
    flush()
    for (name, where), n in counts.most_common(top):
        print(f"{n:7}  {name:9}  {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
