# raytpu's developer entry points. `make test` is the full suite: it
# installs Ray and JAX and builds etcd and kube-apiserver into the machine's
# raytpu cache (once per machine, shared by every clone; linked as .venv and
# .cache/kube/bin), then runs every Go test, the ones against a real local
# Ray cluster included, under the race detector.

GO ?= go
TEST_TIMEOUT ?= 75m

.PHONY: test test-under-load venv kube tools vet unit bench dev-cluster-up dev-cluster-down

test: venv kube tools vet
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

# The same suite with two CPU-bound processes beside it for the whole run
# (LOAD=n for another count): the rehearsal of a busy machine.
test-under-load:
	./scripts/test-under-load.sh test

# Python side: Ray (dashboard, train, data, serve), JAX for CPU, pyarrow.
venv:
	./scripts/setup-venv.sh

# Kubernetes control plane (etcd, kube-apiserver) for the kuberay tests, built once into .cache/kube.
kube:
	./scripts/setup-kube.sh

# System programs some tests drive (tmux), from Debian's packages when missing.
tools:
	./scripts/setup-tools.sh

vet:
	$(GO) vet ./...

# The packages whose tests need nothing but Go (no Python, no Ray); tests
# named ...OnRealRay (internal/cli's `raytpu top` on a live cluster) are left
# to `make test`.
UNIT_PKGS = . ./field ./field/fieldfile ./rayvocab ./runtimeenv ./tpu ./placement ./backend ./train ./data ./sim ./internal/cli ./internal/launcher ./internal/golden ./observe ./internal/progress ./internal/tpuplugin
unit:
	$(GO) test -race -count=1 -skip 'OnRealRay$$' $(UNIT_PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./tpu ./placement ./sim ./serve ./data ./observe
