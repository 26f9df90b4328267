import json,sys
for f in sys.argv[1:]:
    d=json.load(open(f))
    print("==",f,"modes",[(round(m['raw_hop_ns']),round(m['share'],2)) for m in d['modes']])
    for r in d['rows']:
        if r['samples']<10 or r['mode']!=0: continue
        if r['planner_rank']>3 and not any(x in r['candidate'] for x in ('binary','binomial')): continue
        print(f"  n{r['n']:>2} {r['bytes']:>8} rk{r['planner_rank']:<3} {r['candidate']:20} {r['transport']:6} pred {r['predicted_ns']/1e3:8.1f} meas {r['measured_ns']['median']/1e3:8.1f} m/p {r['measured_over_predicted']:.3f}")
    for r in d['regret']:
        if r['mode']!=0: continue
        print(f"  regret n{r['n']:>2} {r['bytes']:>8} pick {r['pick']:16} best {r['best']:16} regret {r['regret']:.3f} paired {(r.get('paired') or 0):.3f} ({r.get('paired_best')})")
