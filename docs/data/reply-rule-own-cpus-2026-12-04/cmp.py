import json,glob,statistics as st,sys
d0,A,B=sys.argv[1],sys.argv[2],sys.argv[3]
def dom(d,size,key):
    m=max(d[size]['modes'],key=lambda m:m['slices'])
    return m['raw_ns_center'], m.get(key), m['herald_ns']
def mode(raw): return 'shared' if raw<40 else ('fast' if raw<140 else 'slow')
rows={}
S=(('48B','herald_over_flag'),('64B','herald_over_flag'),('4KiB','herald_over_xcopy'),('64KiB','herald_over_xcopy'),('256KiB','herald_over_xcopy'),('1MiB','herald_over_xcopy'),('4MiB','herald_over_xcopy'))
for v in (A,B):
    for f in glob.glob(f'{d0}/{v}-*.json'):
        i=int(f.split('-')[-1].split('.')[0]); d=json.load(open(f))
        rows.setdefault(i,{})[v]={s:dom(d,s,k) for s,k in S}
rows={i:r for i,r in rows.items() if A in r and B in r}
for s,_ in S:
    for m in ('shared','fast','slow'):
        a=[r[A][s] for r in rows.values() if mode(r[A][s][0])==m]
        b=[r[B][s] for r in rows.values() if mode(r[B][s][0])==m]
        p=[r[B][s][1]/r[A][s][1] for r in rows.values() if mode(r[A][s][0])==m==mode(r[B][s][0])]
        if len(a)+len(b)>2: print(f"{s:6} {m:6} {A} n={len(a):2} ratio {st.median([x[1] for x in a]) if a else 0:.3f} ns {st.median([x[2] for x in a]) if a else 0:7.1f} | {B} n={len(b):2} ratio {st.median([x[1] for x in b]) if b else 0:.3f} ns {st.median([x[2] for x in b]) if b else 0:7.1f} | paired {B}/{A} n={len(p)} {st.median(p) if p else 0:.3f}, lower in {sum(x<1 for x in p)}")
