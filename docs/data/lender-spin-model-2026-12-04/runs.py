# The gzipped `herald fidelity --json` runs of a comparison: `runs(dir, prefix, versions,
# count)` yields (version, index, run) for `{dir}/{prefix}-{version}-{index}.json.gz`, index
# 1..count, each version in turn.
import gzip,json
def runs(here, pre, versions, count):
  for v in versions:
    for i in range(1, count+1):
      yield v, i, json.load(gzip.open(f'{here}/{pre}-{v}-{i}.json.gz'))
