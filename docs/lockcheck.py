#!/usr/bin/env python3
"""Which x86 atomic read-modify-write instructions (lock-prefixed, or xchg with memory) a callgrind run executed.

usage: lockcheck.py DISASSEMBLY CALLGRIND_OUT...
  DISASSEMBLY: `objdump -d --no-show-raw-insn -C BINARY`
  CALLGRIND_OUT: `valgrind --tool=callgrind --dump-instr=yes --toggle-collect=... BINARY ...`
Prints each such instruction the run executed, with its execution count and function. See docs/BENCHMARKS.md.
"""
import re
import sys


def executed(path):
    """Address -> self instruction count, from a callgrind file with `positions: instr line`."""
    counts = {}
    cur = 0
    skip_next = False
    for line in open(path):
        if line.startswith("calls="):
            skip_next = True  # the next cost line is the call's inclusive cost
            continue
        m = re.match(r"^(0x[0-9a-f]+|\+\d+|-\d+|\*)\s+(\S+)\s+(\d+)", line)
        if not m:
            continue
        a = m.group(1)
        if a.startswith("0x"):
            cur = int(a, 16)
        elif a.startswith("+"):
            cur += int(a[1:])
        elif a.startswith("-"):
            cur -= int(a[1:])
        if skip_next:
            skip_next = False
            continue
        counts[cur] = counts.get(cur, 0) + int(m.group(3))
    return counts


def rmw_instructions(disassembly):
    found = {}
    fn = None
    for line in open(disassembly):
        m = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
        if m:
            fn = m.group(2)
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if not m:
            continue
        ins = m.group(2).strip()
        # `xchg %ax,%ax` (66 90) is a two-byte nop; only xchg with a memory operand is atomic.
        if re.search(r"\block\b", ins) or (ins.startswith("xchg") and "(" in ins):
            found[int(m.group(1), 16)] = (fn, ins)
    return found


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rmw = rmw_instructions(sys.argv[1])
    for path in sys.argv[2:]:
        ex = executed(path)
        hits = sorted((a, rmw[a], c) for a, c in ex.items() if a in rmw)
        print(f"{path}: {len(hits)} atomic read-modify-write instruction(s) executed")
        for a, (fn, ins), c in hits:
            print(f"  {a:#x} x{c} {ins}  in {fn[:100]}")


if __name__ == "__main__":
    main()
