import json,sys
d=json.load(open(sys.argv[1]))
def strip(o):
    if isinstance(o,dict):
        o.pop('forwarded_extra_ns',None); o.pop('forwarded_bytes',None)
        for v in o.values(): strip(v)
    elif isinstance(o,list):
        for v in o: strip(v)
strip(d); json.dump(d,open(sys.argv[2],'w'),indent=1)
