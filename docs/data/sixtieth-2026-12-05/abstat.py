import statistics as st, sys
rows=[l.split() for l in open(sys.argv[1])]
for mode,test in (('near',lambda r:float(r[1])<0.2),('far',lambda r:float(r[1])>=0.2)):
  for b in sys.argv[2:]:
    sel=[list(map(float,r[1:])) for r in rows if r[0]==b and len(r)==7 and test(r)]
    if sel: print(mode,b,len(sel),' '.join('%.2f'%st.median(c) for c in zip(*sel)), ' 4M p10/p90 %.0f/%.0f'%(sorted(x[5] for x in sel)[len(sel)//10], sorted(x[5] for x in sel)[len(sel)*9//10]))
