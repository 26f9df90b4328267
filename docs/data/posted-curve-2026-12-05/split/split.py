# The posted 2-rank broadcast's median ns per size, per run and latency mode (raw hop 40-150 ns),
# for the one-copy build (`new`) and the two-copy build (`split`). python3 split.py (from here).
import json, gzip, glob
for f in sorted(glob.glob('s-*.json.gz'), key=lambda f: (f.split('-')[1], f.split('-')[2])):
    v = f.split('-')[1]
    j = json.load(gzip.open(f))
    for m, mode in enumerate(j['modes']):
        if not 40 < mode['raw_hop_ns'] < 150:
            continue
        pts = {r['bytes']: round(r['measured_ns']['median']) for r in j['rows']
               if r['mode'] == m and r['transport'] == 'posted' and r['candidate'] == 'binary m=1'}
        print(f"{v:5} hop {mode['raw_hop_ns']:3.0f} share {mode['share']:.2f}", ' '.join(f"{b}:{t}" for b, t in sorted(pts.items())))
