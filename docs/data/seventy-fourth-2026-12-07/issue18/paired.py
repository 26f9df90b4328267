import json,glob,sys,statistics as st
import os
LO=float(os.environ.get("LO",50));HI=float(os.environ.get("HI",160))
def get(f,size):
    j=json.load(open(f))[size]
    ms=[m for m in j.get('modes',[]) if m['slices']>=3 and LO<=m["raw_ns_center"]<HI]
    if not ms: return None
    m=max(ms,key=lambda m:m['slices'])
    return m['herald_over_xcopy' if size not in ('48B','64B') else 'herald_over_flag']
for size in sys.argv[1].split(','):
    pr=[]
    for d in sys.argv[2:]:
        for f in sorted(glob.glob(d+'/base-*.json')):
            g=f.replace('base-','respin-')
            a=get(f,size); b=get(g,size)
            if a and b: pr.append(b/a)
    print(size,'pairs',len(pr),'paired respin/base median %.3f'%st.median(pr),'range %.3f-%.3f'%(min(pr),max(pr)), 'respin better in',sum(1 for x in pr if x<1))
