#!/usr/bin/python3
"""The emulator's speed against ONNX Runtime, measured in one run on this machine (issue 45's ratios).

For each model, taken in turn so that the machine's noise falls on all alike: ONNX Runtime CPU (npm onnxruntime-node,
all graph optimisations, ort_run_time.js) and Kiln's reference and compiled modes (`kiln run --set
precision_mode=force_fp32 --random 1 --json`: reference_ms and compiled_ms, with reference_prepare_ms and
compiled_prepare_ms apart, as ORT's session creation is apart from its runs; ORT runs on
zeros of the same extents Kiln bound to symbolic dims), each at one thread (KILN_THREADS=1, ORT intraOpNumThreads 1)
and at all threads. Each time is the best of --runs rounds, each round a fresh process per side that runs the model
once untimed-for-the-ratio and then once timed (ORT: a warm-up run, then the timed one; Kiln: `kiln run --repeat 2`,
whose first run — the first in the process: its memory and code touched for the first time — is kept apart as
reference_first_ms / compiled_first_ms and shown as the "first" ratio, the run a single `kiln run` reports). The
times are the runs' own, not the process's. Memory: the most a run added to Kiln's resident memory at its peak (the `memory` object of
`kiln run --json`) against the goal's budget of the weights plus twice the arena, and the whole process's peak; each
the worst of the runs. Also `kiln verify` of the resnet50 sample (wall time).

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
PEAK_WRAPPER = ("import resource, subprocess, sys\n"
                "r = subprocess.run(sys.argv[1:])\n"
                "sys.stderr.write('KILN_MAXRSS_KIB %d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
                "sys.exit(r.returncode)\n")


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
    # Kiln's own peak resident set: a wrapper whose only child is kiln reports it (this script's RUSAGE_CHILDREN
    # would mix in ONNX Runtime's node processes).
    p = subprocess.run([sys.executable, "-c", PEAK_WRAPPER, kiln, "run", model, "--set", "precision_mode=force_fp32",
                        "--random", "1", "--repeat", "2", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = p.stdout, p.stderr
    peak = [int(line.split()[1]) for line in err.splitlines() if line.startswith("KILN_MAXRSS_KIB ")]
    err = "\n".join(line for line in err.splitlines() if not line.startswith("KILN_MAXRSS_KIB "))
    try:
        j = json.loads(out)
    except ValueError:
        raise RuntimeError((err or "no output").strip().splitlines()[-1])
    if "reference_ms" not in j:
        raise RuntimeError(j.get("error", "no reference run"))
    binding = {s["symbol"]: s["value"] for s in (j.get("shape_binding") or {}).get("symbols", [])}
    mem = j.get("memory") or {}
    mib = lambda b: b / 2**20 if isinstance(b, (int, float)) else None
    return {"binding": binding, "reference_ms": j["reference_ms"], "compiled_ms": j.get("compiled_ms"),
            "reference_first_ms": j.get("reference_first_ms"), "compiled_first_ms": j.get("compiled_first_ms"),
            "compiled_prepare_ms": j.get("compiled_prepare_ms"), "arena_bytes": j.get("arena_bytes"),
            "reference_prepare_ms": j.get("reference_prepare_ms"),
            # The weights: the model's, or the compiled graph's where it folded weights computed at run time.
            "weights_mib": mib(max(mem.get("weights_bytes") or 0, mem.get("compiled_weights_bytes") or 0)), "reference_peak_mib": mib(mem.get("reference_peak_bytes")),
            "compiled_peak_mib": mib(mem.get("compiled_peak_bytes")),
            "process_peak_mib": peak[0] / 1024 if peak else None}


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
                            keep = max if k.endswith("_mib") else min  # times: the best run; memory: the worst
                            best[side + ":" + k] = keep(best.get(side + ":" + k, v), v)
                        elif k == "arena_bytes":
                            row[k] = v
                        elif k == "version":
                            row["ort_version"] = v
            ort_ms = best.get("ort:best_ms")
            ref, comp = best.get("kiln:reference_ms"), best.get("kiln:compiled_ms")
            # Memory: the most either run added to the process at its peak (`kiln run` measures it: VmHWM reset at
            # the run's start) against the goal's budget, the weights plus twice the arena; and the whole process's.
            weights = best.get("kiln:weights_mib")
            budget = weights + 2 * row["arena_bytes"] / 2**20 if weights is not None and row.get("arena_bytes") else None
            peaks = [best.get("kiln:reference_peak_mib"), best.get("kiln:compiled_peak_mib")]
            run_peak = max(peaks) if None not in peaks else None
            ref_first, comp_first = best.get("kiln:reference_first_ms"), best.get("kiln:compiled_first_ms")
            row.update({"ort_ms": ort_ms, "reference_ms": ref, "compiled_ms": comp,
                        "reference_first_ms": ref_first, "compiled_first_ms": comp_first,
                        "first_reference_over_ort": ref_first / ort_ms if ref_first and ort_ms else None,
                        "compiled_prepare_ms": best.get("kiln:compiled_prepare_ms"),
                        "reference_prepare_ms": best.get("kiln:reference_prepare_ms"),
                        "weights_mib": weights, "reference_peak_mib": peaks[0], "compiled_peak_mib": peaks[1],
                        "run_peak_over_budget": run_peak / budget if run_peak is not None and budget else None,
                        "process_peak_mib": best.get("kiln:process_peak_mib"),
                        "reference_over_ort": ref / ort_ms if ref and ort_ms else None,
                        "compiled_over_reference": comp / ref if comp and ref else None})
            rows.append(row)
            fmt = lambda v, f="%.1f": (f % v) if isinstance(v, (int, float)) else "missing"
            print("%-30s %3s  ORT %7s ms  ref %7s ms (first %s, +%s prep)  comp %7s ms (first %s, +%s prep)  "
                  "ref/ORT %5s (first %s)  comp/ref %4s  peak/budget %4s  process %s MiB%s" % (
                name[:30], row["threads"], fmt(ort_ms), fmt(ref), fmt(ref_first), fmt(row["reference_prepare_ms"], "%.0f"),
                fmt(comp), fmt(comp_first), fmt(row["compiled_prepare_ms"], "%.0f"),
                fmt(row["reference_over_ort"], "%.2f"), fmt(row["first_reference_over_ort"], "%.2f"),
                fmt(row["compiled_over_reference"], "%.2f"),
                fmt(row["run_peak_over_budget"], "%.2f"), fmt(row["process_peak_mib"], "%.0f"),
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
