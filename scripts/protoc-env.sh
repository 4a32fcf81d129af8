# protoc-env.sh is sourced by the generate.sh scripts of raytpu's protos:
# it sets $python (the project venv's, with grpcio-tools' protoc) and
# $plugin_go and $plugin_go_grpc (protoc-gen-go and protoc-gen-go-grpc at
# the pinned versions below, built from the module proxy once into a cache
# directory, $RAYTPU_PROTOC_PLUGINS or ~/.cache/raytpu/protoc-plugins).
# The caller sets $repo to the repository root.

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
plugin_go="$plugins/protoc-gen-go-${protoc_gen_go#*@}"
plugin_go_grpc="$plugins/protoc-gen-go-grpc-${protoc_gen_go_grpc#*@}"

if ! "$python" -c 'import grpc_tools' 2>/dev/null; then
	echo "generate.sh: $python has no grpc_tools: run scripts/setup-venv.sh" >&2
	exit 1
fi
