#!/usr/bin/python3
"""Compile speed against ONNX Runtime, measured in one run on this machine (issue 24's ratios).

For each model: `kiln compile` with the history recorded (what the workbench and `kiln batch` always do) and without,
and ONNX Runtime CPU session creation at its extended optimisation level (`ort_session_time.js`), taken in turn
(kiln, kiln recorded, Kiln in a warm process, ORT) so that the machine's noise falls on all alike. Each figure is
the best of --runs.
Kiln's times are whole processes (start, load, compile, exit) measured from here; ORT's are session creations inside
one warm Node process, so those ratios lean against Kiln. Like for like, "in-proc" is Kiln's recorded compile in a
warm process too (`kiln_compile_time.py`: the Python module loads, compiles and records into a new history), and
"in-p/ORT" its ratio ("passes ms": Kiln's passes alone, as `kiln compile --json` reports them). Models: the shared
CNNs and transformers (skipped when ../shared is absent), Kiln's generated samples, and a ViT-B/16-sized export
(make_vit.py). With --scale, also the time per node of generated llamas from about 1k to 100k nodes (no weights, no
names), recorded and not.

Prints a table and writes BUILD/bench_vs_ort.json. A model ORT (or Kiln) cannot take is listed with its error and
its ratio reported as missing, never as a pass.
usage: bench_vs_ort.py [--build BUILD] [--runs N] [--scale] [--only SUBSTRING]"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "models"))

SHARED_MODELS = ["cnn/light_resnet50.onnx", "cnn/light_densenet121.onnx", "cnn/light_inception_v2.onnx",
                 "cnn/ppocr_mobilenetv3_cls.onnx", "detection/ultraface_rfb_320.onnx", "transformer/gpt2_past.onnx",
                 "transformer/bert_toy_optimized.onnx", "transformer/tiny-random-gpt2-fp32_past.onnx"]
SAMPLES = [("resnet50", []), ("mobilenetv2", []), ("bert-base", []), ("llama", ["--layers", "32", "--no-weights"])]


def ensure_ort(work):
    if not os.path.isdir(os.path.join(work, "node_modules", "onnxruntime-node")):
        subprocess.run(["npm", "install", "--silent", "--ignore-scripts", "--no-audit", "--no-fund",
                        "onnxruntime-node"], cwd=work, check=True, stdout=subprocess.DEVNULL)
    shutil.copy(os.path.join(HERE, "ort_session_time.js"), work)


def time_kiln(kiln, model, history):
    """Wall time of one `kiln compile` process (ms), or raises with its message."""
    args = [kiln, "compile", model, "--json"]
    if history:
        if os.path.exists(history):
            os.remove(history)
        args += ["--history", history]
    t = time.perf_counter()
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ms = (time.perf_counter() - t) * 1000
    if p.returncode != 0:
        raise RuntimeError((p.stderr or p.stdout).strip().splitlines()[-1] if (p.stderr or p.stdout) else "failed")
    info = {}
    try:
        j = json.loads(p.stdout)
        info = {"nodes_after": j.get("nodes_after"), "passes_ms": j.get("ms")}
    except (ValueError, AttributeError):
        pass
    return ms, info


def time_ort(work, model):
    p = subprocess.run(["node", "ort_session_time.js", model, "1", "extended"], cwd=work, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed")
    j = json.loads(p.stdout)
    return j["best_ms"], j["version"]


def time_kiln_in_process(build, work, model):
    """Kiln's recorded compile in a warm process (kiln_compile_time.py), as ORT's session creation is timed."""
    p = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "kiln_compile_time.py"), build, model, "1", "--history",
                        os.path.join(work, "bench-inproc.db")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed")
    return json.loads(p.stdout)["best_ms"], None


def measure(kiln, work, label, model, runs, with_ort=True):
    row = {"model": label, "path": model}
    best = {"kiln_ms": None, "kiln_recorded_ms": None, "kiln_in_process_recorded_ms": None, "ort_extended_ms": None}
    errors = {}
    build = os.path.dirname(os.path.dirname(kiln))
    for _ in range(runs):
        for key, fn in (("kiln_ms", lambda: time_kiln(kiln, model, None)),
                        ("kiln_recorded_ms", lambda: time_kiln(kiln, model, os.path.join(work, "bench.db"))),
                        ("kiln_in_process_recorded_ms", lambda: time_kiln_in_process(build, work, model)),
                        ("ort_extended_ms", lambda: time_ort(work, model))):
            if key in errors or (not with_ort and key in ("ort_extended_ms", "kiln_in_process_recorded_ms")):
                continue
            try:
                ms, extra = fn()
                best[key] = ms if best[key] is None else min(best[key], ms)
                if key == "kiln_ms" and extra:
                    row["nodes_after"] = extra.get("nodes_after")
                    if extra.get("passes_ms") is not None:
                        row["kiln_passes_ms"] = min(row.get("kiln_passes_ms", extra["passes_ms"]), extra["passes_ms"])
                if key == "ort_extended_ms":
                    row["ort_version"] = extra
            except (RuntimeError, OSError, ValueError, KeyError) as e:
                errors[key] = str(e)[:200]
    row.update(best)
    if errors:
        row["errors"] = errors

    def ratio(a, b):
        return best[a] / best[b] if best[a] is not None and best[b] else None
    row["recorded_vs_ort"] = ratio("kiln_recorded_ms", "ort_extended_ms")
    # Like for like: both warm processes, load + compile (+ record) against load + optimise.
    row["in_process_recorded_vs_ort"] = ratio("kiln_in_process_recorded_ms", "ort_extended_ms")
    row["unrecorded_vs_ort"] = ratio("kiln_ms", "ort_extended_ms")
    row["recording_cost"] = ratio("kiln_recorded_ms", "kiln_ms")
    # What recording adds in ms: the ratio above rises whenever the compile itself gets faster.
    row["recording_ms"] = (best["kiln_recorded_ms"] - best["kiln_ms"]
                           if best["kiln_recorded_ms"] is not None and best["kiln_ms"] is not None else None)
    # The passes alone (in-process, the model loaded), against the whole of ORT's session creation (load included).
    row["passes_vs_ort"] = (row["kiln_passes_ms"] / best["ort_extended_ms"]
                            if row.get("kiln_passes_ms") is not None and best["ort_extended_ms"] else None)
    return row


def fmt(v, spec):
    return "missing" if v is None else format(v, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scale", action="store_true")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    kiln = os.path.join(build, "app", "kiln")
    if not os.access(kiln, os.X_OK):
        sys.exit("bench_vs_ort: %s not built (cmake --build --preset ci --target kiln)" % kiln)
    work = os.path.join(build, "ort")
    os.makedirs(work, exist_ok=True)
    ensure_ort(work)
    tmp = tempfile.mkdtemp(prefix="kiln-vs-ort-")
    models = []  # (label, path, command that writes it or None)
    if os.path.isdir(SHARED):
        models += [(m.split("/")[-1].replace(".onnx", ""), os.path.join(SHARED, m), None) for m in SHARED_MODELS]
    else:
        print("(../shared/models absent: shared models skipped)")
    for name, extra in SAMPLES:
        path = os.path.join(tmp, name + ".onnx")
        models.append(("sample " + name + (" " + " ".join(extra) if extra else ""), path,
                       [kiln, "sample", name] + extra + ["-o", path]))
    vit = os.path.join(tmp, "vit_b16.onnx")
    models.append(("ViT-B/16 export", vit, ["/usr/bin/python3", os.path.join(HERE, "make_vit.py"), vit]))

    rows = []
    head = "%-34s %8s %10s %10s %10s %10s %10s %8s %8s %8s %8s %8s %8s" % (
        "model", "nodes", "kiln ms", "recorded", "passes ms", "in-proc", "ORT ext", "rec/ORT", "kiln/ORT", "pass/ORT",
        "in-p/ORT", "rec cost", "rec +ms")
    print(head)
    for label, path, make in models:
        if a.only and a.only not in label:
            continue
        if make:
            subprocess.run(make, check=True, stdout=subprocess.DEVNULL)
        r = measure(kiln, work, label, path, a.runs)
        rows.append(r)
        if make:
            os.remove(path)
        print("%-34s %8s %10s %10s %10s %10s %10s %8s %8s %8s %8s %8s %8s%s" % (
            label[:34], fmt(r.get("nodes_after"), "d"), fmt(r["kiln_ms"], ".0f"), fmt(r["kiln_recorded_ms"], ".0f"),
            fmt(r.get("kiln_passes_ms"), ".0f"), fmt(r["kiln_in_process_recorded_ms"], ".0f"),
            fmt(r["ort_extended_ms"], ".0f"), fmt(r["recorded_vs_ort"], ".2f"), fmt(r["unrecorded_vs_ort"], ".2f"),
            fmt(r["passes_vs_ort"], ".2f"), fmt(r["in_process_recorded_vs_ort"], ".2f"),
            fmt(r["recording_cost"], ".2f"),
            fmt(None if r["recording_ms"] is None else int(round(r["recording_ms"])), "+d"),
            "  (" + "; ".join("%s: %s" % kv for kv in r["errors"].items()) + ")" if "errors" in r else ""), flush=True)

    scale = []
    if a.scale:
        print("\n%-22s %8s %10s %10s %12s %12s" % ("llama, no names", "nodes", "kiln ms", "recorded", "µs/node",
                                                  "rec µs/node"))
        for layers in (16, 160, 1600):
            path = os.path.join(tmp, "llama%d.onnx" % layers)
            subprocess.run([kiln, "sample", "llama", "--layers", str(layers), "--no-weights", "--names", "none",
                            "-o", path], check=True, stdout=subprocess.DEVNULL)
            # (layers 16, 160, 1600: about 1k, 10k and 100k nodes)
            r = measure(kiln, work, "llama %d layers" % layers, path, 1, with_ort=False)
            n = r.get("nodes_after")
            r["us_per_node"] = r["kiln_ms"] * 1000 / n if n and r["kiln_ms"] else None
            r["recorded_us_per_node"] = r["kiln_recorded_ms"] * 1000 / n if n and r["kiln_recorded_ms"] else None
            scale.append(r)
            print("%-22s %8s %10s %10s %12s %12s" % ("%d layers" % layers, fmt(n, "d"), fmt(r["kiln_ms"], ".0f"),
                                                   fmt(r["kiln_recorded_ms"], ".0f"), fmt(r["us_per_node"], ".1f"),
                                                   fmt(r["recorded_us_per_node"], ".1f")), flush=True)
        ends = [s for s in scale if s.get("recorded_us_per_node")]
        if len(ends) >= 2:
            print("time per node, largest / smallest (recorded): %.2f (goal <= 2)" %
                  (ends[-1]["recorded_us_per_node"] / ends[0]["recorded_us_per_node"]))
    shutil.rmtree(tmp, ignore_errors=True)
    out = os.path.join(build, "bench_vs_ort.json")
    with open(out, "w") as f:
        json.dump({"runs": a.runs, "models": rows, "scale": scale,
                   "note": "kiln_ms, kiln_recorded_ms: whole-process wall time; kiln_in_process_recorded_ms and ORT: "
                           "in a warm process (load + compile + record; load + session creation)"}, f, indent=2)
    print("\nJSON:", out, "(goals: recorded <= 1.0x ORT extended; recording cost <= 1.25x on gpt2_past, "
          "the llama-32 sample and bert-base; time per node flat within 2x from 1k to 100k nodes)")


if __name__ == "__main__":
    main()
