# Measured medians per candidate, the CLI before (old) and after (new) the runtime's respin
# change, per latency mode: python3 rt.py r 8   (r-*.json.gz, runs 1..8)   or   python3 rt.py q 8
import os,sys,statistics as st
HERE=os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from runs import runs
res={}
for v,i,d in runs(HERE, sys.argv[1], ('old','new'), int(sys.argv[2])):
    for r in d['rows']:
      m=d['modes'][r['mode']]
      if r['samples']<8 or r['transport']!='direct': continue
      fast=m['raw_hop_ns']<150
      res.setdefault((fast,r['n'],r['bytes'],r['candidate']),{}).setdefault(v,[]).append(r['measured_ns']['median']/1e3)
for k in sorted(res):
  v=res[k]
  if 'old' not in v or 'new' not in v: continue
  o=st.median(v['old']); n=st.median(v['new'])
  flag=' <--' if abs(n/o-1)>0.05 else ''
  print(f"{'fast' if k[0] else 'slow'} n{k[1]} {k[2]:>6} {k[3]:22} old {o:7.2f}[{len(v['old'])}] new {n:7.2f}[{len(v['new'])}] {n/o:.3f}{flag}")
