"""Kiln's graph compiler, emulator and history from Python.

    import kiln
    m = kiln.load("model.onnx")                  # a Model: m.graph.nodes, m.graph.values, m.inputs
    r = kiln.compile("model.onnx", precision_mode="force_fp32", history="runs.db")
    r.passes                                      # one dict per pass: name, stage, ms, counters, nodes
    r.summary["arena_bytes"], r.timeline()["latency_us"]
    h = kiln.History("runs.db")
    h.graph(r.run_id, 5), h.diff(r.run_id, 4, 5)
    out = kiln.run("model.onnx", inputs={"x": array})   # emulated outputs as NumPy arrays, judged by the gate

Errors are raised as kiln.Error with the messages the `kiln` command prints.
"""
import os
import tempfile

from ._kiln import (CompileResult, Diff, Edge, Error, Graph, History, Model, Node, NodeChange, Value, ValueChange,
                    import_ge_dump, import_profile, load, option_schema, plan_trace, planners, read_batch_summary)
from . import _kiln

__all__ = ["CompileResult", "Diff", "Edge", "Error", "Graph", "History", "Model", "Node", "NodeChange", "Value",
           "ValueChange", "compile", "import_ge_dump", "import_profile", "load", "option_schema", "plan_trace", "planners", "read_batch_summary", "run"]


def compile(path, options=None, history=None, until=None, **keyword_options):
    """Compiles a model file with the standard pipeline (prepare -> optimize -> compile).

    options: a dict of option values or the path of an option file (JSON); keyword options override it
    (`compile(p, precision_mode="force_fp32", oo_level="O1")`; dotted keys through the dict:
    `options={"memory.planner": "exact"}`). history: a history database to record every pass in (created when
    absent). until: stop after this pass or stage. Returns a CompileResult; a failed pass is its status, not an
    exception (bad files and options raise kiln.Error)."""
    return _kiln._compile(os.fspath(path), options, keyword_options, None if history is None else os.fspath(history),
                          until)


def run(path, inputs=None, seed=None, options=None, history=None, reference=None, **keyword_options):
    """Compiles a model and emulates it: the original graph (reference) and the compiled graph on the same inputs.

    A graph GE compiled (an .om, a Build-stage dump with its weights) runs as GE built it, at GE's offsets, against
    its own graph computed in fp32; with reference=SOURCE.onnx against the model it came from instead, and the
    result also holds nodes (per op GE kept the names of: op, type, source_node, passed, reason, cosine) and
    first_divergence.

    inputs: a dict of input name -> NumPy array, or the path of a .npz or of a directory of input_<i>.pb; without
    it, the <model>_io.npz beside the model, else random data (`seed`, default 1). Given arrays fix the symbolic
    dims they fill. Returns a dict: outputs and reference (name -> array), verdicts (per output: passed, reason,
    cosine), passed (True/False, or None when the numerics could not be measured: never a pass), reason, timeline,
    metrics (the RunMetrics `kiln batch` records) and compile (the CompileResult)."""
    if isinstance(inputs, dict):
        import numpy as np
        with tempfile.TemporaryDirectory(prefix="kiln-inputs-") as tmp:
            archive = os.path.join(tmp, "inputs.npz")
            np.savez(archive, **{k: np.asarray(v) for k, v in inputs.items()})
            return _kiln._run(os.fspath(path), options, keyword_options, archive, seed,
                              None if history is None else os.fspath(history),
                              None if reference is None else os.fspath(reference))
    return _kiln._run(os.fspath(path), options, keyword_options, None if inputs is None else os.fspath(inputs), seed,
                      None if history is None else os.fspath(history),
                      None if reference is None else os.fspath(reference))
