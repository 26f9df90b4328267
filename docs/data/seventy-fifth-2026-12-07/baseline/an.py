import json,glob,sys,statistics as st
# per size and mode class: medians over runs of herald/xcopy (lock-free), locked/xcopy, herald/locked
def cls(c):
    return 'near' if c<36 else 'fast' if c<120 else 'far'
rows={}
for f in sorted(glob.glob(sys.argv[1]+'/bcast_*.json')):
    try: j=json.load(open(f))
    except Exception: continue
    for size,v in j.items():
        for m in v.get('modes',[]):
            if m['slices']<3: continue
            k=(size,cls(m['raw_ns_center']))
            rows.setdefault(k,[]).append((m.get('herald_over_xcopy'),m.get('locked_over_xcopy'),m.get('herald_over_locked'),m.get('herald_over_flag')))
order=['48B','64B','4KiB','64KiB','256KiB','1MiB','4MiB']
for size in order:
    for c in ['near','fast','far']:
        r=rows.get((size,c))
        if not r: continue
        def med(i):
            xs=[x[i] for x in r if x[i] is not None]
            return '%.3f'%st.median(xs) if xs else '-'
        le=sum(1 for x in r if x[0] is not None and x[0]<=1.1)
        print(f"{size:7s} {c:5s} runs {len(r):2d}  herald/xcopy {med(0)} (<=1.1 in {le})  locked/xcopy {med(1)}  herald/locked {med(2)}  herald/flag {med(3)}")
