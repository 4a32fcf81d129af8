#!/usr/bin/env bash
# test-under-load.sh runs `make test` (the README's test command) with
# CPU-bound processes beside it for the whole run, the way a busy 2-core
# machine or a shared CI runner treats the suite, and prints its time.
#
# Environment:
#   LOAD   number of CPU-bound processes (default 2)
#   MAKE   make program (default make)
# Arguments are passed to make, e.g. `scripts/test-under-load.sh test TEST_TIMEOUT=90m`.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
load=${LOAD:-2}
[[ $# -gt 0 ]] || set -- test

pids=()
stop_load() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap stop_load EXIT

for _ in $(seq "$load"); do
	# A busy loop in a shell of its own: pure CPU, no memory, no I/O.
	bash -c 'while :; do :; done' &
	pids+=($!)
done
echo "test-under-load: $load CPU-bound processes running (pids ${pids[*]})" >&2

start=$SECONDS
status=0
"${MAKE:-make}" -C "$repo" "$@" || status=$?
elapsed=$((SECONDS - start))
printf 'test-under-load: make %s exited %d after %dm%02ds with %d CPU-bound processes beside it\n' \
	"$*" "$status" $((elapsed / 60)) $((elapsed % 60)) "$load" >&2
exit "$status"
