import json,glob,sys,statistics as st,collections
d=sys.argv[1] if len(sys.argv)>1 else '.'
res=collections.defaultdict(list)
for f in sorted(glob.glob(d+'/*.json')):
    b=f.split('/')[-1].split('-')[0]
    if b not in ('base','respin'): continue
    j=json.load(open(f))
    for size,v in j.items():
        for m in v.get('modes',[]):
            if m['slices']<3: continue
            h=m['raw_ns_center']; mode='near' if h<50 else ('fast' if h<160 else 'far')
            key='herald_over_xcopy' if size not in ('48B','64B') else 'herald_over_flag'
            res[(size,mode,b)].append(m[key])
sizes=['48B','64B','4KiB','64KiB','256KiB','1MiB','4MiB']
for s in sizes:
    for mode in ['near','fast','far']:
        a=res.get((s,mode,'base'),[]); r=res.get((s,mode,'respin'),[])
        if a or r:
            f=lambda x: f"{st.median(x):.3f} (n={len(x)})" if x else '-'
            print(f"{s:7} {mode:5} base {f(a):16} respin {f(r)}")
