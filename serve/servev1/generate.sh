#!/usr/bin/env bash
# generate.sh regenerates the Go and Python code of predictor.proto.
#
#   serve/servev1/generate.sh [OUT]
#
# OUT defaults to this directory (serve/servev1): the Go files land in OUT,
# the Python ones in OUT/python. The protoc compiler is grpcio-tools' (from
# the project venv, see scripts/setup-venv.sh); the Go plugins are built from
# the module proxy at the pinned versions below, into a cache directory.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
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

mkdir -p "$out/python"
cd "$here/proto"
"$python" -m grpc_tools.protoc -I . \
	--plugin=protoc-gen-go="$plugins/protoc-gen-go-${protoc_gen_go#*@}" \
	--plugin=protoc-gen-go-grpc="$plugins/protoc-gen-go-grpc-${protoc_gen_go_grpc#*@}" \
	--go_out="$out" --go_opt=paths=source_relative,Mraytpu/serve/v1/predictor.proto=github.com/raytpu/raytpu/serve/servev1 \
	--go-grpc_out="$out" --go-grpc_opt=paths=source_relative,Mraytpu/serve/v1/predictor.proto=github.com/raytpu/raytpu/serve/servev1 \
	--python_out="$out/python" --grpc_python_out="$out/python" \
	raytpu/serve/v1/predictor.proto
# paths=source_relative puts the Go files under raytpu/serve/v1: move them
# to the package directory.
mv "$out"/raytpu/serve/v1/predictor.pb.go "$out"/raytpu/serve/v1/predictor_grpc.pb.go "$out"/
rmdir -p "$out/raytpu/serve/v1" 2>/dev/null || true
