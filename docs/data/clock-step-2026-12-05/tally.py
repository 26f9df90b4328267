# Counts, per build (old/new) and latency mode (fast: raw hop < 150 ns), the 2-rank picks whose
# measured/predicted lies within 10 % of 1, by size class. Run from this directory.
import json, gzip, glob, collections
st = collections.defaultdict(collections.Counter)
for f in sorted(glob.glob('ab*/f-*.json.gz')):
    v = f.split('/')[1].split('-')[1]
    j = json.load(gzip.open(f))
    for m, mode in enumerate(j['modes']):
        kind = 'fast' if mode['raw_hop_ns'] < 150 else 'slow'
        rows = [r for r in j['rows'] if r['planner_rank'] == 1 and r['mode'] == m]
        ok = [abs(r['measured_over_predicted'] - 1) <= 0.10 for r in rows]
        c = st[(v, kind)]
        c['modes'] += 1
        c['all'] += all(ok)
        for r, o in zip(rows, ok):
            key = '8-64B' if r['bytes'] <= 64 else ('512B' if r['bytes'] == 512 else '4KiB-4MiB')
            c[key + '_n'] += 1
            c[key + '_ok'] += o
for k in sorted(st):
    print(k, dict(st[k]))
