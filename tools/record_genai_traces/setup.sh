#!/usr/bin/env bash
# Create (or update) the recorder's virtualenv and install the overlays.
# Usage: bash tools/record_genai_traces/setup.sh VENV_DIR
set -euo pipefail
venv="${1:?usage: setup.sh VENV_DIR}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -r "$here/requirements.txt"
overlay_root="$venv/record_genai_overlays"
grep -v '^[[:space:]]*#' "$here/overlays.txt" | while read -r name requirements; do
  [ -n "${name:-}" ] || continue
  rm -rf "${overlay_root:?}/$name"
  # shellcheck disable=SC2086 # word-splitting the requirement list is intended
  "$venv/bin/python" -m pip install --no-deps --target "$overlay_root/$name" $requirements
done
echo "ready: $venv/bin/python $here/record.py --out DIR"
