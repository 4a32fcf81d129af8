#!/usr/bin/env bash
# bench/llmstreambench/vs-python.sh streams chat completions from one Serve
# LLM application (serve/llm's tiny test model on vLLM's CPU engine, the
# application of serve/llm/serving_test.go's tinyApp) with raytpu's Go
# OpenAI client (serve/client: NewOpenAI + ChatCompletionStream) and with
# the `openai` Python package, and prints side by side: client CPU seconds
# (user + system, getrusage of the client process, counted around the
# streaming loop only: after imports, after the client is made and after
# one untimed request) per 1,000 completion tokens, completion tokens/s,
# and chunks received, with the ratio Python/Go.
#
# Every request asks for MAX_TOKENS tokens at temperature 0, with
# stream_options.include_usage; the tiny model never picks its
# end-of-sequence token greedily, so each answer is MAX_TOKENS long, and
# every side fails unless each answer's usage says so, it ended with
# finish_reason "length" and [DONE]. Serve LLM batches a stream every
# 50 ms (stream_batching_interval_ms), but a batch is one write of several
# "data:" events (ray.llm's _openai_json_wrapper), so the clients still
# parse one chunk per engine output: about one per token, plus the role
# and usage chunks (202 per 200 tokens when vLLM keeps up; fewer when it
# merges outputs under load). Both clients read the same stream from the
# same server.
#
# Sides: go (client.NewOpenAI + ChatCompletionStream as a user writes
# them, http.DefaultClient); go1 (the same at GOMAXPROCS=1, a program's
# choice; the library never sets it); python (openai.OpenAI(...)
# .chat.completions.create(stream=True), iterating the chunks; threads
# when C > 1); python-async (openai.AsyncOpenAI, `async for`; C
# coroutines).
#
# Environment: N (timed requests per side, default 8), C (concurrent
# streams, 1), MAX_TOKENS (200; the model's context is 512), ROUNDS (3;
# each runs every side once, in turn, so that no side always meets a
# warmer server; the table shows medians and the min over rounds), SIDES
# (a subset, space separated, default all), ADDRESS (use a running
# dashboard instead of starting a cluster; it must run the LLM venv's
# Ray), PROFILE (a file: after the rounds, one more go run, not in the
# table, writes its CPU profile of the timed streams there). Needs the LLM venv from scripts/setup-venv-llm.sh (make
# setup), with the `openai` package.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py="$repo/.venv-llm/bin/python"
[[ -x $py ]] || { echo "bench: $py missing: run scripts/setup-venv-llm.sh (or make setup)" >&2; exit 1; }
"$py" -c 'import openai' 2>/dev/null || { echo "bench: the LLM venv has no openai package (internal/pyenv/requirements-llm.txt pins it): run scripts/setup-venv-llm.sh" >&2; exit 1; }
N=${N:-8}
C=${C:-1}
MAX_TOKENS=${MAX_TOKENS:-200}
ROUNDS=${ROUNDS:-3}
SIDES=${SIDES:-go go1 python python-async}
export RAY_USAGE_STATS_ENABLED=0

