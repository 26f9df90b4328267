import json,sys
for f in sys.argv[1:]:
    d=json.load(open(f))
    print("==",f,"modes",[(round(m['raw_hop_ns']),round(m['share'],2)) for m in d['modes']])
    for r in d['rows']:
        if r['planner_rank']!=1 or r['samples']<10: continue
        print(f"  mode {r['mode']} n{r['n']:>2} {r['bytes']:>8} {r['candidate']:16} {r['transport']:6} pred {r['predicted_ns']:9.0f} meas {r['measured_ns']['median']:9.0f} m/p {r['measured_over_predicted']:.3f}")
    for r in d['regret']:
        print(f"  regret mode {r['mode']} n{r['n']:>2} {r['bytes']:>8} pick {r['pick']:16} best {r['best']:16} paired {(r.get('paired') if r.get('paired') is not None else float('nan')):.3f} ({r.get('paired_best')})")
