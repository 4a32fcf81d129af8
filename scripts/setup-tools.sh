#!/usr/bin/env bash
# setup-tools.sh installs the system programs some tests drive, when they
# are missing, from Debian's packages:
#   tmux   internal/progress renders its terminal output in a real tmux pane
# It is idempotent: nothing is installed when every program is on PATH.
set -euo pipefail

missing=()
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" -ne 0 ] && sudo=(sudo)
echo "setup-tools: installing ${missing[*]} from Debian's packages" >&2
"${sudo[@]}" apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >&2
