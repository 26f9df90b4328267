"""Per run: how the slice's 2-rank 1 MiB broadcast (single copy) follows a raw hop, a 1 MiB copy
on one core and a 1 MiB cross-core copy timed in the same slice. Usage: python3 cs.py r2.txt [hop_max]"""
import re, sys, math, statistics as st
rows = []
for l in open(sys.argv[1]):
    m = re.match(r'(\d+) t ([\d.]+) hop (\d+) local (\d+) cross (\d+) bcast (\d+)', l)
    if m:
        rows.append(tuple(float(x) for x in m.groups()))
hop_max = float(sys.argv[2]) if len(sys.argv) > 2 else 150
def corr(a, b):
    ma, mb = st.mean(a), st.mean(b)
    return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / math.sqrt(
        sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))
sel = [r for r in rows if r[2] < hop_max]
print(f'{len(rows)} slices, {len(sel)} with the raw hop below {hop_max:.0f} ns')
for name, i in (('raw hop', 2), ('copy on one core', 3), ('cross-core copy', 4)):
    print(f'  correlation of the broadcast with the {name}: {corr([r[i] for r in sel], [r[5] for r in sel]):.2f}')
thr = st.median(r[5] for r in sel)
for lab, part in (('faster half', [r for r in sel if r[5] < thr]), ('slower half', [r for r in sel if r[5] >= thr])):
    print(f'  broadcast {lab}: {len(part)} slices, medians: broadcast {st.median(r[5] for r in part):.0f} ns, '
          f'cross-core copy {st.median(r[4] for r in part):.0f}, one-core copy {st.median(r[3] for r in part):.0f}, hop {st.median(r[2] for r in part):.0f}')
print('  every 40 slices (medians): start s, hop, one-core copy, cross-core copy, broadcast')
for k in range(0, len(rows), 40):
    b = rows[k:k + 40]
    print('   %5.0f %5.0f %7.0f %7.0f %7.0f' % ((b[0][1],) + tuple(st.median(r[i] for r in b) for i in (2, 3, 4, 5))))
