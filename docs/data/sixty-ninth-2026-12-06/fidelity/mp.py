"""Per (ranks, bytes) the best-ranked posted and single-copy candidate's measured/predicted
ratio in `herald fidelity` text reports, one column per file: python3 mp.py FILES..."""
import re, sys, collections
tab = collections.defaultdict(dict)
for f in sys.argv[1:]:
    for line in open(f):
        m = re.match(r"^\s+(\d+)\s+(\d+)\s+.*\s(posted|direct|stream)\s+.*\]\s+([\d.]+)\s", line)
        if not m or m.group(3) == "stream":
            continue
        k = (int(m.group(1)), int(m.group(2)), m.group(3))
        tab[k].setdefault(f, m.group(4))
for k in sorted(tab):
    print(*k, " ".join(tab[k].get(f, "-") for f in sys.argv[1:]))
