"""Prints what jax.profiler.ProfileData reads from an .xplane.pb file, as
JSON: per plane its name, line count, event count and the count of events
named argv[2]."""
import json
import sys

from jax.profiler import ProfileData

p = ProfileData.from_file(sys.argv[1])
out = []
for pl in p.planes:
    events = [e for line in pl.lines for e in line.events]
    out.append({
        "name": pl.name,
        "lines": len(list(pl.lines)),
        "events": len(events),
        "named": sum(1 for e in events if e.name == sys.argv[2]),
    })
print(json.dumps(out))
