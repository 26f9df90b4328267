import json,sys,statistics as st,collections
d=sys.argv[1]; J=int(sys.argv[2])
R=collections.defaultdict(list); lost=collections.Counter(); runs=collections.Counter()
for j in range(1,J+1):
    for m in ('auto','adapt'):
        r=json.load(open(f'{d}/b{j}-{m}.json'))['rows']
        pp=[x for x in r if x['collective']=='bcast' and x['bytes']==262144 and x['variant']=='pingpong'][0]['mpi_us']['median']
        mode='slow' if pp>100 else 'fast'
        runs[(m,mode)]+=1
        for x in r:
            R[(m,mode,x['collective'],x['bytes'],x['variant'])].append(x['ratio'])
            if x['ratio']>1: lost[(m,mode)]+=1
print('runs',dict(runs)); print('rows lost',dict(lost))
for mode in ('fast','slow'):
  for c in ('bcast',):
    for b in (262144,1048576,4194304):
      for v in ('loop','pingpong','barrier'):
        a=R[('auto',mode,c,b,v)]; p=R[('adapt',mode,c,b,v)]
        if a and p: print(mode,c,b//1024,v,'auto med %.2f max %.2f (%d) | adapt med %.2f max %.2f (%d)'%(st.median(a),max(a),len(a),st.median(p),max(p),len(p)))
