import json,sys,os
HERE=os.path.dirname(os.path.abspath(__file__))
from statistics import median
for i in sys.argv[1:]:
    a=json.load(open(f'{HERE}/f-C{i}.json')); b=json.load(open(f'{HERE}/f-C{i}-old.json'))
    print(f"== run {i}: modes new {[(round(m['raw_hop_ns']),round(m['share'],2)) for m in a['modes']]} old {[(round(m['raw_hop_ns']),round(m['share'],2)) for m in b['modes']]}")
    key=lambda r:(r['mode'],r['n'],r['bytes'],r['candidate'],r['transport'])
    bo={key(r):r for r in b['rows']}
    for r in a['rows']:
        if r['samples']<10 or r['mode']!=0: continue
        if not (r['planner_rank']==1 or any(x in r['candidate'] for x in ('binomial','chain','scatter'))): continue
        o=bo.get(key(r))
        ot = f"old pred {o['predicted_ns']/1e3:8.1f} meas {o['measured_ns']['median']/1e3:8.1f} m/p {o['measured_over_predicted']:.3f}" if o and o['samples']>=10 else "old -"
        print(f"  n{r['n']:>2} {r['bytes']:>8} rk{r['planner_rank']:<3} {r['candidate']:22} {r['transport']:6} new pred {r['predicted_ns']/1e3:8.1f} meas {r['measured_ns']['median']/1e3:8.1f} m/p {r['measured_over_predicted']:.3f} | {ot}")
    ro={(r['mode'],r['n'],r['bytes']):r for r in b['regret']}
    for r in a['regret']:
        if r['mode']!=0: continue
        o=ro.get((r['mode'],r['n'],r['bytes']))
        print(f"  regret n{r['n']:>2} {r['bytes']:>8} new pick {r['pick']:16} paired {r.get('paired') or 0:.3f} | old pick {o['pick'] if o else '-':16} paired {(o.get('paired') or 0) if o else 0:.3f}")
