import json,sys,glob,statistics as st
d=sys.argv[1]
for size in ('48B','64B','4KiB'):
  for v in ('old','new'):
    rows=[]
    for f in sorted(glob.glob(f'{d}/{v}-*.json'), key=lambda f:int(f.split('-')[-1][:-5])):
        j=json.load(open(f))
        r=j[size]
        rows.append(r)
    def g(k): return [x[k]['median'] if isinstance(x[k],dict) else x[k] for x in rows]
    h=g('herald_ns'); fl=g('flag_ns'); rw=g('raw_ns'); q=g('herald_over_flag')
    print(size,v,'pairs',len(rows),'herald %.1f flag %.1f raw %.1f over_flag %.3f'%(st.median(h),st.median(fl),st.median(rw),st.median(q)),'|',' '.join('%.0f'%x for x in h),'| q',' '.join('%.2f'%x for x in q))
