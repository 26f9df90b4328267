# Per profile: the calibration's duration, the one-line call's regimes (hop, share, slices),
# and how many runtime quantities between the PUs have a mode of each regime (the rest take
# another regime's value there). python3 coverage.py FILE...
import json, gzip, sys
for f in sys.argv[1:]:
    p = json.load(gzip.open(f) if f.endswith('.gz') else open(f))
    for l in p['levels']:
        r = l.get('runtime')
        if not r:
            continue
        ref = [(round(m['regime_hop_ns']), round(m['share'], 2), m['samples']) for m in r['one_line_ns']['modes'] if m.get('regime_hop_ns')]
        have = {h: 0 for h, _, _ in ref}
        total = 0
        for k, v in r.items():
            for d in (v if isinstance(v, list) else [v]):
                if not isinstance(d, dict) or 'modes' not in d:
                    continue
                hops = [m.get('regime_hop_ns') for m in d['modes']]
                if not hops or not all(hops):
                    continue
                total += 1
                for h in have:
                    have[h] += any(abs(round(x) - h) <= 1 for x in hops)
        print(f"{f}: {p['duration_s']:.0f} s, one line {ref}, quantities with the regime's mode {have} of {total}, unsettled {len(p['unsettled'])}")
