import json,sys,collections,statistics as st
# per (n, bytes) dominant mode (mode 0 = dominant? use regime name), per run: pick, m/p, paired regret
runs=collections.defaultdict(dict)
for f in sys.argv[1:]:
    j=json.load(open(f)); run=f.split('-')[-1][:-5]
    dom=[i for i,m in enumerate(j['modes']) if m['regime']=='dominant']
    hop={i:m['raw_hop_ns'] for i,m in enumerate(j['modes'])}
    reg={i:m['regime'] for i,m in enumerate(j['modes'])}
    picks={(r['n'],r['bytes'],r['mode']):r for r in j['regret']}
    for row in j['rows']:
        k=(row['n'],row['bytes'],row['mode']); r=picks.get(k)
        if r and row['candidate']==r['pick'] and row['transport']==r['pick_transport']:
            runs[(row['n'],row['bytes'],reg[row['mode']])][run]=(r['pick'],r['pick_transport'],row['measured_over_predicted'],row['samples'],r['paired'],r['paired_slices'],r['paired_best'])
ok=collections.Counter(); tot=collections.Counter()
for k in sorted(runs):
    cells=[]
    for run in sorted(runs[k]):
        p,t,mp,s,pr,ps,pb=runs[k][run]
        cells.append('%s %s/%s m/p %.2f(%d) reg %s'%(run,p.replace(' m=','×'),t[:4],mp,s,('%.1f%%'%(100*pr)) if pr is not None else 'n/a'))
        if k[2]=='dominant' and pr is not None:
            tot[k[0]]+=1; ok[k[0]]+= pr<=0.05
    print(k[0],k[1],k[2],' | '.join(cells))
print('dominant-mode entries with paired regret <= 5%:',{n:f'{ok[n]}/{tot[n]}' for n in sorted(tot)})
