import json,glob,sys,statistics as st
# usage: abstat.py DIR PREFIX_OLD PREFIX_NEW  (files PREFIX-N-I.json)
d,po,pn=sys.argv[1:4]
for pat in [po,pn]:
  for f in sorted(glob.glob(f'{d}/{pat}-*.json')):
    rows=json.load(open(f))['rows']
    wins=sum(1 for r in rows if r['ratio']<=1.0)
    worst=max(rows,key=lambda r:r['ratio'])
    print(f.split('/')[-1], f"{wins}/{len(rows)} at most the library's time; worst {worst['bytes']} B {worst['variant']} {worst['ratio']:.3f}")
