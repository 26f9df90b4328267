# Per (ranks, size, mode): the pick, its paired regret and the candidate it is taken against, the
# split regret, and every candidate as measured/predicted µs (o optimal, s star, k knomial, b
# binomial, c chain, d dtree; a trailing s: streamed). python3 tab.py PREFIX V1,V2 RUNS
import json,gzip,sys
pre=sys.argv[1]; vs=sys.argv[2].split(','); runs=int(sys.argv[3])
for n in (8,16):
  for v in vs:
    for i in range(1,runs+1):
      d=json.load(gzip.open(f'{pre}-{v}-{i}.json.gz'))
      modes=[round(x['raw_hop_ns']) for x in d['modes']]
      for g in d['regret']:
        if g['n']!=n: continue
        rows={(x['candidate'],x['transport']):x for x in d['rows'] if x['n']==n and x['mode']==g['mode'] and x['bytes']==g['bytes']}
        cs=' '.join(f"{c[0][:8]}{'' if t=='direct' else t[:1]}:{round(x['measured_ns']['median']/1e3)}/{round(x['predicted_ns']/1e3)}" for (c,t),x in rows.items())
        print(n,g['bytes'],v,i,'mode',modes[g['mode']],'pick',g['pick'],'paired %.1f'%(100*(g['paired'] or 0)),'vs',g['paired_best'],'split %.1f'%(100*(g['split'] or 0)),'|',cs)
