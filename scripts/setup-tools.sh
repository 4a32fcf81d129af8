#!/usr/bin/env bash
# setup-tools.sh installs the system programs some tests drive, when they
# are missing, from Debian's packages:
#   tmux        cmd/raytpu/internal/progress renders its terminal output in a real tmux pane
#   ip          (iproute2) the kube tests' pod runner (internal/testinfra/podrunner) gives each pod a network namespace
#   unshare, nsenter (util-linux) it runs each container in namespaces of
#               its own and runs exec probes inside them
#   wget        KubeRay's readiness and liveness probes call it in the pods
# It is idempotent: nothing is installed when every program is on PATH.
set -euo pipefail

missing=()
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
{ command -v unshare && command -v nsenter; } >/dev/null 2>&1 || missing+=(util-linux)
command -v wget >/dev/null 2>&1 || missing+=(wget)
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" -ne 0 ] && sudo=(sudo)
echo "setup-tools: installing ${missing[*]} from Debian's packages" >&2
"${sudo[@]}" apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >&2
