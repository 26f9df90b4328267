"""Paired regret and the pick's m/p per (n, bytes), dominant mode, rotating against shuffled order.
Usage: python3 gridtab.py  (reads {shuf,rot}-n{N}-{run}.json here)"""
import json, glob, collections, re
res = collections.defaultdict(dict)  # (v, n, bytes) -> run -> (pick, paired, regret, m/p, paired_best)
for f in sorted(glob.glob('*-n*-*.json')):
    mm = re.match(r'(\w+)-n(\d+)-(\d+)\.json', f)
    if not mm: continue
    v, n, run = mm.groups()
    j = json.load(open(f))
    # The largest mode predicted in the dominant regime (a profile without a slow regime
    # predicts the host's slow mode in the dominant one too).
    dom = [max((i for i, m in enumerate(j['modes']) if m['regime'] == 'dominant'),
               key=lambda i: j['modes'][i]['share'])]
    hop = {i: m['raw_hop_ns'] for i, m in enumerate(j['modes'])}
    share = {i: m['share'] for i, m in enumerate(j['modes'])}
    for r in j['regret']:
        if r['mode'] not in dom:
            continue
        mp = [row['measured_over_predicted'] for row in j['rows']
              if (row['n'], row['bytes'], row['mode']) == (r['n'], r['bytes'], r['mode'])
              and row['candidate'] == r['pick'] and row['transport'] == r['pick_transport']]
        res[(v, r['n'], r['bytes'])][run] = (r['pick'] + '/' + r['pick_transport'][:4], r['paired'], r['regret'],
                                           mp[0] if mp else None, r['paired_best'] + '/' + r['paired_best_transport'][:4],
                                           hop[r['mode']], share[r['mode']])
ok = collections.Counter(); tot = collections.Counter()
for k in sorted(res, key=lambda k: (k[1], k[2], k[0])):
    cells = []
    for run in sorted(res[k]):
        p, pr, rg, mp, pb, h, sh = res[k][run]
        cells.append('%s %s reg %s paired %s m/p %s' % (run, p, '%.1f%%' % (100 * rg), '%.1f%%' % (100 * pr) if pr is not None else 'n/a',
                                                        '%.2f' % mp if mp else '-'))
        if pr is not None:
            tot[(k[0], k[1])] += 1; ok[(k[0], k[1])] += pr <= 0.05
    print('%-4s %2d %7d  ' % k + ' | '.join(cells))
print('dominant-mode entries with paired regret <= 5%:')
for key in sorted(tot):
    print(' ', key, '%d/%d' % (ok[key], tot[key]))
