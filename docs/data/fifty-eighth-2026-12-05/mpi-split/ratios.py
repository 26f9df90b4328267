"""Per build and state, the median over runs of a partial-line size over the whole-line size
below it (herald's median µs per broadcast in each run). Run from this directory."""
import gzip, json, statistics as st

def load(f):
    d = json.load(gzip.open(f))
    return {(r["bytes"], r["variant"]): r["herald_us"]["median"] * 1e3 for r in d["rows"]}

res = {}
for batch, runs in [("batch1", 8), ("batch2", 10)]:
    for i in range(1, runs + 1):
        for build in ["old", "new"]:
            d = load(f"{batch}/{build}-{i}.json.gz")
            # The host's state per run: herald's own 560 B ping-pong (fast 140-175 ns, slow 480-525).
            state = "fast" if d[(560, "pingpong")] < 300 else "slow"
            for v in ["pingpong", "loop", "barrier"]:
                for part, whole in [(576, 560), (512, 496), (1000, 1072)]:
                    res.setdefault((build, state, v, part, whole), []).append(d[(part, v)] / d[(whole, v)])
for k in sorted(res):
    r = res[k]
    print(k, len(r), "%.3f" % st.median(r), "[%.2f-%.2f]" % (min(r), max(r)))
