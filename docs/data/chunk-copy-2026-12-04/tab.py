import json,sys
for f in sys.argv[1:]:
    d=json.load(open(f))
    print("==",f,"modes",[(round(m['raw_hop_ns']),round(m['share'],2),m['regime']) for m in d['modes']])
    for r in d['rows']:
        if r['planner_rank']!=1: continue
        if r['samples']<10: continue
        cs=r.get('copy_state'); mc=r.get('measured_over_predicted_in_copy_state')
        print(f"  mode {r['mode']} n{r['n']} {r['bytes']:>8} {r['transport']:6} pred {r['predicted_ns']:9.0f} meas {r['measured_ns']['median']:9.0f} m/p {r['measured_over_predicted']:.3f}"
              + (f"  probe {r['copy_probe_ns']:.0f} state {cs:.3f} m/p_state {mc:.3f}" if cs else ""))
