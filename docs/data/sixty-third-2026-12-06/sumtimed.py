import json, glob, sys, statistics as st, collections
d = sys.argv[1]
agg = collections.defaultdict(list)
for f in sorted(glob.glob(d + '/*.json')):
    prof = f.split('/')[-1].rsplit('-', 1)[0]
    j = json.load(open(f))
    modes = j['modes']
    for r in j['regret']:
        hop = modes[r['mode']]['raw_hop_ns']
        m = 'near' if hop < 150 else ('far' if hop > 250 else 'mid')
        if r.get('timed_paired') is None: continue
        agg[(prof, r['n'], r['bytes'], m)].append((r['paired'], r['timed_paired'], r['paired_slices'], r['pick_transport']))
print("profile      n  bytes mode  runs  pick-transport  median paired regret: plan pick / timed   (max)")
for k in sorted(agg):
    v = agg[k]
    p = [x[0] for x in v if x[0] is not None]; t = [x[1] for x in v]
    print(f"{k[0]:11} {k[1]:2} {k[2]:6} {k[3]:5} {len(v):4}  {v[0][3]:14} {100*st.median(p) if p else float('nan'):6.1f}% / {100*st.median(t):5.1f}%   ({100*max(p) if p else float('nan'):.1f} / {100*max(t):.1f})  slices {sum(x[2] for x in v)}")
