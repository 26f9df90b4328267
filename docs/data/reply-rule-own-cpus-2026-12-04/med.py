import sys, statistics as st, collections
d=collections.defaultdict(list)
for f in sys.argv[1:]:
    for l in open(f):
        x=l.split()
        raw=float(x[7]); m='shared' if raw<35 else ('fast' if raw<120 else 'slow')
        d[(m,x[1])].append((float(x[3]),float(x[9])))
for k in sorted(d):
    v=d[k]; h=[a for a,_ in v]; q=sorted(b for _,b in v)
    print(f"{k[0]:6} {k[1]:8} n={len(v):2} herald {st.median(h):6.1f} ratio {st.median(q):.3f} ({q[0]:.3f}..{q[-1]:.3f})")
