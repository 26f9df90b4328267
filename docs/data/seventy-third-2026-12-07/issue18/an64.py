import json,glob,sys,statistics as st
for size in sys.argv[1].split(','):
  for b in ('base','respin'):
    h=[];x=[];r=[]
    for d in sys.argv[2:]:
        for f in sorted(glob.glob(d+f'/{b}-*.json')):
            j=json.load(open(f))[size]
            for m in j.get('modes',[]):
                if m['slices']>=3 and 50<=m['raw_ns_center']<160:
                    r.append(m['herald_over_xcopy']); h.append(m['herald_ns'])
    print(size,b,'fast: runs',len(r),'ratio median %.3f'%st.median(r),'range %.3f-%.3f'%(min(r),max(r)),'herald_ns median %.0f'%st.median(h), 'runs<=1.1:',sum(1 for v in r if v<=1.1))
