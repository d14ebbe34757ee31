#!/usr/bin/python3
"""Compare two option sets on one model, notebook-style: what each compile did, the memory plan and the simulated
latency, and (with --sweep) arena and latency against a symbolic dimension. Plots with matplotlib when it is
installed (Debian: python3-matplotlib), else prints the numbers.

usage: PYTHONPATH=build/python docs/examples/compare_options.py MODEL [--sweep SYMBOL=V1,V2,...] [--out PLOT.png]
"""
import argparse
import sys

import kiln

OPTION_SETS = {
    "fp16, O3 (ATC's defaults)": {},
    "fp32, O1 (no graph fusion)": {"precision_mode": "force_fp32", "oo_level": "O1"},
}


def summarise(label, r):
    s = r.summary
    latency = r.timeline()["latency_us"]
    slowest = sorted(r.passes, key=lambda p: -p["ms"])[:3]
    print("%-28s %6d -> %-6d nodes  arena %8.2f MiB (lower bound %.2f)  latency %9.1f µs  slowest passes: %s" % (
        label, r.nodes_before, r.nodes_after, s["arena_bytes"] / 2**20, s["lower_bound_bytes"] / 2**20, latency,
        ", ".join("%s %.0f ms" % (p["name"], p["ms"]) for p in slowest)))
    return s["arena_bytes"], latency


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--sweep", help="SYMBOL=V1,V2,...: compile at each value of a symbolic dimension")
    ap.add_argument("--out", default="compare_options.png")
    a = ap.parse_args()

    results = {}
    for label, options in OPTION_SETS.items():
        r = kiln.compile(a.model, options=options)
        if not r.ok:
            sys.exit("%s: %s" % (label, r.error))
        results[label] = summarise(label, r)

    sweep = {}
    if a.sweep:
        symbol, values = a.sweep.split("=", 1)
        for label, options in OPTION_SETS.items():
            points = []
            for v in (int(x) for x in values.split(",")):
                r = kiln.compile(a.model, options=dict(options, dim_values="%s:%d" % (symbol, v)))
                if r.ok:
                    points.append((v, r.summary["arena_bytes"] / 2**20, r.timeline()["latency_us"]))
            sweep[label] = points
            for v, arena, latency in points:
                print("  %-26s %s=%-6d arena %8.2f MiB  latency %9.1f µs" % (label, symbol, v, arena, latency))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: numbers only)")
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    if sweep:
        for label, points in sweep.items():
            axes[0].plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
            axes[1].plot([p[0] for p in points], [p[2] for p in points], marker="o", label=label)
        for ax in axes:
            ax.set_xlabel(a.sweep.split("=")[0])
            ax.legend()
    else:
        labels = list(results)
        axes[0].bar(labels, [results[k][0] / 2**20 for k in labels])
        axes[1].bar(labels, [results[k][1] for k in labels])
    axes[0].set_ylabel("arena (MiB)")
    axes[1].set_ylabel("simulated latency (µs)")
    fig.tight_layout()
    fig.savefig(a.out)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
