#!/usr/bin/env bash
# bench/batchinfer/vs-python.sh runs one batch-inference pipeline on one
# local Ray cluster posing as a v4 2x2x2 slice (the head and two hosts of 4
# TPU chips), twice per round, alternating which goes first: once compiled
# and submitted by raytpu (examples/batchinfer, --backend ray) and once
# written by hand in Python and submitted with Ray's JobSubmissionClient.
# Both read the same Parquet files, run the same JAX model
# (examples/batchinfer/model/linear.py) on an actor pool of 2 actors of
# {TPU: 4, CPU: 0}, in blocks of 1,000 rows and batches of 250, and write
# Parquet; raytpu then checks that every row was written once (untimed).
# One untimed run of each side warms the cluster up before the rounds.
# Each side's time runs from just before the submission to the job's end
# (both poll its status every 100 ms). It prints rows/s of every run, the
# medians and their ratio, and a timeline of every job (where its seconds
# went, from the dashboard's job info and the head's logs) with the median
# of every phase per side.
#
# Environment: ROWS (default 100000), FILES (8), ROUNDS (4), ADDRESS (use a
# running dashboard of a cluster posing as v4-16 instead of starting one),
# LOGS (with ADDRESS: the head's session logs directory, for the timeline).
# Needs the venv from scripts/setup-venv.sh.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py="$repo/.venv/bin/python"
[[ -x $py ]] || { echo "bench: $py missing: run scripts/setup-venv.sh" >&2; exit 1; }
ROWS=${ROWS:-100000}
FILES=${FILES:-8}
ROUNDS=${ROUNDS:-4}
export RAY_USAGE_STATS_ENABLED=0

work=$(mktemp -d /tmp/rtbench-bi.XXXXXX)
state="$work/cluster.json"
cleanup() {
	if [[ -f $state ]]; then "$work/raytpu" dev-cluster down --state "$state" >&2 || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$repo" && go build -o "$work/raytpu" ./cmd/raytpu && go build -o "$work/batchinfer" ./examples/batchinfer)
if [[ -z ${ADDRESS:-} ]]; then
	echo "bench: starting a local Ray cluster posing as v4-16..." >&2
	ADDRESS=$("$work/raytpu" dev-cluster up --cluster v4-16 --state "$state" | awk '/^dashboard:/ {print $2}')
	LOGS="$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["nodes"][0]["dir"])' "$state")/session_latest/logs"
fi
echo "bench: dashboard $ADDRESS; $(nproc) cores; $ROWS rows in $FILES files; $ROUNDS rounds" >&2

# The pipeline written by hand, as a Ray Data user would.
mkdir -p "$work/pyjob"
cp "$repo/examples/batchinfer/model/linear.py" "$work/pyjob/"
cat >"$work/pyjob/driver.py" <<'PY'
import sys

import ray
import ray.data

from linear import Linear

ray.init(address="auto")
src, dst = sys.argv[1], sys.argv[2]
(
    ray.data.read_parquet(src)
    .repartition(target_num_rows_per_block=1000)
    .map_batches(
        Linear,
        fn_constructor_kwargs={"w": 3.0, "b": 2.0},
        batch_size=250,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=2),
        num_cpus=0,
        resources={"TPU": 4},
        accelerator_type="TPU-V4",
        udf_modifying_row_count=False,
    )
    .write_parquet(dst)
)
PY

submit_py='
import json, sys, time
import pyarrow.parquet as pq
from ray.job_submission import JobSubmissionClient, JobStatus
addr, job, src, dst = sys.argv[1:5]
c = JobSubmissionClient(addr)
w0 = time.time()
t0 = time.perf_counter()
sid = c.submit_job(entrypoint="python driver.py %s %s" % (src, dst),
                   runtime_env={"working_dir": job, "env_vars": {"JAX_PLATFORMS": "cpu"}})
while not (st := c.get_job_status(sid)).is_terminal():
    time.sleep(0.1)
took = time.perf_counter() - t0
if st != JobStatus.SUCCEEDED:
    sys.exit("python job %s ended %s:\n%s" % (sid, st, c.get_job_logs(sid)[-3000:]))
rows = pq.read_table(dst).num_rows
print(json.dumps({"side": "python", "rows": rows, "seconds": round(took, 3), "rows_per_s": round(rows / took, 1),
                  "job_id": sid, "t0": round(w0, 3), "t1": round(w0 + took, 3)}))
'

# The timeline of every job: where its seconds went, from the dashboard's
# job info (start_time, end_time, driver pid), the job supervisor's log
# (entrypoint launched and exited), the driver's core-worker log (its
# ray.init) and the dataset's Ray Data log (execution start and end, the
# first and last Write task). Reads runs as JSON lines on stdin.
cat >"$work/timeline.py" <<'PY'
import glob, json, os, re, statistics, sys, urllib.request
from datetime import datetime

logs, addr = sys.argv[1], sys.argv[2]
runs = [json.loads(line) for line in sys.stdin if line.strip()]
STAMP = re.compile(r"^\[?(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})")
PHASES = ["submit", "launch", "init", "build", "1st-blk", "blocks", "finish", "exit", "end", "seen", "total"]


def when(line):
    m = STAMP.match(line)
    return datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp() if m else None


def stamps(path, needle):
    with open(path, errors="replace") as f:
        return [t for t in (when(line) for line in f if needle in line) if t]


