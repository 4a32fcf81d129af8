#!/usr/bin/env bash
# setup-kube.sh builds the Kubernetes control plane the kube tests run
# against — etcd, kube-apiserver and kube-controller-manager — from the Go
# module proxy into the machine's raytpu cache (scripts/cache.sh), in a
# directory named for the recipe, and links <repo>/.cache/kube/bin
# (git-ignored) to it: the directory internal/testinfra/kubetest hands to envtest as
# KUBEBUILDER_ASSETS. Every clone with the same recipe shares one build.
# Debian ships no kube-apiserver and its etcd is too old, so all are built
# from source.
#
# The recipes are small Go modules with a `tool` directive each:
#   internal/tools/kube/etcd       go.etcd.io/etcd/server/v3 v3.7.0
#   internal/tools/kube/apiserver  k8s.io/kubernetes v1.37.2, each k8s.io
#                                  staging module (v0.0.0 there) replaced by
#                                  its v0.37.2 release
#   internal/tools/kube/controllermanager  the same replacements, tool
#                                  k8s.io/kubernetes/cmd/kube-controller-manager
#                                  (about 6 min on 2 cores; only the tests
#                                  that run pods use it: the Job controller
#                                  and the garbage collector)
# Their go.mod and go.sum are committed; `setup-kube.sh regen` rewrites them
# from the upstream go.mod files (run it after changing a version below).
#
# Kueue's controller manager (sigs.k8s.io/kueue/cmd/kueue $KUEUE_VERSION)
# is built beside them, with Kueue's own go.mod (`go install pkg@version`:
# it needs KubeRay v1.6.0's types and k8s.io 0.35, so it cannot build in
# raytpu's module), into the same directory as `kueue`, with Kueue's CRDs
# (config/components/crd/bases of the module) in `kueue-crds`; about 6 min
# on 2 cores (most of the compile runs beside kube-apiserver's on a fresh
# machine). One line of cmd/kueue/main.go is changed (internal/tools/kube/
# kueue: patch.sed, and metrics_cert_dir.go.in added to the package):
# the hard-coded /etc/kueue/metrics/certs, which Kueue reads at start
# even with its metrics server off, comes from $KUEUE_METRICS_CERT_DIR,
# so a test runs Kueue outside a pod without writing to /etc. It has a
# stamp of its own (.raytpu-kueue-stamp: the version and the sha256 of
# that recipe). Only the Kueue kube tests (internal/testinfra/kubetest's
# StartKueue) use it.
#
# `setup-kube.sh kubectl` builds kubectl v1.37.2 the same way (recipe
# internal/tools/kube/kubectl, about 2.5 min cold on 2 cores) into the same
# directory, with a stamp of its own; only the benchmark that compares
# raytpu's apply with `kubectl apply` needs it.
#
# It is idempotent: when the build directory's .raytpu-stamp holds the
# versions and the sha256 of the etcd and apiserver recipe files, and both
# binaries exist, they are not built again; kube-controller-manager has a
# stamp of its own (.raytpu-controller-manager-stamp, with its recipe's
# sha256), so a cache directory built before it existed is extended with it
# rather than rebuilt, and every clone with the same recipes shares it.
#
# Environment:
#   RAYTPU_CACHE  the cache root (see scripts/cache.sh)
#   KUBE_CACHE    build into this directory instead, with no link
set -euo pipefail

ETCD_VERSION=v3.7.0
KUBE_VERSION=v1.37.2
STAGING_VERSION=v0.37.2
KUEUE_VERSION=v0.17.0

