import json, glob, sys, statistics as st, collections
mp=collections.defaultdict(list); rg=collections.defaultdict(list); cnt=collections.Counter()
for f in sorted(glob.glob(sys.argv[1]+'/r*.json')):
    d=json.load(open(f))
    name={}
    for i,m in enumerate(d['modes']):
        h=m['raw_hop_ns']; name[i]='near' if h<150 else ('far' if h>250 else 'mid')
        cnt[name[i]]+=m['measurements']
    for r in d['rows']:
        if r['planner_rank']==1: mp[(name[r['mode']], r['bytes'])].append(r['measured_over_predicted'])
    for r in d['regret']:
        if r['paired'] is not None: rg[(name[r['mode']], r['bytes'])].append((r['paired'], r['paired_slices']))
print('measurements per mode', dict(cnt))
print('mode  bytes  runs  median m/p (range)           median paired regret (max)  slices')
for k in sorted(mp):
    v=mp[k]; g=rg.get(k,[])
    print(f"{k[0]:5} {k[1]:7} {len(v):4}  {st.median(v):.2f} ({min(v):.2f}-{max(v):.2f})      {100*st.median([x[0] for x in g]) if g else float('nan'):5.1f}% ({100*max(x[0] for x in g) if g else float('nan'):.1f})   {sum(x[1] for x in g)}")
