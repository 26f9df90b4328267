# python3 ab5stat.py FILE BUILD...: per mode (both hops far, > 120 ns; both near, <= 120 ns;
# runs whose hops disagree left out), per build: runs, medians, and the 4 MiB values.
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
for mode in ("near", "far"):
    for b in sys.argv[2:]:
        sel = [list(map(float, r[3:])) for r in rows if r[0] == b and len(r) == 9
               and all((float(h) > 120) == (mode == "far") for h in r[1:3])]
        if sel:
            print(mode, b, len(sel), " ".join("%.2f" % st.median(c) for c in zip(*sel)),
                  " 4M:", " ".join("%.0f" % x[5] for x in sel))