def dataset_log(start, end):
    for path in sorted(glob.glob(os.path.join(logs, "ray-data", "ray-data-dataset_*.log"))):
        t = stamps(path, "Starting execution of Dataset")
        if t and start <= t[0] <= end:
            return path
    raise LookupError("no dataset started between %s and %s" % (start, end))


def marks(run):
    job = json.load(urllib.request.urlopen("%s/api/jobs/%s" % (addr, run["job_id"])))
    sup = os.path.join(logs, "jobs", "supervisor-%s.log" % job["submission_id"])
    launched, exited = stamps(sup, "Submitting job")[0], stamps(sup, "entrypoint command exited")[-1]
    driver = glob.glob(os.path.join(logs, "python-core-driver-%s*_%s.log" % (job["job_id"], job["driver_info"]["pid"])))
    ds = dataset_log(launched, exited)
    writes = stamps(ds, "operator Write")
    return [run["t0"], job["start_time"] / 1e3, launched, stamps(driver[0], "")[0],
            stamps(ds, "Starting execution")[0], writes[0], writes[-1],
            stamps(ds, "execution finished")[-1], exited, job["end_time"] / 1e3, run["t1"]]


print("%-7s %-27s" % ("side", "job") + "".join("%8s" % p for p in PHASES))
by_side = {}
for run in runs:
    try:
        m = marks(run)
    except Exception as exc:
        print("%-7s %-27s timeline unavailable: %r" % (run["side"], run["job_id"], exc))
        continue
    steps = [b - a for a, b in zip(m, m[1:])] + [m[-1] - m[0]]
    by_side.setdefault(run["side"], []).append(steps)
    print("%-7s %-27s" % (run["side"], run["job_id"]) + "".join("%8.2f" % s for s in steps))
for side, rows in by_side.items():
    print("%-7s %-27s" % (side, "median of %d" % len(rows)) + "".join("%8.2f" % statistics.median(c) for c in zip(*rows)))
print("""
Seconds from the previous mark: submit = the client's start to the job's
start_time (packaging, upload, POST); launch = to the entrypoint's launch
(runtime_env set up); init = to the driver's ray.init; build = to Ray Data's
execution start; 1st-blk = to the first Write task; blocks = to the last
Write task; finish = to the end of execution; exit = to the driver's exit;
end = to end_time; seen = to the client seeing the end.""")
PY

field() { "$py" -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
median() { "$py" -c 'import sys, statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

# The input, written once: ids 0..ROWS-1 and x = id over FILES files.
"$py" - "$work/input" "$ROWS" "$FILES" <<'PY'
import os, sys
import pyarrow as pa, pyarrow.parquet as pq
d, rows, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(d)
first = 0
for i in range(files):
    n = rows // files + (1 if i < rows % files else 0)
    ids = pa.array(range(first, first + n), pa.int64())
    pq.write_table(pa.table({"id": ids, "x": pa.array([float(v) for v in range(first, first + n)])}), "%s/part-%03d.parquet" % (d, i))
    first += n
PY

go_rates=() py_rates=()
run_go() { "$work/batchinfer" --backend ray --address "$ADDRESS" --input "$work/input" --dir "$work/round-$1" --rows "$ROWS" --poll 100ms --json --name "bench-$1"; }
run_py() { "$py" -c "$submit_py" "$ADDRESS" "$work/pyjob" "$work/input" "$work/round-$1/py-output"; }
# One untimed run of each side first: a cluster's first job pays for
# starting its first job supervisor and workers cold, which belongs to
# neither side (it would fall on whichever went first in round 1).
echo "bench: warm-up: one untimed run of each side" >&2
run_go 0 >/dev/null
run_py 0 >/dev/null
for r in $(seq 1 "$ROUNDS"); do
	# Alternate which side goes first, so neither profits from the order.
	if ((r % 2 == 1)); then g=$(run_go "$r"); p=$(run_py "$r"); else p=$(run_py "$r"); g=$(run_go "$r"); fi
	[[ $(field "$p" rows) == "$ROWS" ]] || { echo "bench: python side wrote $(field "$p" rows) rows, want $ROWS" >&2; exit 1; }
	echo "round $r  raytpu: $g"
	echo "round $r  python: $p"
	go_rates+=("$(field "$g" rows_per_s)") py_rates+=("$(field "$p" rows_per_s)")
	printf '%s\n%s\n' "$g" "$p" >>"$work/runs.jsonl"
done
gm=$(median "${go_rates[@]}") pm=$(median "${py_rates[@]}")
"$py" -c '
import sys
g, p = float(sys.argv[1]), float(sys.argv[2])
print("%-28s %12s" % ("median of %s rounds" % sys.argv[3], "rows/s"))
print("%-28s %12.0f" % ("raytpu (Go, data.Pipeline)", g))
print("%-28s %12.0f" % ("Python (JobSubmissionClient)", p))
print("raytpu/python = %.3f  (raytpu overhead %+.1f%%)" % (g / p, (p / g - 1) * 100))
' "$gm" "$pm" "$ROUNDS"
echo "machine: $(uptime)"
if [[ -n ${LOGS:-} ]]; then
	echo
	"$py" "$work/timeline.py" "$LOGS" "$ADDRESS" <"$work/runs.jsonl"
else
	echo "bench: no timeline: set LOGS to the head's session logs directory" >&2
fi
