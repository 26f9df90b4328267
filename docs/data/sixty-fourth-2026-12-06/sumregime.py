import json, glob, sys, statistics as st, collections, re
d = sys.argv[1]
agg = collections.defaultdict(list)
for f in sorted(glob.glob(d + '/*.json')):
    var = f.split('/')[-1].rsplit('-', 1)[0]
    try: j = json.load(open(f))
    except Exception as e: print("bad", f, e); continue
    modes = j['modes']
    for r in j['regret']:
        hop = modes[r['mode']]['raw_hop_ns']
        m = 'near' if hop < 150 else ('far' if hop > 200 else 'mid')
        if r.get('timed_paired') is None: continue
        agg[(r['n'], r['bytes'], m, var)].append((r['paired'], r['timed_paired'], r['paired_slices'], r['pick_transport']))
print(" n  bytes mode  variant runs pick   median paired regret: plan pick / timed comm   (max)  slices")
for k in sorted(agg):
    v = agg[k]
    p = [x[0] for x in v if x[0] is not None]; t = [x[1] for x in v]
    print(f"{k[0]:2} {k[1]:6} {k[2]:5} {k[3]:7} {len(v):4} {v[0][3]:8} {100*st.median(p) if p else float('nan'):6.1f}% / {100*st.median(t):5.1f}%   ({100*max(p) if p else float('nan'):.1f} / {100*max(t):.1f})  {sum(x[2] for x in v)}")
# traces
loads = collections.defaultdict(collections.Counter)
for f in sorted(glob.glob(d + '/*.err')):
    var = f.split('/')[-1].rsplit('-', 1)[0]
    for line in open(f):
        m = re.search(r'load=Some\((\d+)\) regime=(\d)', line)
        if m: loads[var][(int(m.group(1))//10*10, m.group(2))] += 1
for v in loads: print(v, sorted(loads[v].items()))
