# The pick and its paired regret per (ranks, size), fast mode, the CLI before (head) and
# after (tie) the change to the band of ties: python3 tab.py tie 5   (tie-*.json.gz)
#                                             python3 tab.py tie4 5  (tie4-*.json.gz)
import os,sys,statistics as st
HERE=os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from runs import runs
res={}
for v,i,d in runs(HERE, sys.argv[1], ('head','tie'), int(sys.argv[2])):
    ms=[j for j,m in enumerate(d['modes']) if m['raw_hop_ns']<150]
    if not ms: continue
    for g in d['regret']:
      if g['mode']!=ms[0] or g['paired_slices']<8: continue
      res.setdefault((g['n'],g['bytes']),{}).setdefault(v,[]).append((g['pick']+'/'+g['pick_transport'][:3], g['paired']))
for k in sorted(res):
  s=f"n{k[0]} {k[1]:>7}"
  for v in ('head','tie'):
    xs=res[k].get(v,[])
    if xs: s+=f" | {v}[{len(xs)}] {'/'.join(sorted(set(x[0] for x in xs)))}: paired {st.median(x[1] for x in xs)*100:.1f} % [{max(x[1] for x in xs)*100:.1f}]"
  print(s)
