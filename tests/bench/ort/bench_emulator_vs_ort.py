#!/usr/bin/python3
"""The emulator's speed against ONNX Runtime, measured in one run on this machine (issue 45's ratios).

For each model, taken in turn so that the machine's noise falls on all alike: ONNX Runtime CPU (npm onnxruntime-node,
all graph optimisations, ort_run_time.js) and Kiln's reference and compiled modes (`kiln run --set
precision_mode=force_fp32 --random 1 --json`: reference_ms, compiled_ms; ORT runs on zeros), each at one thread
(KILN_THREADS=1, ORT intraOpNumThreads 1) and at all threads. Each figure is the best of --runs (Kiln: whole `kiln
run` processes, but the times are the runs' own, not the process's). Also `kiln verify` of the resnet50 sample
(wall time) and the peak memory of a `kiln run` (max RSS) beside the model's weights and the arena.

Models: the shared CNNs and transformers (skipped when ../shared is absent), the generated samples and a
ViT-B/16-sized export (make_vit.py). Prints a table and writes BUILD/bench_emulator_vs_ort.json; ratios are
reference/ORT and compiled/reference. A model one side cannot run is listed with its error, its ratio missing.
usage: bench_emulator_vs_ort.py [--build BUILD] [--runs N] [--only SUBSTRING] [--threads 1,0]"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "models"))
SHARED_MODELS = ["cnn/light_resnet50.onnx", "cnn/light_densenet121.onnx", "cnn/light_inception_v2.onnx",
                 "cnn/ppocr_mobilenetv3_cls.onnx", "detection/ultraface_rfb_320.onnx",
                 "transformer/bert_toy_optimized.onnx", "transformer/tiny-random-gpt2-fp32_past.onnx"]
SAMPLES = ["resnet50", "mobilenetv2", "bert-base"]


def ensure_ort(work):
    if not os.path.isdir(os.path.join(work, "node_modules", "onnxruntime-node")):
        subprocess.run(["npm", "install", "--silent", "--ignore-scripts", "--no-audit", "--no-fund",
                        "onnxruntime-node@1.30.0"], cwd=work, check=True, stdout=subprocess.DEVNULL)
    shutil.copy(os.path.join(HERE, "ort_run_time.js"), work)


def ort_time(work, model, runs, threads, binding):
    p = subprocess.run(["node", "ort_run_time.js", model, str(runs), str(threads), json.dumps(binding)], cwd=work,
                       stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip() or "failed")
    return json.loads(p.stdout)


def kiln_time(kiln, model, threads):
    env = dict(os.environ)
    if threads > 0:
        env["KILN_THREADS"] = str(threads)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    p = subprocess.run([kiln, "run", model, "--set", "precision_mode=force_fp32", "--random", "1", "--json"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    try:
        j = json.loads(p.stdout)
    except ValueError:
        raise RuntimeError((p.stderr or "no output").strip().splitlines()[-1])
    if "reference_ms" not in j:
        raise RuntimeError(j.get("error", "no reference run"))
    binding = {s["symbol"]: s["value"] for s in (j.get("shape_binding") or {}).get("symbols", [])}
    return {"binding": binding, "reference_ms": j["reference_ms"], "compiled_ms": j.get("compiled_ms"), "arena_bytes": j.get("arena_bytes"),
            "peak_rss_mib": peak_kib / 1024 if peak_kib > before else None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--threads", default="1,0", help="thread counts to measure; 0 = all cores")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    kiln = os.path.join(build, "app", "kiln")
    work = os.path.join(build, "bench-emulator")
    os.makedirs(work, exist_ok=True)
    ensure_ort(work)
    models = []
    if os.path.isdir(SHARED):
        models += [(m, os.path.join(SHARED, m)) for m in SHARED_MODELS]
    else:
        print("../shared/models is absent: shared models skipped", file=sys.stderr)
    for s in SAMPLES:
        path = os.path.join(work, s + ".onnx")
        if not os.path.exists(path):
            subprocess.run([kiln, "sample", s, "-o", path], check=True, stdout=subprocess.DEVNULL)
        models.append(("sample " + s, path))
    vit = os.path.join(work, "vit_b16.onnx")
    if not os.path.exists(vit):
        subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_vit.py"), vit], check=True)
    models.append(("ViT-B/16 export", vit))
    models = [m for m in models if a.only in m[0]]
    threads = [int(t) for t in a.threads.split(",")]
    rows = []
    for name, path in models:
        for t in threads:
            row = {"model": name, "threads": t or "all"}
            best = {}
            binding = {}  # Kiln runs first: ORT then gets the extents Kiln bound to the model's symbolic dims
            for _ in range(a.runs):
                for side in ("kiln", "ort"):
                    try:
                        r = ort_time(work, path, 1, t, binding) if side == "ort" else kiln_time(kiln, path, t)
                        binding = r.pop("binding", binding)
                    except RuntimeError as e:
                        row[side + "_error"] = str(e)[:160]
                        continue
                    for k, v in r.items():
                        if isinstance(v, (int, float)) and not isinstance(v, bool) and k != "arena_bytes":
                            best[side + ":" + k] = min(best.get(side + ":" + k, v), v)
                        elif k == "arena_bytes":
                            row[k] = v
                        elif k == "version":
                            row["ort_version"] = v
            ort_ms = best.get("ort:best_ms")
            ref, comp = best.get("kiln:reference_ms"), best.get("kiln:compiled_ms")
            row.update({"ort_ms": ort_ms, "reference_ms": ref, "compiled_ms": comp,
                        "peak_rss_mib": best.get("kiln:peak_rss_mib"),
                        "reference_over_ort": ref / ort_ms if ref and ort_ms else None,
                        "compiled_over_reference": comp / ref if comp and ref else None})
            rows.append(row)
            fmt = lambda v, f="%.1f": (f % v) if isinstance(v, (int, float)) else "missing"
            print("%-32s %4s  ORT %9s ms  ref %9s ms  comp %9s ms  ref/ORT %6s  comp/ref %5s%s" % (
                name[:32], row["threads"], fmt(ort_ms), fmt(ref), fmt(comp), fmt(row["reference_over_ort"], "%.2f"),
                fmt(row["compiled_over_reference"], "%.2f"),
                "  (" + "; ".join(row[k] for k in ("ort_error", "kiln_error") if k in row) + ")"
                if "ort_error" in row or "kiln_error" in row else ""), flush=True)
    # kiln verify of the resnet50 sample, wall time.
    verify = {}
    if "sample resnet50".find(a.only) >= 0 or a.only in "sample resnet50":
        t0 = time.perf_counter()
        p = subprocess.run([kiln, "verify", os.path.join(work, "resnet50.onnx")], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        verify = {"verify_resnet50_s": time.perf_counter() - t0, "exit": p.returncode}
        print("kiln verify (resnet50 sample): %.2f s (exit %d)" % (verify["verify_resnet50_s"], p.returncode))
    out = os.path.join(build, "bench_emulator_vs_ort.json")
    with open(out, "w") as f:
        json.dump({"rows": rows, **verify}, f, indent=1)
    print("wrote " + out)


if __name__ == "__main__":
    main()
