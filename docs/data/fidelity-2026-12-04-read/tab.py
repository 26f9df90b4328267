import sys, re, collections, statistics as st
meas = collections.defaultdict(list); pred = {}; hops=[]
lo = float(sys.argv[2]) if len(sys.argv)>2 else 0; hi = float(sys.argv[3]) if len(sys.argv)>3 else 1e9
for line in open(sys.argv[1]):
    m = re.match(r'meas \d+ (\w+) n=\s*(\d+) b=\s*(\d+) hop (\d+) (\d+)', line)
    if m:
        k=(m[1],int(m[2]),int(m[3])); hop=float(m[4]); hops.append(hop)
        if lo <= hop <= hi: meas[k].append(float(m[5]))
        continue
    m = re.match(r'pred (\w+) n=\s*(\d+) b=\s*(\d+) (\d+)$', line.strip())
    if m: pred[(m[1],int(m[2]),int(m[3]))]=float(m[4])
hs=sorted(hops); print('hops median', st.median(hs), 'p10', hs[len(hs)//10], 'p90', hs[9*len(hs)//10])
for k in sorted(meas):
    m = st.median(meas[k]); p = pred.get(k)
    print(f"{k[0]} n={k[1]:2d} b={k[2]:6d} cnt {len(meas[k]):3d} meas {m:8.0f}" + (f" pred {p:8.0f} m/p {m/p:5.2f}" if p else ''))
