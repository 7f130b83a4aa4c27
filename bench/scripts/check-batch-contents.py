#!/usr/bin/env python3
"""Check a `cat-file --batch` stream on stdin: each `<id> <type> <size>` line's contents (the next <size> bytes and
a newline) must hash to <id> (SHA-1 or SHA-256 by the id's length), as git computes an object's id. Other lines
(`<id> missing`, `<id> error ...`) are counted. Prints `NAME: N lines, M missing, E error, W wrong contents`
(the first five problems on stderr); used by maintenance-batch-check.sh."""
import hashlib
import sys

name = sys.argv[1] if len(sys.argv) > 1 else "contents"
inp = sys.stdin.buffer
n = missing = error = wrong = 0
while True:
    line = inp.readline()
    if not line:
        break
    n += 1
    parts = line.rstrip(b"\n").split(b" ")
    if len(parts) == 2 and parts[1] == b"missing":
        missing += 1
        if missing <= 5:
            print(f"{name}: {line.decode(errors='replace').strip()}", file=sys.stderr)
        continue
    if len(parts) >= 2 and parts[1] == b"error":
        error += 1
        if error <= 5:
            print(f"{name}: {line.decode(errors='replace').strip()}", file=sys.stderr)
        continue
    if len(parts) != 3:
        wrong += 1
        print(f"{name}: not an answer: {line[:200]!r}", file=sys.stderr)
        break
    oid, kind, size = parts[0].decode(), parts[1], int(parts[2])
    data = inp.read(size + 1)
    if len(data) < size + 1:
        break  # the reader was stopped mid-object
    h = hashlib.sha1() if len(oid) == 40 else hashlib.sha256()
    h.update(kind + b" " + str(size).encode() + b"\0" + data[:size])
    if h.hexdigest() != oid or data[size:] != b"\n":
        wrong += 1
        if wrong <= 5:
            print(f"{name}: wrong contents for {oid}", file=sys.stderr)
print(f"{name}: {n} lines, {missing} missing, {error} error, {wrong} wrong contents")
sys.exit(1 if wrong else 0)
