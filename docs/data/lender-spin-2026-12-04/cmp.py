import json,sys,os
HERE=os.path.dirname(os.path.abspath(__file__))
a,b,idx=sys.argv[1],sys.argv[2],sys.argv[3].split(',')
rows={}
for v in (a,b):
    for i in idx:
        d=json.load(open(f'{HERE}/{v}-{i}.json'))
        for r in d['rows']:
            if r['mode']!=0 or r['samples']<10 or r['transport']!='direct': continue
            rows.setdefault((r['n'],r['bytes'],r['candidate']),{})[f'{v}{i}']=r['measured_ns']['median']/1e3
for k in sorted(rows):
    v=rows[k]
    if len(v)<2*len(idx): continue
    o=sum(v[a+i] for i in idx)/len(idx); n=sum(v[b+i] for i in idx)/len(idx)
    print(f"n{k[0]:>2} {k[1]:>8} {k[2]:20} {a} "+" ".join(f"{v[a+i]:7.1f}" for i in idx)+f" {b} "+" ".join(f"{v[b+i]:7.1f}" for i in idx)+f"  {b}/{a} {n/o:.3f}")
