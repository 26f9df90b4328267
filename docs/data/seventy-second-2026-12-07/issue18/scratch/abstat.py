import sys,collections,statistics as st
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    p=l.split()
    b=p[0]; f=float(p[2]); h=float(p[6]); ba=float(p[4])
    mode='near' if f<55 else ('fast' if f<160 else 'far')
    d[(mode,b)].append((h/f,h,f,ba))
for k in sorted(d):
    v=d[k]
    print(k, len(v), 'h/f med %.2f'%st.median(x[0] for x in v), 'h %.1f f %.1f bare %.1f'%(st.median(x[1] for x in v),st.median(x[2] for x in v),st.median(x[3] for x in v)))
