# raytpu's developer entry points. `make test` is the full suite: it
# installs Ray and JAX and builds etcd and kube-apiserver into the machine's
# raytpu cache (once per machine, shared by every clone; linked as .venv and
# .cache/kube/bin), and runs every Go test, the ones against a real local
# Ray cluster included, under the race detector; the control plane's build
# goes on beside the tests, and the kube tests wait for it.

GO ?= go
TEST_TIMEOUT ?= 75m

.PHONY: test setup test-under-load test-cpu-profile venv venv-llm kube tools vet unit bench fuzz dev-cluster-up dev-cluster-down

# go vet ./... has run every analyzer first, so go test runs none again.
# vet builds what it checks with -race, as the tests are built: on a fresh
# machine every dependency is then compiled once, for both, instead of
# once without the race detector for vet and again with it for go test.
# The setup steps and vet run side by side: on a fresh machine the Python
# install waits on the network while etcd, kube-apiserver and vet compile.
#
# go test runs at most two test binaries at once on a 2-core machine and
# starts them in the order it is given packages. The packages that run
# longest (KubeRay's pods, Ray Train's runs, the Ray backend, the CLI, the
# cross-checks, Serve LLM's vLLM run, ...) are named first, longest first,
# as measured in the suite, so they overlap each other and the short ones
# fill in behind them instead of starting last and running alone; ./...
# adds the rest once each. On a fresh machine ./kuberay first waits for the
# control plane's build while the second test binary and the build share
# the cores.
LONGEST_FIRST = ./kuberay ./examples/jaxtrain ./raybackend ./cmd/raytpu/internal/cli \
	./internal/crosscheck/datamodel ./internal/crosscheck ./serve/llm ./examples/batchinfer \
	./ray ./internal/testinfra/podrunner ./cmd/raytpu

# The control plane's build (scripts/setup-kube.sh) and the LLM
# virtualenv's install (scripts/setup-venv-llm.sh) start first and run
# beside everything else, the tests included: on a fresh machine they are
# the longest setup steps (the build about 19 minutes of a 2-core machine,
# most of it one go build that leaves the second core idle; the install
# 2.9 GB of downloads), and each serves one package's tests:
# internal/testinfra/kubetest waits for the build (the script's pid is in
# .cache/kube/building while it runs) and internal/testinfra/venvtest for
# the install (.cache/venv-llm/installing). The tests start once the
# project's virtualenv, tmux and vet are ready. A failed setup step stops
# the run; a failed build or install fails make test.
test:
	@./scripts/setup-kube.sh & kube=$$!; ./scripts/setup-venv-llm.sh & llm=$$!; \
	if ! $(MAKE) --no-print-directory -j2 venv tools vet; then kill $$kube $$llm 2>/dev/null; wait; exit 1; fi; \
	rc=0; $(GO) test -race -count=1 -vet=off -timeout $(TEST_TIMEOUT) $(LONGEST_FIRST) ./... || rc=$$?; \
	wait $$kube || { echo "make test: scripts/setup-kube.sh failed" >&2; rc=1; }; \
	wait $$llm || { echo "make test: scripts/setup-venv-llm.sh failed" >&2; rc=1; }; \
	exit $$rc

setup:
	$(MAKE) --no-print-directory -j4 venv venv-llm kube tools vet

# The same suite with two CPU-bound processes beside it for the whole run
# (LOAD=n for another count): the rehearsal of a busy machine.
test-under-load:
	./scripts/test-under-load.sh test

# The same suite, with a table of where its CPU went by kind of process
# (Ray node processes, Ray actors, Go's compiler, test binaries): the suite
# is CPU-bound, so this says what to cut.
test-cpu-profile:
	./scripts/cpu-profile.py -- $(MAKE) test

# Python side: Ray (dashboard, train, data, serve), JAX for CPU, pyarrow.
venv:
	./scripts/setup-venv.sh

# Ray 2.60 with vLLM 0.29.0 in a virtualenv of its own (.venv-llm), for
# serve/llm's cross-check with Ray Serve LLM's own LLMConfig and builder.
venv-llm:
	./scripts/setup-venv-llm.sh

# Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager)
# and Kueue's controller manager for the kuberay tests, built once into .cache/kube.
kube:
	./scripts/setup-kube.sh

# System programs some tests drive (tmux), from Debian's packages when missing.
tools:
	./scripts/setup-tools.sh

vet:
	$(GO) vet -race ./...

# The packages whose tests need nothing but Go (no Python, no Ray); tests
# named ...OnRealRay (cmd/raytpu/internal/cli's `raytpu top` on a live
# cluster) and ...OnKube (its `raytpu apply` on the test control plane) are
# left to `make test`.
UNIT_PKGS = . ./field ./field/fieldfile ./rayvocab ./runtimeenv ./tpu ./placement ./backend ./train ./data ./sim ./cmd/raytpu/internal/cli ./internal/testinfra/golden ./observe ./cmd/raytpu/internal/progress ./internal/tpuplugin ./internal/batchmodel ./internal/nilness ./docs/...
unit:
	$(GO) test -race -count=1 -skip 'OnRealRay$$|OnKube$$' $(UNIT_PKGS)

# Every fuzz target (every parser of user input: topologies, workload and
# cluster spec files, compiled plans, manifests, ...) for FUZZTIME each,
# one after the other; `make test` runs only their seed corpora. A failing
# input is saved under the package's testdata/fuzz and fails the run.
FUZZTIME ?= 30s
fuzz:
	@set -e; for f in $$(grep -rl --include='*_test.go' '^func Fuzz' . | sort); do \
		pkg=./$$(dirname $${f#./}); \
		for fn in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "== $$pkg $$fn ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./tpu ./placement ./sim ./serve ./data ./observe
