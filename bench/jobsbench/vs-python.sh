#!/usr/bin/env bash
# bench/jobsbench/vs-python.sh runs raytpu's Go dashboard client and Ray's Python
# JobSubmissionClient side by side against one local Ray cluster and prints
# both numbers and their ratio:
#   1. submit round trip and submit-to-RUNNING (N sequential "echo hi" jobs)
#   2. packaging + upload of a working_dir of FILES files of BYTES bytes
#      (default 10,000 files, 200 MB), and of a smaller one (80 MB) that fits
#      the dashboard's 100 MiB upload limit without compression.
#
# Environment: N (default 10), FILES (10000), BYTES (20000), SMALL_BYTES
# (8000), ADDRESS (use a running dashboard instead of starting a cluster).
# Needs the venv from scripts/setup-venv.sh.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py="$repo/.venv/bin/python"
[[ -x $py ]] || { echo "bench: $py missing: run scripts/setup-venv.sh" >&2; exit 1; }
N=${N:-10}
FILES=${FILES:-10000}
BYTES=${BYTES:-20000}
SMALL_BYTES=${SMALL_BYTES:-8000}
export RAY_USAGE_STATS_ENABLED=0

work=$(mktemp -d /tmp/rtbench.XXXXXX)
bin="$work/jobsbench"
state="$work/cluster.json"
cleanup() {
	if [[ -f $state ]]; then "$bin" -stop-cluster "$state" || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$repo" && go build -o "$bin" ./bench/jobsbench)
if [[ -z ${ADDRESS:-} ]]; then
	echo "bench: starting a local Ray cluster..." >&2
	ADDRESS=$(cd "$repo" && "$bin" -start-cluster "$state")
fi
echo "bench: dashboard $ADDRESS; $(nproc) cores" >&2

pyside() { (cd "$work" && "$py" -c "$1" "${@:2}"); }

submit_py='
import json, sys, time
from ray.job_submission import JobSubmissionClient, JobStatus
addr, n = sys.argv[1], int(sys.argv[2])
c = JobSubmissionClient(addr)
w = c.submit_job(entrypoint="echo warm")  # untimed, as on the Go side
while not c.get_job_status(w).is_terminal():
    time.sleep(0.1)
rtt, run = [], []
for _ in range(n):
    t0 = time.perf_counter()
    sid = c.submit_job(entrypoint="echo hi")
    rtt.append(time.perf_counter() - t0)
    while c.get_job_status(sid) == JobStatus.PENDING:
        time.sleep(0.02)
    run.append(time.perf_counter() - t0)
    while not c.get_job_status(sid).is_terminal():
        time.sleep(0.1)
def st(xs):
    xs = sorted(xs)
    return {"median_ms": xs[len(xs)//2]*1000, "mean_ms": sum(xs)/len(xs)*1000, "min_ms": xs[0]*1000, "max_ms": xs[-1]*1000}
print(json.dumps({"side": "python", "submit": st(rtt), "submit_to_running": st(run)}))
'

upload_py='
import json, sys, time
from ray.job_submission import JobSubmissionClient
addr, d = sys.argv[1], sys.argv[2]
c = JobSubmissionClient(addr)
env = {"working_dir": d}
t0 = time.perf_counter()
err = None
try:
    c._upload_working_dir_if_needed(env)
except Exception as e:
    err = str(e).strip().splitlines()[-1][:300]
took = time.perf_counter() - t0
out = {"side": "python", "seconds": took, "uri": env.get("working_dir"), "error": err}
if err:
    # Time what does work: hashing and zipping (get_uri_for_directory + create_package).
    import tempfile, os
    from pathlib import Path
    from ray._private import ray_constants
    from ray._private.runtime_env.packaging import get_uri_for_directory, create_package
    ex = ray_constants.get_runtime_env_default_excludes()
    with tempfile.TemporaryDirectory() as td:
        t0 = time.perf_counter()
        uri = get_uri_for_directory(d, include_gitignore=True, excludes=ex)
        create_package(d, Path(td) / "p.zip", include_gitignore=True, excludes=ex)
        data = (Path(td) / "p.zip").read_bytes()
        out["package_only_seconds"] = time.perf_counter() - t0
        out["zip_bytes"] = len(data)
        out["uri"] = uri
print(json.dumps(out))
'

ratio() { "$py" -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(f"{a/b:.2f}x" if b else "n/a")' "$1" "$2"; }
field() { "$py" -c 'import json, sys; d = json.loads(sys.argv[1])
for k in sys.argv[2].split("."): d = d.get(k) if isinstance(d, dict) else None
print("" if d is None else d)' "$1" "$2"; }

echo "== 1. job submission, $N sequential jobs (median)"
go_sub=$("$bin" -address "$ADDRESS" -submit "$N")
py_sub=$(pyside "$submit_py" "$ADDRESS" "$N")
echo "go:     $go_sub"
echo "python: $py_sub"
for m in submit submit_to_running; do
	g=$(field "$go_sub" "$m.median_ms"); p=$(field "$py_sub" "$m.median_ms")
	printf '%-18s go %8.1f ms   python %8.1f ms   python/go %s\n' "$m" "$g" "$p" "$(ratio "$p" "$g")"
done

upload_case() { # name files bytes
	local name=$1 files=$2 bytes=$3 dir="$work/$1"
	"$bin" -gen "$dir" -files "$files" -bytes "$bytes"
	local mb; mb=$(du -sm --apparent-size "$dir" | cut -f1)
	echo "== 2. working_dir $name: $files files, ${mb} MB"
	# A fresh nonce before each side, so both really upload.
	head -c 32 /dev/urandom | od -An -tx1 >"$dir/nonce.txt"
	local g; g=$("$bin" -address "$ADDRESS" -upload "$dir")
	head -c 32 /dev/urandom | od -An -tx1 >"$dir/nonce.txt"
	local gs; gs=$("$bin" -address "$ADDRESS" -upload "$dir" -store)
	head -c 32 /dev/urandom | od -An -tx1 >"$dir/nonce.txt"
	local p; p=$(pyside "$upload_py" "$ADDRESS" "$dir")
	echo "go (deflate): $g"
	echo "go (stored):  $gs"
	echo "python:       $p"
	local gt gst pt pe; gt=$(field "$g" seconds); gst=$(field "$gs" seconds); pt=$(field "$p" seconds); pe=$(field "$p" error)
	if [[ -z $pe ]]; then
		printf 'package+upload     go %.2f s (stored %.2f s)   python %.2f s   python/go %s (stored: %s)\n' "$gt" "$gst" "$pt" "$(ratio "$pt" "$gt")" "$(ratio "$pt" "$gst")"
	else
		local pp; pp=$(field "$p" package_only_seconds)
		printf 'package+upload     go %.2f s   python FAILED: %s\n' "$gt" "$pe"
		printf 'hash+zip only      python %.2f s vs go package+upload %.2f s   python/go %s\n' "$pp" "$gt" "$(ratio "$pp" "$gt")"
	fi
}
upload_case big "$FILES" "$BYTES"
upload_case small "$FILES" "$SMALL_BYTES"
