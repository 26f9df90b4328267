import re,sys,glob,statistics as st
rows={}
for f in sorted(glob.glob('f16*-*.txt')):
    v='rot' if 'rot' in f else 'shuf'
    mode=None
    for line in open(f):
        m=re.match(r'mode (\d):',line)
        if m: mode=int(m.group(1)); continue
        m=re.match(r'\s+16\s+(\d+)\s+star m=(\d) \(#\d+[,)].*?direct\s+([\d.]+) µs\s+([\d.]+) µs',line)
        if m and mode==0:
            b,k,p,meas=int(m.group(1)),int(m.group(2)),float(m.group(3)),float(m.group(4))
            rows.setdefault((v,b,k),[]).append(meas)
for key in sorted(rows):
    x=rows[key]; print(key, len(x), 'median %.1f'%st.median(x), ' '.join('%.0f'%y for y in x))