work=$(mktemp -d /tmp/rtllmstream.XXXXXX)
bin="$work/llmstreambench"
state="$work/cluster.json"
cleanup() {
	if [[ -f $state ]]; then "$bin" -stop-cluster "$state" || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$repo" && go build -o "$bin" ./bench/llmstreambench)
echo "bench: making the tiny model..." >&2
"$py" "$repo/serve/llm/testdata/make_tiny_model.py" "$work/tiny" 2>"$work/model.log" >&2 || { cat "$work/model.log" >&2; exit 1; }
if [[ -z ${ADDRESS:-} ]]; then
	echo "bench: starting a local Ray cluster..." >&2
	ADDRESS=$(cd "$repo" && "$bin" -start-cluster "$state" -venv "$(readlink -f "$repo/.venv-llm")")
fi
echo "bench: dashboard $ADDRESS; deploying the tiny model on vLLM's CPU engine..." >&2
BASE=$("$bin" -address "$ADDRESS" -deploy -model "$work/tiny")
echo "bench: OpenAI API $BASE/v1; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); N=$N C=$C MAX_TOKENS=$MAX_TOKENS" >&2

python_client='
import asyncio, json, resource, sys, threading, time
import openai
mode, base, n, c, max_tokens = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
kw = dict(model="tiny", messages=[{"role": "user", "content": "Hello, how are you today?"}],
          max_tokens=max_tokens, temperature=0, stream=True, stream_options={"include_usage": True})
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

class Answer:
    def __init__(self):
        self.chunks = self.content_chunks = 0
        self.parts, self.usage, self.finish = [], None, None
    def add(self, chunk):
        self.chunks += 1
        if chunk.usage is not None:
            self.usage = chunk.usage
        for ch in chunk.choices:
            if ch.delta.content:
                self.content_chunks += 1
                self.parts.append(ch.delta.content)
            if ch.finish_reason:
                self.finish = ch.finish_reason
    def check(self):
        text = "".join(self.parts)
        if self.usage is None or self.usage.completion_tokens != max_tokens or self.finish != "length" or not text:
            raise RuntimeError("incomplete answer: usage %r, finish %r, %d chars in %d chunks; want %d completion tokens ended by length"
                               % (self.usage, self.finish, len(text), self.chunks, max_tokens))
        return self

def sync_main():
    client = openai.OpenAI(base_url=base + "/v1", api_key="none")
    def one():
        a = Answer()
        for chunk in client.chat.completions.create(**kw):
            a.add(chunk)
        return a.check()
    def run(total):
        lock, left, out = threading.Lock(), [total], []
        def worker():
            while True:
                with lock:
                    if left[0] <= 0:
                        return
                    left[0] -= 1
                a = one()
                with lock:
                    out.append(a)
        if c == 1:
            worker()
        else:
            ts = [threading.Thread(target=worker) for _ in range(c)]
            for t in ts: t.start()
            for t in ts: t.join()
        if len(out) != total:
            raise RuntimeError("%d of %d requests answered" % (len(out), total))
        return out
    run(1)
    c0, t0 = cpu(), time.perf_counter()
    out = run(n)
    return time.perf_counter() - t0, cpu() - c0, out

async def async_main():
    client = openai.AsyncOpenAI(base_url=base + "/v1", api_key="none")
    async def one():
        a = Answer()
        async for chunk in await client.chat.completions.create(**kw):
            a.add(chunk)
        return a.check()
    async def run(total):
        left, out = [total], []
        async def worker():
            while left[0] > 0:
                left[0] -= 1
                out.append(await one())
        await asyncio.gather(*[worker() for _ in range(c)])
        return out
    await run(1)
    c0, t0 = cpu(), time.perf_counter()
    out = await run(n)
    res = time.perf_counter() - t0, cpu() - c0, out
    await client.close()
    return res

wall, used, out = asyncio.run(async_main()) if mode == "async" else sync_main()
tokens = sum(a.usage.completion_tokens for a in out)
print(json.dumps({"side": "python" if mode == "sync" else "python-async", "openai": openai.__version__,
                  "requests": n, "concurrency": c, "max_tokens": max_tokens, "completion_tokens": tokens,
                  "chunks": sum(a.chunks for a in out), "content_chunks": sum(a.content_chunks for a in out),
                  "seconds": wall, "tokens_per_s": tokens / wall,
                  "cpu_seconds": used, "cpu_s_per_1000_tokens": used / tokens * 1000}))
'
pyside() { "$py" -c "$python_client" "$1" "$BASE" "$N" "$C" "$MAX_TOKENS"; }

runs="$work/runs.jsonl"
: >"$runs"
run_side() { # side
	case $1 in
	go) "$bin" -base "$BASE" -n "$N" -c "$C" -max-tokens "$MAX_TOKENS" ;;
	go1) GOMAXPROCS=1 "$bin" -base "$BASE" -n "$N" -c "$C" -max-tokens "$MAX_TOKENS" -side go-gomaxprocs1 ;;
	python) pyside sync ;;
	python-async) pyside async ;;
	*) echo "bench: SIDES: unknown side $1 (want go go1 python python-async)" >&2; return 1 ;;
	esac
}
for r in $(seq 1 "$ROUNDS"); do
	for s in $SIDES; do
		j=$(run_side "$s")
		printf 'round %d %-14s %s\n' "$r" "$s:" "$j"
		echo "$j" >>"$runs"
	done
done
if [[ -n ${PROFILE:-} ]]; then
	echo "profile run (not in the table): $("$bin" -base "$BASE" -n "$N" -c "$C" -max-tokens "$MAX_TOKENS" -side go-profiled -cpuprofile "$PROFILE")"
fi

echo
echo "== streamed chat completions of the tiny model (vLLM CPU) through Serve's HTTP proxy: $N requests of $MAX_TOKENS tokens at concurrency $C, $ROUNDS rounds; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$py" - "$runs" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sides = list(dict.fromkeys(r["side"] for r in rows))
by = {s: [r for r in rows if r["side"] == s] for s in sides}
med = lambda s, k: statistics.median(r[k] for r in by[s])
low = lambda s, k: min(r[k] for r in by[s])
print("%-16s %30s %14s %16s" % ("client", "CPU s/1000 tokens median (min)", "tokens/s med", "chunks/request"))
for s in sides:
    print("%-16s %22.4f (%.4f) %14.0f %16.1f" % (s, med(s, "cpu_s_per_1000_tokens"), low(s, "cpu_s_per_1000_tokens"),
                                                 med(s, "tokens_per_s"), med(s, "chunks") / by[s][0]["requests"]))
print()
for g in [s for s in sides if s.startswith("go")]:
    for p in [s for s in sides if s.startswith("python")]:
        print("%-16s vs %-13s CPU per token python/go %.2f (medians)   tokens/s go/python %.2f" % (
            g, p, med(p, "cpu_s_per_1000_tokens") / med(g, "cpu_s_per_1000_tokens"), med(g, "tokens_per_s") / med(p, "tokens_per_s")))
print("goal: Go's CPU per token at most half of Python's (python/go >= 2.00)")
PY
