#!/usr/bin/env bash
# setup-venv.sh creates <repo>/.venv and installs scripts/requirements.txt
# into it. It is idempotent: when .venv/.raytpu-stamp holds the sha256 of
# requirements.txt the install is skipped.
#
# Environment:
#   PYTHON  interpreter used to create the venv (default: python3)
#   VENV    venv directory (default: <repo>/.venv)
set -euo pipefail

log() { printf 'setup-venv: %s\n' "$*" >&2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
req="$repo/scripts/requirements.txt"
venv=${VENV:-$repo/.venv}
python=${PYTHON:-python3}
stamp="$venv/.raytpu-stamp"

if [[ ! -f "$req" ]]; then
	log "missing $req"
	exit 1
fi
want=$(sha256sum "$req" | cut -d' ' -f1)

if [[ ! -x "$venv/bin/python" ]]; then
	log "creating virtualenv $venv with $($python --version 2>&1)"
	"$python" -m venv "$venv"
else
	log "virtualenv $venv exists"
fi

if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
	log "requirements unchanged (stamp $want); nothing to install"
	exit 0
fi

log "installing $req into $venv"
"$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off -r "$req" >&2
# Fail here, not in a test, if the install is unusable.
"$venv/bin/python" -c 'import ray, jax, pyarrow; print("setup-venv: ray", ray.__version__, "jax", jax.__version__, "pyarrow", pyarrow.__version__)' >&2
test -x "$venv/bin/ray" || { log "$venv/bin/ray missing after install"; exit 1; }
printf '%s\n' "$want" >"$stamp"
log "done; wrote $stamp"
