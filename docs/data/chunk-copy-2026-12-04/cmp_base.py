import json,glob,statistics as st,sys
d0,n0=sys.argv[1],sys.argv[2]
def pick(f):
    d=json.load(open(f)); out={}
    for r in d['rows']:
        if r['planner_rank']==1 and r['samples']>=5:
            k=(r['n'],r['bytes'])
            if k not in out or r['samples']>out[k][1]: out[k]=(r['measured_ns']['median'],r['samples'],r['candidate'],r['transport'])
    return out
runs={}
for f in glob.glob(f'{d0}/n{n0}-*-*.json'):
    _,v,i=f.split('/')[-1][:-5].split('-'); runs.setdefault(int(i),{})[v]=pick(f)
runs={i:r for i,r in runs.items() if len(r)==2}
keys=sorted(next(iter(runs.values()))['base'].keys())
for k in keys:
    o=[r['base'][k][0] for r in runs.values() if k in r['base'] and k in r['new4']]; n=[r['new4'][k][0] for r in runs.values() if k in r['base'] and k in r['new4']]
    p=[b/a for a,b in zip(o,n)]
    c=next(iter(runs.values()))['base'][k][2:]
    print(k, c, f"base {st.median(o):9.0f} new {st.median(n):9.0f} paired new/base {st.median(p):.3f} lower in {sum(x<1 for x in p)}/{len(p)}  ", ' '.join(f'{x:.2f}' for x in p))
