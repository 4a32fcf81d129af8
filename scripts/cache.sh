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
