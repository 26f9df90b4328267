# The pick's m/p and paired regret per (ranks, size), per build of the profile, in one latency
# mode: python3 tabs.py P1,P1ns 1,2,...,16 fast|slow [min paired slices, default 8]
# (DATA=dir: the runs in that directory, e.g. DATA=huge)
import gzip,json,os,sys,statistics as st
HERE=os.environ.get('DATA') or os.path.dirname(os.path.abspath(__file__))
vs=sys.argv[1].split(','); idx=sys.argv[2].split(',')
fast=(sys.argv[3] if len(sys.argv)>3 else 'fast')=='fast'
MIN=int(sys.argv[4]) if len(sys.argv)>4 else 8
out={}
for v in vs:
  for i in idx:
    d=json.load(gzip.open(f'{HERE}/f-{v}-{i}.json.gz'))
    ms=[j for j,m in enumerate(d['modes']) if (m['raw_hop_ns']<150)==fast]
    if not ms: continue
    mode=ms[0]
    for g in d['regret']:
      if g['mode']!=mode or g.get('paired_slices',0)<MIN: continue
      k=(g['n'],g['bytes'])
      rows=[r for r in d['rows'] if r['n']==g['n'] and r['bytes']==g['bytes'] and r['mode']==mode and r['candidate']==g['pick'] and r['transport']==g['pick_transport']]
      mp=rows[0]['measured_over_predicted'] if rows else float('nan')
      out.setdefault(k,{}).setdefault(v,[]).append((g['pick'],mp,g['paired']))
for k in sorted(out):
  s=f"n{k[0]:>2} {k[1]:>7}"
  for v in vs:
    xs=out[k].get(v,[])
    if not xs: s+=f" | {v}: -"; continue
    picks=sorted(set(x[0] for x in xs))
    s+=f" | {v}[{len(xs)}]: {'/'.join(picks)[:24]:24} m/p {st.median([x[1] for x in xs]):.2f} ({min(x[1] for x in xs):.2f}-{max(x[1] for x in xs):.2f}) reg {st.median([x[2] for x in xs])*100:4.1f}% max {max(x[2] for x in xs)*100:4.1f}%"
  print(s)
