import json,glob,statistics as st,sys
d0=sys.argv[1]
def pick(f):
    d=json.load(open(f)); out={}
    for r in d['rows']:
        if r['planner_rank']==1 and r['samples']>=5:
            k=(r['n'],r['bytes'])
            if k not in out or r['samples']>out[k][1]: out[k]=(r['measured_ns']['median'],r['samples'])
    return {k:v[0] for k,v in out.items()}
runs={}
for f in glob.glob(f'{d0}/*-*.json'):
    v,i=f.split('/')[-1][:-5].split('-'); runs.setdefault(int(i),{})[v]=pick(f)
keys=sorted(next(iter(runs.values()))['old'].keys())
for k in keys:
    o=[r['old'][k] for r in runs.values() if 'new' in r and k in r['old']]; n=[r['new'][k] for r in runs.values() if 'old' in r and k in r['new']]
    p=[r['new'][k]/r['old'][k] for r in runs.values() if 'new' in r and 'old' in r and k in r['old'] and k in r['new']]
    print(k, f"old {st.median(o):9.0f} new {st.median(n):9.0f} paired new/old {st.median(p):.3f} lower in {sum(x<1 for x in p)}/{len(p)}  ", ' '.join(f'{x:.2f}' for x in p))