log() { printf 'setup-kube: %s\n' "$*" >&2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools="$repo/internal/tools/kube"
# shellcheck source=scripts/cache.sh
. "$repo/scripts/cache.sh"
link=""
if [[ -n "${KUBE_CACHE:-}" ]]; then
	out=$KUBE_CACHE
else
	root=$(raytpu_cache_root)
	recipe=$(cat "$tools/etcd/go.mod" "$tools/etcd/go.sum" "$tools/apiserver/go.mod" "$tools/apiserver/go.sum" | sha256sum | cut -d' ' -f1)
	out="$root/kube/$KUBE_VERSION-${recipe:0:16}"
	link="$repo/.cache/kube/bin"
	# While this runs, <repo>/.cache/kube/building holds its pid: make test
	# starts it beside the tests, and internal/testinfra/kubetest waits
	# for it before it looks for the binaries.
	mkdir -p "$repo/.cache/kube"
	# Kueue's build, which only the Kueue tests need, has a file of its
	# own (building-kueue): the other kube tests start as soon as etcd,
	# kube-apiserver and kube-controller-manager are linked.
	echo $$ >"$repo/.cache/kube/building"
	echo $$ >"$repo/.cache/kube/building-kueue"
	trap 'rm -f "$repo/.cache/kube/building" "$repo/.cache/kube/building-kueue"' EXIT
	raytpu_lock "$root/kube"
fi
stamp="$out/.raytpu-stamp"
# link_out points <repo>/.cache/kube/bin at the build directory.
link_out() {
	[[ -n "$link" ]] || return 0
	raytpu_link "$link" "$out"
	log "$link -> $out"
}
export GOWORK=off GOFLAGS=-buildvcs=false

# regen_etcd writes the etcd recipe module from scratch.
regen_etcd() {
	local dir="$tools/etcd"
	rm -f "$dir/go.mod" "$dir/go.sum"
	(cd "$dir" && go mod init github.com/raytpu/raytpu/internal/tools/kube/etcd >/dev/null 2>&1 &&
		go mod edit -go=1.26 &&
		GOFLAGS=-mod=mod go get -tool "go.etcd.io/etcd/server/v3@$ETCD_VERSION" && go mod tidy)
}

# regen_apiserver writes the kube-apiserver recipe: k8s.io/kubernetes
# requires its staging modules at v0.0.0 and replaces them with directories
# of its own repository, which a dependent module cannot see; every such
# module is replaced here by its published $STAGING_VERSION release.
regen_apiserver() {
	local dir="$tools/apiserver" gomod mods
	gomod=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
	if [[ -z "$gomod" || ! -f "$gomod" ]]; then
		log "could not download the go.mod of k8s.io/kubernetes@$KUBE_VERSION"
		exit 1
	fi
	mods=$(awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" { print $1 }' "$gomod" | sort -u)
	if [[ -z "$mods" ]]; then
		log "no k8s.io/* v0.0.0 staging requirements in $gomod; the recipe needs a new rule"
		exit 1
	fi
	rm -f "$dir/go.mod" "$dir/go.sum"
	{
		echo "module github.com/raytpu/raytpu/internal/tools/kube/apiserver"
		echo
		echo "go $(awk '$1 == "go" { print $2; exit }' "$gomod")"
		echo
		echo "// Generated by scripts/setup-kube.sh regen from k8s.io/kubernetes@$KUBE_VERSION's go.mod."
		echo "replace ("
		for m in $mods; do printf '\t%s => %s %s\n' "$m" "$m" "$STAGING_VERSION"; done
		echo ")"
	} >"$dir/go.mod"
	(cd "$dir" && GOFLAGS=-mod=mod go get -tool "k8s.io/kubernetes/cmd/kube-apiserver@$KUBE_VERSION" && go mod tidy)
	# kubectl: the same replacements, its own module.
	sed -e 's|internal/tools/kube/apiserver|internal/tools/kube/kubectl|' -e '/^tool /,$d' "$dir/go.mod" |
		sed -n '1,/^)/p' >"$tools/kubectl/go.mod"
	rm -f "$tools/kubectl/go.sum"
	(cd "$tools/kubectl" && GOFLAGS=-mod=mod go get -tool "k8s.io/kubernetes/cmd/kubectl@$KUBE_VERSION" && go mod tidy)
	# kube-controller-manager: the same replacements, its own module.
	sed -e 's|internal/tools/kube/apiserver|internal/tools/kube/controllermanager|' -e '/^tool /,$d' "$dir/go.mod" |
		sed -n '1,/^)/p' >"$tools/controllermanager/go.mod"
	rm -f "$tools/controllermanager/go.sum"
	(cd "$tools/controllermanager" && GOFLAGS=-mod=mod go get -tool "k8s.io/kubernetes/cmd/kube-controller-manager@$KUBE_VERSION" && go mod tidy)
}

kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"

# build_tool BINARY RECIPE STAMP VERSION ARGS... builds
# k8s.io/kubernetes/cmd/BINARY from the recipe module internal/tools/kube/RECIPE
# into $out unless $out/.raytpu-STAMP-stamp holds its version and the
# recipe's sha256, then checks that the first line `BINARY ARGS...` prints
# is VERSION.
build_tool() {
	local bin=$1 recipe=$2 stamp="$out/.raytpu-$3-stamp" version=$4 want
	shift 4
	want="$bin $KUBE_VERSION recipe $(cat "$tools/$recipe/go.mod" "$tools/$recipe/go.sum" | sha256sum | cut -d' ' -f1)"
	if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$out/$bin" ]]; then
		log "$bin $KUBE_VERSION is in $out; nothing to build"
		return
	fi
	mkdir -p "$out"
	rm -f "$stamp"
	local start=$SECONDS
	log "building $bin $KUBE_VERSION into $out (minutes on 2 cores)"
	(cd "$tools/$recipe" && CGO_ENABLED=0 go build -trimpath -ldflags "$kube_ldflags" -o "$out/$bin" "k8s.io/kubernetes/cmd/$bin")
	log "$bin built in $((SECONDS - start))s"
	if [[ "$("$out/$bin" "$@" 2>/dev/null | head -1)" != "$version" ]]; then
		log "unexpected $bin version: $("$out/$bin" "$@" 2>&1 | head -1)"
		exit 1
	fi
	echo "$want" >"$stamp"
}

# build_kubectl builds kubectl (recipe internal/tools/kube/kubectl).
build_kubectl() { build_tool kubectl kubectl kubectl "Client Version: $KUBE_VERSION" version --client; }

# build_controller_manager builds kube-controller-manager (recipe
# internal/tools/kube/controllermanager).
build_controller_manager() {
	build_tool kube-controller-manager controllermanager controller-manager "Kubernetes $KUBE_VERSION" --version
}

# build_kueue builds Kueue's controller manager and copies its CRDs into
# $out unless $out/.raytpu-kueue-stamp holds the version and the recipe's
# sha256 (see the top of this file).
build_kueue() {
	local stamp="$out/.raytpu-kueue-stamp" recipe="$tools/kueue" want src work start=$SECONDS
	want="kueue $KUEUE_VERSION recipe $(cat "$recipe/patch.sed" "$recipe/metrics_cert_dir.go.in" | sha256sum | cut -d' ' -f1)"
	if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$out/kueue" && -f "$out/kueue-crds/kueue.x-k8s.io_workloads.yaml" ]]; then
		log "kueue $KUEUE_VERSION is in $out; nothing to build"
		return
	fi
	mkdir -p "$out"
	rm -f "$stamp"
	# The build is a module of its own in a temporary directory: Kueue's
	# go.mod (every requirement, so the same versions as `go install
	# sigs.k8s.io/kueue/cmd/kueue@$KUEUE_VERSION`) under another module
	# path, requiring sigs.k8s.io/kueue itself, whose main package is
	# Kueue's cmd/kueue with patch.sed applied and one file added. Kueue's
	# other packages are used from the module cache as they are.
	work=$(mktemp -d)
	local info
	info=$(cd "$work" && go mod download -json "sigs.k8s.io/kueue@$KUEUE_VERSION")
	src=$(sed -n 's/.*"Dir": "\(.*\)".*/\1/p' <<<"$info")
	if [[ -z "$src" || ! -f "$src/cmd/kueue/main.go" || ! -f "$src/go.sum" ]]; then
		log "could not download sigs.k8s.io/kueue@$KUEUE_VERSION"
		rm -rf "$work"
		return 1
	fi
	sed -f "$recipe/patch.sed" "$src/cmd/kueue/main.go" >"$work/main.go"
	if cmp -s "$src/cmd/kueue/main.go" "$work/main.go"; then
		log "internal/tools/kube/kueue/patch.sed changed nothing in Kueue $KUEUE_VERSION's cmd/kueue/main.go; the recipe needs a new rule"
		rm -rf "$work"
		return 1
	fi
	cp "$recipe/metrics_cert_dir.go.in" "$work/raytpu_metrics_cert_dir.go"
	{
		sed '1s|^module .*|module github.com/raytpu/raytpu/internal/tools/kube/kueue/build|' "$src/go.mod"
		printf '\nrequire sigs.k8s.io/kueue %s\n' "$KUEUE_VERSION"
	} >"$work/go.mod"
	{
		cat "$src/go.sum"
		printf 'sigs.k8s.io/kueue %s %s\n' "$KUEUE_VERSION" "$(sed -n 's/.*"Sum": "\(.*\)".*/\1/p' <<<"$info")"
		printf 'sigs.k8s.io/kueue %s/go.mod %s\n' "$KUEUE_VERSION" "$(sed -n 's/.*"GoModSum": "\(.*\)".*/\1/p' <<<"$info")"
	} >"$work/go.sum"
	log "building kueue $KUEUE_VERSION into $out (about 6 min on 2 cores)"
	(cd "$work" && CGO_ENABLED=0 go build -trimpath -mod=readonly \
		-ldflags "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION" -o "$out/kueue" .)
	rm -rf "$work" "$out/kueue-crds"
	mkdir -p "$out/kueue-crds"
	cp "$src"/config/components/crd/bases/*.yaml "$out/kueue-crds/"
	chmod -R u+w "$out/kueue-crds"
	log "kueue built in $((SECONDS - start))s"
	echo "$want" >"$stamp"
}

recipe_sum() {
	cat "$tools/etcd/go.mod" "$tools/etcd/go.sum" "$tools/apiserver/go.mod" "$tools/apiserver/go.sum" |
		sha256sum | cut -d' ' -f1
}

if [[ "${1:-}" == regen ]]; then
	log "regenerating recipes: etcd $ETCD_VERSION, kube-apiserver $KUBE_VERSION (staging $STAGING_VERSION)"
	regen_etcd
	regen_apiserver
	exit 0
fi
if [[ "${1:-}" == kubectl ]]; then
	build_kubectl
	link_out
	exit 0
fi
if [[ $# -gt 0 ]]; then
	log "unknown argument $1; usage: setup-kube.sh [regen|kubectl]"
	exit 2
fi

# Kueue builds beside everything else: its own module, its own stamp.
build_kueue &
kueue_build=$!
# control_plane_ready tells the kube tests waiting on <repo>/.cache/kube/building
# that etcd, kube-apiserver and kube-controller-manager are linked.
control_plane_ready() {
	[[ -n "$link" ]] && rm -f "$repo/.cache/kube/building"
	return 0
}
wait_kueue() {
	if ! wait "$kueue_build"; then
		log "building kueue $KUEUE_VERSION failed"
		exit 1
	fi
}

want="etcd $ETCD_VERSION kube-apiserver $KUBE_VERSION recipe $(recipe_sum)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$out/etcd" && -x "$out/kube-apiserver" ]]; then
	log "etcd $ETCD_VERSION and kube-apiserver $KUBE_VERSION are in $out; nothing to build"
	build_controller_manager
	link_out
	control_plane_ready
	wait_kueue
	exit 0
fi

mkdir -p "$out"
rm -f "$stamp"
export CGO_ENABLED=0

# etcd, a module of its own that shares few packages with Kubernetes, is
# built beside kube-apiserver: one go build leaves a core idle while it
# links or waits on a package many others import.
start=$SECONDS
log "building etcd $ETCD_VERSION into $out, beside kube-apiserver"
(cd "$tools/etcd" && go build -trimpath -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3 &&
	log "etcd built in $((SECONDS - start))s") &
etcd_build=$!

log "building kube-apiserver $KUBE_VERSION into $out (several minutes on 2 cores)"
(cd "$tools/apiserver" && go build -trimpath \
	-ldflags "$kube_ldflags" \
	-o "$out/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver)
log "kube-apiserver built in $((SECONDS - start))s"
if ! wait "$etcd_build"; then
	log "building etcd failed"
	exit 1
fi

# Fail here, not in a test, if a binary does not run or reports another version.
etcd_version=$("$out/etcd" --version)
apiserver_version=$("$out/kube-apiserver" --version)
if [[ "$etcd_version" != *"etcd Version: ${ETCD_VERSION#v}"* || "$apiserver_version" != "Kubernetes $KUBE_VERSION" ]]; then
	log "unexpected versions: $etcd_version / $apiserver_version"
	exit 1
fi
log "built: etcd ${ETCD_VERSION#v}, $apiserver_version"
echo "$want" >"$stamp"
build_controller_manager
link_out
control_plane_ready
wait_kueue
