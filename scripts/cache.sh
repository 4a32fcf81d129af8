# cache.sh is sourced by the setup scripts: it names the per-machine cache
# that every clone of raytpu shares, so that the virtualenv and the
# Kubernetes binaries are installed once per machine, not once per clone.
#
#   RAYTPU_CACHE  the cache root (default: $XDG_CACHE_HOME/raytpu, else
#                 ~/.cache/raytpu)
#
# Each installed thing lives in a directory named for what it was built
# from (the requirements file's hash, the recipe's hash), so two clones at
# different versions never share a directory they disagree about, and a
# clone links <repo>/.venv and <repo>/.cache/kube/bin to its own. Installs
# are serialised with flock, so two clones starting at once build once.

raytpu_cache_root() {
	local root=${RAYTPU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/raytpu}
	mkdir -p "$root"
	(cd "$root" && pwd)
}

# raytpu_link LINK TARGET points LINK at TARGET, replacing an older link
# but never a real directory (a clone's own .venv from before the cache is
# moved aside to LINK.old, not deleted).
raytpu_link() {
	local link=$1 target=$2
	mkdir -p "$(dirname "$link")"
	if [[ -L "$link" ]]; then
		[[ "$(readlink "$link")" == "$target" ]] && return 0
		rm -f "$link"
	elif [[ -e "$link" ]]; then
		rm -rf "$link.old"
		mv "$link" "$link.old"
	fi
	ln -s "$target" "$link"
}

# raytpu_lock DIR takes DIR/.lock for the rest of the script (fd 9), saying
# so when another setup holds it.
raytpu_lock() {
	mkdir -p "$1"
	exec 9>"$1/.lock"
	if ! flock -n 9; then
		printf 'setup: another setup holds %s/.lock; waiting for it\n' "$1" >&2
		flock 9
	fi
}

# raytpu_python prints the interpreter that creates a virtualenv: $PYTHON
# when set; else the distribution's /usr/bin/python3.11 when it can create
# virtualenvs (on Debian, with python3.11-venv); else python3 from PATH.
# Every Ray process of the tests is a Python process of the virtualenv,
# and a distribution's CPython is built with profile-guided and link-time
# optimization and a static libpython, where a default pyenv build has
# neither: on one machine the same pure-Python benchmark took 22% less CPU
# under Debian's 3.11 than under pyenv's, and examples/batchinfer's tests
# took 123 and 132 CPU-s against 141 and 178 (two runs each). Package
# pyenv's DefaultPython makes the same choice.
raytpu_python() {
	if [[ -n "${PYTHON:-}" ]]; then
		printf '%s\n' "$PYTHON"
		return
	fi
	local sys=/usr/bin/python3.11
	if [[ -x "$sys" ]] && "$sys" -c 'import venv, ensurepip' 2>/dev/null; then
		printf '%s\n' "$sys"
		return
	fi
	printf 'python3\n'
}

# raytpu_venv NAME REQ SUBDIR LINK CHECK [PIP_ARGS...] installs the pip
# requirements file REQ into a virtualenv of the cache,
# $root/SUBDIR/py<version>-<16 hex of the stamp> (or $VENV, with no link),
# links LINK to it, and logs as NAME. The stamp is the sha256 of REQ's
# requirement lines (comments and blank lines left out, as package pyenv's
# Stamp); when the virtualenv's .raytpu-stamp holds it, nothing is
# installed. CHECK is Python run after the install, which must succeed
# before the stamp is written; PIP_ARGS go to pip install. The interpreter
# that creates the virtualenv is raytpu_python's. A virtualenv already in
# the cache is kept whichever interpreter made it; remove its directory to
# make it again with another.
raytpu_venv() {
	local name=$1 req=$2 subdir=$3 link=$4 check=$5
	shift 5
	local python
	python=$(raytpu_python)
	if [[ ! -f "$req" ]]; then
		printf '%s: missing %s\n' "$name" "$req" >&2
		return 1
	fi
	local want pyver venv root
	want=$(grep -Ev '^[[:space:]]*(#|$)' "$req" | sha256sum | cut -d' ' -f1)
	pyver=$("$python" -c 'import sys; print("py%d.%d" % sys.version_info[:2])')
	if [[ -n "${VENV:-}" ]]; then
		venv=$VENV
		link=""
	else
		root=$(raytpu_cache_root)
		venv="$root/$subdir/$pyver-${want:0:16}"
		raytpu_lock "$root/$subdir"
	fi
	local stamp="$venv/.raytpu-stamp"
	if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$venv/bin/python" ]]; then
		printf '%s: virtualenv %s has requirements %s; nothing to install\n' "$name" "$venv" "$want" >&2
	else
		local start=$SECONDS
		if [[ ! -x "$venv/bin/python" ]]; then
			printf '%s: creating virtualenv %s with %s\n' "$name" "$venv" "$("$python" --version 2>&1)" >&2
			"$python" -m venv "$venv"
		fi
		printf '%s: installing %s into %s\n' "$name" "$req" "$venv" >&2
		"$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off "$@" -r "$req" >&2
		# Fail here, not in a test, if the install is unusable.
		"$venv/bin/python" -c "$check" >&2
		printf '%s\n' "$want" >"$stamp"
		printf '%s: installed in %ds (%s on disk); wrote %s\n' "$name" "$((SECONDS - start))" "$(du -sh "$venv" | cut -f1)" "$stamp" >&2
	fi
	if [[ -n "$link" ]]; then
		raytpu_link "$link" "$venv"
		printf '%s: %s -> %s\n' "$name" "$link" "$venv" >&2
	fi
}
