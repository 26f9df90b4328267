import json,sys,glob,os,statistics as st,collections
d=sys.argv[1]
jobs=sorted({int(f.split('/b')[-1].split('-')[0]) for f in glob.glob(d+'/b*-auto.json')})
lost=collections.defaultdict(list); ratios=collections.defaultdict(lambda: collections.defaultdict(list))
for j in jobs:
    for m in ('auto','adapt'):
        f=f'{d}/b{j}-{m}.json'
        try: r=json.load(open(f))['rows']
        except Exception as e: print('bad',f,e); continue
        L=[]
        for x in r:
            key=(x['collective'],x['bytes'],x['variant'])
            ratios[m][key].append(x['ratio'])
            if x['ratio']>1: L.append(f"{x['collective']} {x['bytes']} {x['variant']} {x['ratio']} [{x['algorithm'][:40]}]")
        lost[m].append(len(L))
        if L: print(j,m,len(L),'; '.join(L))
for m in ('auto','adapt'):
    print(m,'jobs',len(lost[m]),'rows lost total',sum(lost[m]),'jobs with a loss',sum(1 for x in lost[m] if x))
print('median ratio per row (auto | adapt), bytes>=32K:')
for key in sorted(ratios['auto']):
    if key[1]>=32768:
        a=ratios['auto'][key]; b=ratios['adapt'][key]
        print(key, 'auto %.3f max %.3f | adapt %.3f max %.3f'%(st.median(a),max(a),st.median(b),max(b)))
