#!/usr/bin/env bash
# generate.sh regenerates the Go code of the profiler protos in proto/.
#
#   profiler/internal/tslpb/generate.sh [OUT]
#
# OUT defaults to this directory. The protoc compiler is grpcio-tools'
# (from the project venv, see scripts/setup-venv.sh); the Go plugins are
# built from the module proxy at pinned versions, into the
# cache directory (scripts/protoc-env.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out=${1:-$here}
# shellcheck source=../../../scripts/protoc-env.sh
source "$repo/scripts/protoc-env.sh"

pkg=github.com/raytpu/raytpu/profiler/internal/tslpb
opt=paths=source_relative
for f in xplane profiler_service; do
	opt="$opt,Mraytpu/profiler/v1/$f.proto=$pkg"
done
cd "$here/proto"
"$python" -m grpc_tools.protoc -I . \
	--plugin=protoc-gen-go="$plugin_go" \
	--plugin=protoc-gen-go-grpc="$plugin_go_grpc" \
	--go_out="$out" --go_opt="$opt" \
	--go-grpc_out="$out" --go-grpc_opt="$opt" \
	raytpu/profiler/v1/xplane.proto raytpu/profiler/v1/profiler_service.proto
# paths=source_relative puts the Go files under raytpu/profiler/v1: move
# them to the package directory.
mv "$out"/raytpu/profiler/v1/*.go "$out"/
rmdir -p "$out/raytpu/profiler/v1" 2>/dev/null || true
