#!/usr/bin/env bash
# generate.sh regenerates the Go and Python code of predictor.proto.
#
#   serve/servev1/generate.sh [OUT]
#
# OUT defaults to this directory (serve/servev1): the Go files land in OUT,
# the Python ones in OUT/python. The protoc compiler is grpcio-tools' (from
# the project venv, see scripts/setup-venv.sh); the Go plugins are built from
# the module proxy at pinned versions (scripts/protoc-env.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$here}
# shellcheck source=../../scripts/protoc-env.sh
source "$repo/scripts/protoc-env.sh"

mkdir -p "$out/python"
cd "$here/proto"
"$python" -m grpc_tools.protoc -I . \
	--plugin=protoc-gen-go="$plugin_go" \
	--plugin=protoc-gen-go-grpc="$plugin_go_grpc" \
	--go_out="$out" --go_opt=paths=source_relative,Mraytpu/serve/v1/predictor.proto=github.com/raytpu/raytpu/serve/servev1 \
	--go-grpc_out="$out" --go-grpc_opt=paths=source_relative,Mraytpu/serve/v1/predictor.proto=github.com/raytpu/raytpu/serve/servev1 \
	--python_out="$out/python" --grpc_python_out="$out/python" \
	raytpu/serve/v1/predictor.proto
# paths=source_relative puts the Go files under raytpu/serve/v1: move them
# to the package directory.
mv "$out"/raytpu/serve/v1/predictor.pb.go "$out"/raytpu/serve/v1/predictor_grpc.pb.go "$out"/
rmdir -p "$out/raytpu/serve/v1" 2>/dev/null || true
