import json,sys,statistics as st
d=sys.argv[1]; n=int(sys.argv[2])
for size in ('48B','64B','4KiB'):
    rq=[];rh=[]
    for i in range(1,n+1):
        o=json.load(open(f'{d}/old-{i}.json'))[size]; w=json.load(open(f'{d}/new-{i}.json'))[size]
        rh.append(w['herald_ns']/o['herald_ns']); rq.append(w['herald_over_flag']/o['herald_over_flag'])
    print(size,'new/old herald_ns median %.3f (new faster in %d of %d pairs); over_flag new/old median %.3f (lower in %d)'%(st.median(rh),sum(x<1 for x in rh),n,st.median(rq),sum(x<1 for x in rq)))
