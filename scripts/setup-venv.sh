#!/usr/bin/env bash
# setup-venv.sh installs internal/pyenv/requirements.txt (Ray, JAX for CPU,
# pyarrow, grpcio-tools) into a virtualenv in the machine's raytpu cache
# (scripts/cache.sh; the layout package pyenv documents, which the raytpu
# command uses outside a clone) and links <repo>/.venv to it. Every clone whose
# requirements.txt is the same shares the one virtualenv; a clone with other
# requirements gets its own. Idempotent: when the virtualenv's stamp holds the
# sha256 of requirements.txt's requirement lines, nothing is installed.
#
# Environment:
#   PYTHON        interpreter used to create the venv (default: python3)
#   RAYTPU_CACHE  the cache root (see scripts/cache.sh)
#   VENV          install into this directory instead, with no link
set -euo pipefail

log() { printf 'setup-venv: %s\n' "$*" >&2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/cache.sh
. "$repo/scripts/cache.sh"
req="$repo/internal/pyenv/requirements.txt"
python=${PYTHON:-python3}

if [[ ! -f "$req" ]]; then
	log "missing $req"
	exit 1
fi
# The stamp hashes the requirement lines only (package pyenv's Stamp), so a
# comment does not call for a new install.
want=$(grep -Ev '^[[:space:]]*(#|$)' "$req" | sha256sum | cut -d' ' -f1)
pyver=$("$python" -c 'import sys; print("py%d.%d" % sys.version_info[:2])')

if [[ -n "${VENV:-}" ]]; then
	venv=$VENV
	link=""
else
	root=$(raytpu_cache_root)
	venv="$root/venv/$pyver-${want:0:16}"
	link="$repo/.venv"
	raytpu_lock "$root/venv"
fi
stamp="$venv/.raytpu-stamp"

if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$venv/bin/ray" ]]; then
	log "virtualenv $venv has requirements $want; nothing to install"
else
	start=$SECONDS
	if [[ ! -x "$venv/bin/python" ]]; then
		log "creating virtualenv $venv with $($python --version 2>&1)"
		"$python" -m venv "$venv"
	fi
	log "installing $req into $venv (a few minutes on a fresh machine)"
	"$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off -r "$req" >&2
	# Fail here, not in a test, if the install is unusable.
	"$venv/bin/python" -c 'import ray, jax, pyarrow; print("setup-venv: ray", ray.__version__, "jax", jax.__version__, "pyarrow", pyarrow.__version__)' >&2
	test -x "$venv/bin/ray" || { log "$venv/bin/ray missing after install"; exit 1; }
	printf '%s\n' "$want" >"$stamp"
	log "installed in $((SECONDS - start))s; wrote $stamp"
fi

if [[ -n "$link" ]]; then
	raytpu_link "$link" "$venv"
	log "$link -> $venv"
fi
