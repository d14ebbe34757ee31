#!/usr/bin/env bash
# Functional speed against ONNX Runtime CPU, measured in one run on this machine (ratios, not absolute times):
# installs onnxruntime-node from the npm registry into build/ort (--ignore-scripts: the package ships its CPU
# binaries), writes the generated resnet50 (1×3×224×224, fp32), times ONNX Runtime (all graph optimisations, and
# none) and Kiln's reference executor (`kiln run`, best of 5), prints a table and writes build/bench_ort.json.
# usage: tests/bench/ort/run.sh [BUILD_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:-$here/../../../build}" && pwd)"
kiln="$build/app/kiln"
work="$build/ort"
mkdir -p "$work"
if [ ! -d "$work/node_modules/onnxruntime-node" ]; then
  (cd "$work" && npm install --silent --ignore-scripts --no-audit --no-fund onnxruntime-node >/dev/null)
fi
cp "$here/ort_time.js" "$work/"
"$kiln" sample resnet50 -o "$work/resnet50.onnx" >/dev/null
ort_all=$(cd "$work" && node ort_time.js resnet50.onnx 5 all)
ort_none=$(cd "$work" && node ort_time.js resnet50.onnx 5 disabled)
best=""
for _ in 1 2 3 4 5; do
  ms=$("$kiln" run "$work/resnet50.onnx" --set precision_mode=force_fp32 --random 1 --json | \
       /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["reference_ms"])')
  best=$(/usr/bin/python3 -c "print(min(x for x in [$ms, ${best:-$ms}]))")
done
/usr/bin/python3 - "$ort_all" "$ort_none" "$best" "$build/bench_ort.json" <<'PY'
import json, sys
all_, none, kiln, out = json.loads(sys.argv[1]), json.loads(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
rows = [("ONNX Runtime %s, all optimisations" % all_["version"], all_["best_ms"]),
        ("ONNX Runtime %s, no graph optimisation" % none["version"], none["best_ms"]),
        ("Kiln reference executor", kiln)]
print("%-45s %10s %8s" % ("resnet50 fp32 1x3x224x224 (best of 5)", "ms", "x ORT"))
for name, ms in rows:
    print("%-45s %10.1f %8.2f" % (name, ms, ms / all_["best_ms"]))
json.dump({"model": "resnet50 sample fp32 1x3x224x224", "ort_version": all_["version"],
           "ort_all_ms": all_["best_ms"], "ort_none_ms": none["best_ms"], "kiln_reference_ms": kiln,
           "ratio_vs_ort_all": kiln / all_["best_ms"], "ratio_vs_ort_none": kiln / none["best_ms"]},
          open(out, "w"), indent=2)
print("wrote", out)
PY
