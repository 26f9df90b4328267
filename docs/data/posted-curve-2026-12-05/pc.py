# Per calibration-and-fidelity pair (ab/: f-*.json the 2-rank run at the default sizes, c-*.json
# the posted curve): per latency mode (fast: raw hop 45-150 ns) the 2-rank picks' measured /
# predicted per size, the count within 10 %, and the posted candidate's ratio along the curve.
# `fastest`: the host's rare state with a raw hop under 45 ns, which no calibration here resolved.
# Usage (from this directory): python3 pc.py ab
import json, gzip, sys, os, collections
d = sys.argv[1]
def load(f):
    return json.load(gzip.open(f) if f.endswith('.gz') else open(f))
runs = sorted({(f.split('-')[1], int(f.split('-')[2].split('.')[0])) for f in os.listdir(d) if f.startswith('f-') and '.json' in f}, key=lambda x: x[1])
tally = collections.defaultdict(collections.Counter)
for v, i in runs:
    ext = '.json.gz' if os.path.exists(f'{d}/f-{v}-{i}.json.gz') else '.json'
    f = load(f'{d}/f-{v}-{i}{ext}')
    c = load(f'{d}/c-{v}-{i}{ext}')
    for m, mode in enumerate(f['modes']):
        kind = 'fastest' if mode['raw_hop_ns'] < 45 else ('fast' if mode['raw_hop_ns'] < 150 else 'slow')
        rows = [r for r in f['rows'] if r['planner_rank'] == 1 and r['mode'] == m]
        ok = [abs(r['measured_over_predicted'] - 1) <= 0.10 for r in rows]
        t = tally[(v, kind)]
        t['modes'] += 1; t['every size'] += all(ok)
        for r, o in zip(rows, ok):
            key = '8-64B' if r['bytes'] <= 64 else ('512B' if r['bytes'] == 512 else '4KiB-4MiB')
            t[key + ' n'] += 1; t[key + ' ok'] += o
        print(f"{i} {v} m{m} hop {mode['raw_hop_ns']:.0f} share {mode['share']:.2f} {sum(ok)}/{len(ok)} " + ' '.join(f"{r['bytes']}:{r['measured_over_predicted']:.2f}" for r in rows))
    for m, mode in enumerate(c['modes']):
        kind = 'fastest' if mode['raw_hop_ns'] < 45 else ('fast' if mode['raw_hop_ns'] < 150 else 'slow')
        pts = [r for r in c['rows'] if r['mode'] == m and r['transport'] == 'posted' and r['candidate'] == 'binary m=1']
        within = sum(abs(r['measured_over_predicted'] - 1) <= 0.10 for r in pts)
        tally[(v, kind)]['curve n'] += len(pts); tally[(v, kind)]['curve ok'] += within
        print(f"   curve m{m} hop {mode['raw_hop_ns']:.0f} {within}/{len(pts)} " + ' '.join(f"{r['bytes']}:{r['measured_ns']['median']:.0f}/{r['predicted_ns']:.0f}" for r in pts))
for k in sorted(tally):
    print(k, dict(tally[k]))
