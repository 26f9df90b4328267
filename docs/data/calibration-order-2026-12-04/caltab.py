"""The pick's measured/predicted per size in each 2-rank fidelity run's largest mode, after a
calibration in a fixed (fix) or random (shuf) order; counts within 10 %.
Usage: python3 caltab.py (reads f-{fix,shuf}-N.json here)."""
import json, glob, re
SIZES = [8, 64, 512, 4096, 32768, 262144, 1048576, 4194304]
for v in ['fix', 'shuf']:
    small = large = ns = nl = whole = runs = 0
    files = sorted(glob.glob(f'f-{v}-*.json'), key=lambda f: int(re.findall(r'\d+', f)[-1]))
    for f in files:
        j = json.load(open(f))
        main = max(range(len(j['modes'])), key=lambda i: j['modes'][i]['share'])
        picks = {(r['bytes'], r['mode']): (r['pick'], r['pick_transport']) for r in j['regret']}
        mp = {row['bytes']: row['measured_over_predicted'] for row in j['rows']
              if row['mode'] == main and picks.get((row['bytes'], row['mode'])) == (row['candidate'], row['transport'])}
        ok = {b: abs(mp[b] - 1) <= 0.10 for b in SIZES}
        small += sum(ok[b] for b in SIZES[:6]); ns += 6
        large += sum(ok[b] for b in SIZES[6:]); nl += 2
        whole += all(ok.values()); runs += 1
        print('%-14s hop %3.0f ns %3.0f%%  ' % (f, j['modes'][main]['raw_hop_ns'], 100 * j['modes'][main]['share'])
              + ' '.join('%.2f%s' % (mp[b], '' if ok[b] else '*') for b in SIZES))
    print(f'{v}: 8 B-256 KiB within 10 %: {small}/{ns}; 1-4 MiB: {large}/{nl}; runs within at every size: {whole}/{runs}')
