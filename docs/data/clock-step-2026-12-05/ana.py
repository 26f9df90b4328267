# One line per calibration-and-fidelity pair: the profile's clock step, its one-line and posted
# one-line calls, and per latency mode of the 2-rank run the pick's measured/predicted per size.
# Usage (from this directory): python3 ana.py ab new,old
import json,gzip,sys,re,os
d=sys.argv[1]; tags=sys.argv[2].split(',')
runs=sorted([f for f in os.listdir(d) if f.startswith('f-') and f.endswith('.json.gz')], key=lambda f:int(f.split('-')[2].split('.')[0]))
for f in runs:
  v=f.split('-')[1]; i=f.split('-')[2].split('.')[0]
  if v not in tags: continue
  j=json.load(gzip.open(os.path.join(d,f)))
  p=json.load(gzip.open(os.path.join(d,f'P-{v}-{i}.json.gz')))
  cal=open(os.path.join(d,f'cal-{v}-{i}.txt')).read()
  pl=re.search(r'posted one line ([\d.]+)',cal).group(1); ol=re.search(r'    one line ([\d.]+)',cal).group(1)
  out=[]
  for m,mode in enumerate(j['modes']):
    ratios=[]
    for r in j['rows']:
      if r['planner_rank']==1 and r['mode']==m:
        ratios.append(f"{r['bytes']}:{r['measured_over_predicted']:.2f}")
    t=[t for t in j['targets'] if t['mode']==m]
    tw=t[0]['two_rank_sizes'] if t else None; tok=t[0]['two_rank_within_10pct'] if t else None
    out.append(f"m{m} hop {mode['raw_hop_ns']:.0f} sh {mode['share']:.2f} {tok}/{tw} "+' '.join(ratios))
  print(f"{i} {v} step={p.get('clock_resolution_ns')} cal one={ol} posted={pl} | "+' || '.join(out))
