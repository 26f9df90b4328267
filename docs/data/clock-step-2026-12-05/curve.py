# The posted 2-rank broadcast's measured median per size, mode 0 (python3 curve.py curve/*.json.gz).
import json,gzip,sys
for f in sys.argv[1:]:
  j=json.load(gzip.open(f))
  print(f,[(round(m['raw_hop_ns']),round(m['share'],2)) for m in j['modes']])
  print('   '+' '.join(f"{r['bytes']}:{r['measured_ns']['median']:.0f}" for r in j['rows'] if r['mode']==0 and r['transport']=='posted'))
