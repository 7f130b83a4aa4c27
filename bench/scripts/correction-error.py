#!/usr/bin/env python3
"""How far a search's corrected probe lands from the answer, for random listed ids of a version-2 `.idx`.

Runs the first two steps of `Table::find_interpolated` (src/idx/search.rs: the position predicted from the id's
bytes 1..8 within its fan-out bucket, then one correction at the bucket's density from the id read there) and
prints how many entries the answer lies from the corrected probe, and the share within `NEAR` entries
(src/idx/batch.rs: a batch warms the lines of `NEAR` entries either side of the corrected probe).

Usage: bench/scripts/correction-error.py FILE.idx [SAMPLES] [HASH_LEN]   (defaults: 20000, 20)
The bench's 1M-id fixture: odb-index-bench --make-fixture /tmp/fx; then /tmp/fx/big/objects/pack/*.idx.
"""
import collections
import random
import struct
import sys

NEAR = 7

path = sys.argv[1]
samples = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
h = int(sys.argv[3]) if len(sys.argv) > 3 else 20
d = open(path, "rb").read()
assert d[:8] == b"\xfftOc\x00\x00\x00\x02", "a version-2 .idx"
fanout = [0] + list(struct.unpack(">256I", d[8 : 8 + 1024]))
n = fanout[256]
ids_at = 8 + 1024
M = 2**64 - 1


def key(i):
    return struct.unpack(">Q", d[ids_at + h * i : ids_at + h * i + 8])[0]


def correct(p, v, k, l, r, density):
    """One correction from entry `p` (first 8 bytes `v`) inside `[l, r)` at `density` ids per bucket."""
    l, r = (p + 1, r) if v < k else (l, p)
    step = ((k - v) * density) >> 56
    return max(l, min(r - 1, p + step)), l, r


random.seed(1)
dist = collections.Counter()
# Not the search's: a second correction from the corrected entry at the same density (an idea, not built).
again = collections.Counter()
for _ in range(samples):
    i = random.randrange(n)
    k = key(i)
    b = k >> 56
    l, r = fanout[b], fanout[b + 1]
    density = r - l
    p = l + ((((k << 8) & M) * (r - l)) >> 64)
    v = key(p)
    if v == k:
        dist[0] += 1
        again[0] += 1
        continue
    q, l, r = correct(p, v, k, l, r, density)
    dist[abs(i - q)] += 1
    vq = key(q)
    if vq == k:
        again[0] += 1
        continue
    q2, _, _ = correct(q, vq, k, l, r, density)
    again[abs(i - q2)] += 1
print(f"{path}: {n} ids, {samples} random hits")
print("entries from the corrected probe: hits")
for e in range(0, 16):
    print(f"  {e:2d}: {dist[e]}")
print(f"  >15: {sum(c for e, c in dist.items() if e > 15)}")
# An answer `e <= NEAR` entries away is found by a gallop that reads 1, 3, 7 entries away, then a binary search
# between its last two reads: every entry read lies within NEAR = 7 of the probe.
within = sum(c for e, c in dist.items() if e <= NEAR)
print(f"within {NEAR} entries (every line the search then reads warmed): {100 * within / samples:.1f}%")
within3 = [100 * sum(c for e, c in d.items() if e <= 3) / samples for d in (dist, again)]
print(
    f"a second correction (not built): on the answer {100 * again[0] / samples:.1f}% (now {100 * dist[0] / samples:.1f}%),"
    f" within 3 entries {within3[1]:.1f}% (now {within3[0]:.1f}%)"
)
