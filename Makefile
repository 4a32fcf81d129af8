# raytpu's developer entry points. `make test` is the full suite: it
# installs Ray and JAX into .venv (once), then runs every Go test, the ones
# against a real local Ray cluster included, under the race detector.

GO ?= go
TEST_TIMEOUT ?= 75m

.PHONY: test venv kube tools vet unit bench dev-cluster-up dev-cluster-down

test: venv kube tools vet
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

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
UNIT_PKGS = . ./field ./rayvocab ./runtimeenv ./tpu ./placement ./backend ./train ./data ./sim ./internal/cli ./internal/launcher ./internal/golden ./observe ./internal/progress ./internal/tpuplugin
unit:
	$(GO) test -race -count=1 -skip 'OnRealRay$$' $(UNIT_PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./tpu ./placement ./sim ./serve ./data ./observe
