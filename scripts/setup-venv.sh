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
#   PYTHON        interpreter used to create the venv (default: /usr/bin/python3.11
#                 when it can make virtualenvs, else python3; see scripts/cache.sh)
#   RAYTPU_CACHE  the cache root (see scripts/cache.sh)
#   VENV          install into this directory instead, with no link
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/cache.sh
. "$repo/scripts/cache.sh"
# The check also wants the ray command, which the tests and raycluster run.
raytpu_venv setup-venv "$repo/internal/pyenv/requirements.txt" venv "$repo/.venv" '
import os, sys, ray, jax, pyarrow
print("setup-venv: ray", ray.__version__, "jax", jax.__version__, "pyarrow", pyarrow.__version__)
sys.exit(0 if os.access(os.path.join(os.path.dirname(sys.executable), "ray"), os.X_OK) else "setup-venv: bin/ray missing after install")'
