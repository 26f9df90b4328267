import json,sys,glob,collections
rows=collections.defaultdict(list)
for f in sorted(sys.argv[1:]):
    b=f.split('-')[-2]
    d=json.load(open(f))
    for r in d['rows']:
        rows[(r.get('collective',''),r['variant'],r['bytes'],b)].append((r['herald_us']['median'],r['mpi_us']['median']))
for k in sorted(rows):
    v=rows[k]
    print(*k, ' '.join(f"{h:.3f}/{m:.3f}" for h,m in v))
