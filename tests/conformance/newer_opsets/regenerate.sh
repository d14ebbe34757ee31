#!/usr/bin/env bash
# Regenerates tests/data/onnx_newer: models from generate.py, reference outputs from ONNX Runtime (npm
# onnxruntime-node 1.30, installed into a scratch folder). Needs /usr/bin/python3 with python3-onnx and Node.js.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../../data/onnx_newer"
scratch="${KILN_ORT_DIR:-${TMPDIR:-/tmp}/kiln-ort-node}"
if [ ! -d "$scratch/node_modules/onnxruntime-node" ]; then
  mkdir -p "$scratch"
  (cd "$scratch" && npm init -y >/dev/null && npm install --silent onnxruntime-node@1.30.0)
fi
/usr/bin/python3 "$here/generate.py" make "$out"
NODE_PATH="$scratch/node_modules" node "$here/ort_reference.js" "$out"
/usr/bin/python3 "$here/generate.py" finish "$out"
