import json,gzip,sys
for f in sys.argv[1:]:
  j=json.load(gzip.open(f))
  print(f,[(round(m['raw_hop_ns']),round(m['share'],2),m['regime']) for m in j['modes']])
  for r in j['rows']:
    print(f"  m{r['mode']} n{r['n']:3} {r['bytes']:7} {r['candidate'][:22]:22} {r['transport'] or '':8} p={r['predicted_ns']:9.0f} m={r['measured_ns']['median']:9.0f} m/p={r['measured_over_predicted']:.3f} n={r['samples']}")
  for g in j['regret']:
    print(f"   regret m{g['mode']} n{g['n']} {g['bytes']} pick {g['pick']} {g['pick_transport']} best {g['paired_best']} {g['paired_best_transport']} paired {g['paired']*100:.1f}%")
