#!/usr/bin/env bash
# generate.sh regenerates the Go code of the profiler protos in proto/.
#
#   profiler/internal/tslpb/generate.sh [OUT]
#
# OUT defaults to this directory. The protoc compiler is grpcio-tools'
# (from the project venv, see scripts/setup-venv.sh); the Go plugins are
# built from the module proxy at the pinned versions below, into the same
# cache directory as serve/servev1/generate.sh uses.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out=${1:-$here}
python=${RAYTPU_VENV:-$repo/.venv}/bin/python

protoc_gen_go=google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11
protoc_gen_go_grpc=google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1

plugins=${RAYTPU_PROTOC_PLUGINS:-${XDG_CACHE_HOME:-$HOME/.cache}/raytpu/protoc-plugins}
mkdir -p "$plugins"
for p in "$protoc_gen_go" "$protoc_gen_go_grpc"; do
	name=${p%@*}
	bin="$plugins/$(basename "$name")-${p#*@}"
	if [[ ! -x "$bin" ]]; then
		tmp=$(mktemp -d)
		GOBIN="$tmp" GOFLAGS=-mod=mod go install "$p"
		mv "$tmp/$(basename "$name")" "$bin"
		rmdir "$tmp"
	fi
done

if ! "$python" -c 'import grpc_tools' 2>/dev/null; then
	echo "generate.sh: $python has no grpc_tools: run scripts/setup-venv.sh" >&2
	exit 1
fi

pkg=github.com/raytpu/raytpu/profiler/internal/tslpb
opt=paths=source_relative
for f in xplane profiler_service; do
	opt="$opt,Mraytpu/profiler/v1/$f.proto=$pkg"
done
cd "$here/proto"
"$python" -m grpc_tools.protoc -I . \
	--plugin=protoc-gen-go="$plugins/protoc-gen-go-${protoc_gen_go#*@}" \
	--plugin=protoc-gen-go-grpc="$plugins/protoc-gen-go-grpc-${protoc_gen_go_grpc#*@}" \
	--go_out="$out" --go_opt="$opt" \
	--go-grpc_out="$out" --go-grpc_opt="$opt" \
	raytpu/profiler/v1/xplane.proto raytpu/profiler/v1/profiler_service.proto
# paths=source_relative puts the Go files under raytpu/profiler/v1: move
# them to the package directory.
mv "$out"/raytpu/profiler/v1/*.go "$out"/
rmdir -p "$out/raytpu/profiler/v1" 2>/dev/null || true
