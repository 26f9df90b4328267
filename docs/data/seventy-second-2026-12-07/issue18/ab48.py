import json,sys,glob,statistics as st,collections
d=collections.defaultdict(list)
pairs=collections.defaultdict(dict)
for dirn in sys.argv[1:]:
    for f in sorted(glob.glob(dirn+'/*.json')):
        b,i=f.split('/')[-1][:-5].split('-')
        j=json.load(open(f))
        for size in ('48B','64B'):
            v=j[size]
            for m in v['modes']:
                hop=m['raw_ns_center']
                mode='near' if hop<50 else ('fast' if hop<160 else 'far')
                if m['slices']<3: continue
                d[(size,mode,b)].append((m['herald_over_flag'],m['herald_ns']))
                pairs[(size,mode,dirn,i)][b]=m['herald_over_flag']
for k in sorted(d):
    v=d[k]
    print(k,len(v),'h/f median %.3f range %.2f-%.2f herald ns median %.1f'%(st.median(x[0] for x in v),min(x[0] for x in v),max(x[0] for x in v),st.median(x[1] for x in v)), 'runs<=1.3: %d'%sum(x[0]<=1.3 for x in v))
for size in ('48B','64B'):
  for mode in ('fast','far','near'):
    r=[p['new']/p['base'] for k,p in pairs.items() if k[0]==size and k[1]==mode and 'new' in p and 'base' in p]
    if r: print(size,mode,'paired new/base median %.3f, new lower in %d of %d'%(st.median(r),sum(x<1 for x in r),len(r)))
