"""mp.py per mode: python3 mpm.py FILES; column per (file, mode) with the mode's raw hop."""
import re, sys, collections
tab = collections.defaultdict(dict); cols=[]
for f in sys.argv[1:]:
    mode=None
    for line in open(f):
        mm = re.match(r"^mode (\d+): raw hop (\d+) ns", line)
        if mm:
            mode=f"{f.split('/')[-1]}:{mm.group(2)}"; cols.append(mode); continue
        m = re.match(r"^\s+(\d+)\s+(\d+)\s+.*\s(posted|direct|stream)\s+.*\]\s+([\d.]+)\s", line)
        if not m or m.group(3) == "stream" or mode is None:
            continue
        k = (int(m.group(1)), int(m.group(2)), m.group(3))
        tab[k].setdefault(mode, m.group(4))
print("n bytes via", *cols)
for k in sorted(tab):
    print(*k, " ".join(tab[k].get(c, "-") for c in cols))
