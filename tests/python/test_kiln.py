"""The kiln Python module against what the CLI and the engine say: graphs as loaded and after every pass, compiles
with option sets, histories, the emulator's arrays, the timeline, memory traces, batch summaries, and errors.
Run by CTest (test_python) with PYTHONPATH at the build tree's python/ and KILN_BIN at the kiln binary."""
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import kiln

KILN = os.environ.get("KILN_BIN", "kiln")
SHARED = os.environ.get("KILN_SHARED_DIR", "")


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "mobilenetv2.onnx"
    subprocess.run([KILN, "sample", "mobilenetv2", "-o", str(path)], check=True, stdout=subprocess.DEVNULL)
    return str(path)


@pytest.fixture(scope="module")
def dynamic_mlp(tmp_path_factory):
    """A Keras-style MLP with a symbolic batch: y = relu(x @ W1 + b1) @ W2 + b2."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(3)
    w1, b1 = rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    w2, b2 = rng.standard_normal((16, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="dense/MatMul"),
             helper.make_node("Add", ["h0", "b1"], ["h1"], name="dense/BiasAdd"),
             helper.make_node("Relu", ["h1"], ["h2"], name="dense/Relu"),
             helper.make_node("MatMul", ["h2", "w2"], ["h3"], name="dense_1/MatMul"),
             helper.make_node("Add", ["h3", "b2"], ["y"], name="dense_1/BiasAdd")]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
                              [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"),
                                                                           (b2, "b2"))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path_factory.mktemp("models") / "mlp.onnx"
    onnx.save(model, str(path))
    return str(path), (w1, b1, w2, b2)


def test_load_reads_the_graph_as_the_cli_does(sample):
    m = kiln.load(sample)
    g = m.graph
    inspect = json.loads(subprocess.run([KILN, "inspect", sample, "--json"], check=True, capture_output=True,
                                        text=True).stdout)
    assert len(g.nodes) == inspect["nodes"]
    counts = g.op_counts()
    assert counts.get("Conv", 0) > 0
    conv = next(n for n in g.nodes if n.op_type == "Conv")
    assert isinstance(conv.attrs, dict) and "strides" in conv.attrs
    assert all(isinstance(s, int) for s in conv.attrs["strides"])
    x = g.value_named(m.inputs[0])
    assert x.is_input and x.dtype == "fp32" and x.dims == [1, 3, 224, 224]
    # Edges and producers agree: every input of the Conv is a value of the graph.
    assert [v.id for v in g.inputs_of(conv.id)] and all(g.value(v.id) for v in g.inputs_of(conv.id))
    assert g.outputs_of(conv.id)[0].producer == conv.id


def test_compile_with_keyword_options_records_every_pass(sample, tmp_path):
    db = tmp_path / "runs.db"
    r = kiln.compile(sample, precision_mode="force_fp32", history=db)
    assert r.ok and r.status == "ok", r.error
    assert r.options["precision_mode"] == "force_fp32"
    names = [p["name"] for p in r.passes]
    assert "GraphFusion" in names and "MemoryAssignment" in names
    fusion = next(p for p in r.passes if p["name"] == "GraphFusion")
    assert sum(fusion["counters"].values()) > 0 and fusion["nodes_after"] < fusion["nodes_before"]
    s = r.summary
    assert 0 < s["lower_bound_bytes"] <= s["arena_bytes"] <= s["no_reuse_bytes"]
    assert len(r.graph) == r.nodes_after < r.nodes_before
    # The compiled graph computes in fp32 as asked: no fp16 tensors.
    assert not [v for v in r.graph.values if v.dtype == "fp16"]

    h = kiln.History(db)
    runs = h.runs()
    assert [x["id"] for x in runs] == [r.run_id] and runs[0]["status"] == "ok"
    passes = h.passes(r.run_id)
    assert len(passes) == len(r.passes) + 1 and passes[0]["seq"] == 0
    last = passes[-1]["seq"]
    assert sorted(n.id for n in h.graph(r.run_id, last).nodes) == sorted(n.id for n in r.graph.nodes)
    assert len(h.graph(r.run_id, 0).nodes) == r.nodes_before
    fused_at = next(p["seq"] for p in passes if p["name"] == "GraphFusion")
    d = h.pass_diff(r.run_id, fused_at)
    assert d.removed_nodes and d.added_nodes
    assert any("fusion.rule" in n.annotations for n in d.added_nodes)
    # diff(a, b) and diff(b, a) are mirror images.
    back = h.diff(r.run_id, last, 0)
    assert len(back.added_nodes) == len(h.diff(r.run_id, 0, last).removed_nodes)


def test_ge_dump_folder_imports_as_a_run(sample, tmp_path):
    dumps = tmp_path / "dumps"
    subprocess.run([KILN, "compile", sample, "--dump-dir", str(dumps), "--dump-format", "ge_proto"], check=True,
                   stdout=subprocess.DEVNULL)
    got = kiln.import_ge_dump(dumps, tmp_path / "imported.db")
    assert len(got["runs"]) == 1
    run = got["runs"][0]
    h = kiln.History(tmp_path / "imported.db")
    passes = h.passes(run["run"])
    assert run["stages"] == len(passes) > 1
    assert len(h.graph(run["run"], passes[-1]["seq"]).nodes) < len(h.graph(run["run"], 0).nodes)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "ge_proto_00000001_graph_1_PreRunBegin.txt").write_text("graph { garbage")
    with pytest.raises(kiln.Error, match="ge_proto_00000001"):
        kiln.import_ge_dump(tmp_path / "broken", tmp_path / "other.db")


def test_a_measured_profile_imports_beside_a_compile(dynamic_mlp, tmp_path):
    """An op_summary naming two of the compiled graph's nodes, one op Kiln never made and a torch_npu-style MatMulV2
    imports beside the run: two tasks matched by name, the MatMulV2 by GE's type and the logical output shape (the
    compiled graph holds it blocked), one not at all; History.measured reads the tasks back with their nodes."""
    path, _ = dynamic_mlp
    db = tmp_path / "measured.db"
    r = kiln.compile(path, history=db, options={"dim_values": "batch:32"})
    h = kiln.History(db)
    last = h.passes(r.run_id)[-1]["seq"]
    ops = [n for n in h.graph(r.run_id, last).nodes if n.op_type not in ("Constant",)][:2]
    assert len(ops) == 2
    csv = ["Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us),"
           "Block Dim,Input Shapes,Input Data Types,Output Shapes,Output Data Types"]
    rows = [(n.name, n.op_type) for n in ops] + [("not_in_the_graph", "Custom"), ("aclnnMm_MatMulV2", "MatMulV2")]
    for i, (name, op_type) in enumerate(rows):
        csv.append(f'0,1,{i},5,{name},{op_type},AI_CORE,{1000 + 10 * i}.5\t,{2 + i}.0,8,'
                   f'"""32,8""",FLOAT,"""32,16""",FLOAT')
    folder = tmp_path / "ASCEND_PROFILER_OUTPUT"
    folder.mkdir()
    (folder / "op_summary_1.csv").write_text("\r\n".join(csv) + "\r\n")
    got = kiln.import_profile(folder, db, run=r.run_id)
    assert got["run"] == r.run_id and not got["new_run"]
    assert got["tasks"] == 4 and got["matched_by_name"] == 2 and got["unmatched"] == 1
    assert got["matched_by_type_and_shape"] == 1
    m = kiln.History(db).measured(r.run_id)
    assert [t["node_id"] for t in m["tasks"][:2]] == [n.id for n in ops]
    assert m["tasks"][0]["start_us"] == 0 and m["tasks"][1]["start_us"] == 10
    assert m["tasks"][2]["node_id"] is None and m["tasks"][2]["matched_by"] == ""
    own = kiln.import_profile(folder / "op_summary_1.csv", db)
    assert own["new_run"] and own["matched_by_name"] == 4
    assert kiln.History(db).measured(own["run"])["tasks"][2]["matched_by"] == "name"


def test_an_om_runs_against_its_source(sample, tmp_path):
    """Kiln's own .om of the sample runs on the emulator through GE's op semantics, and against the ONNX model it came
    from every output and every op whose original names the .om keeps are within the fp32 gate."""
    om = tmp_path / "sample.om"
    subprocess.run([KILN, "compile", sample, "--set", "precision_mode=force_fp32", "-o", str(om)], check=True,
                   stdout=subprocess.DEVNULL)
    own = kiln.run(om)
    assert own["passed"] is True, own["reason"]
    r = kiln.run(om, reference=sample)
    assert r["passed"] is True, r["reason"]
    assert r["first_divergence"] is None
    assert len(r["nodes"]) > 30 and all(n["passed"] for n in r["nodes"])
    assert all(v["cosine"] >= 0.999 for v in r["verdicts"])
    with pytest.raises(kiln.Error, match="reference= compares a compiled GE file"):
        kiln.run(sample, reference=sample)


@pytest.mark.skipif(not os.path.isdir(os.path.join(SHARED, "models", "ascend")), reason="../shared/models/ascend absent")
def test_ge_files_load_as_models():
    ascend = os.path.join(SHARED, "models", "ascend")
    dump = kiln.load(os.path.join(ascend, "ge_dumps", "oam_tools_compile", "ge_proto_00000062_Build.txt"))
    assert len(dump.graph.nodes) == 170
    as_json = kiln.load(os.path.join(ascend, "atc", "msit_tdnn.om.json"))
    assert len(as_json.graph.nodes) > 100
    # A dump without weights does not run, and says why instead of passing.
    r = kiln.run(os.path.join(ascend, "ge_dumps", "oam_tools_compile", "ge_proto_00000062_Build.txt"))
    assert r["passed"] is None and "carries no data" in r["reason"]


def test_option_sets_compare(sample):
    fp16 = kiln.compile(sample)  # the default: force_fp16
    o1 = kiln.compile(sample, options={"oo_level": "O1"})
    assert fp16.ok and o1.ok
    # O1 turns graph fusion off: more nodes left.
    assert o1.nodes_after > fp16.nodes_after
    assert fp16.timeline()["latency_us"] > 0


def test_timeline_tasks(sample):
    r = kiln.compile(sample)
    t = r.timeline()
    kernels = [x for x in t["tasks"] if x["type"] == "KERNEL"]
    assert kernels and all(x["end_us"] >= x["start_us"] >= 0 for x in t["tasks"])
    assert max(x["end_us"] for x in t["tasks"]) <= t["latency_us"] + 1e-6
    assert {x["node"] for x in kernels} <= {n.id for n in r.graph.nodes}


def test_run_returns_arrays_and_an_honest_verdict(dynamic_mlp):
    path, (w1, b1, w2, b2) = dynamic_mlp
    x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    out = kiln.run(path, inputs={"x": x}, precision_mode="force_fp32")
    want = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    # The batch is bound by the array given (3), in the reference and the compiled run alike.
    assert out["reference"]["y"].shape == (3, 4) and out["outputs"]["y"].shape == (3, 4)
    np.testing.assert_allclose(out["reference"]["y"], want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out["outputs"]["y"], want, rtol=1e-3, atol=1e-3)
    assert out["passed"] is True and out["verdicts"][0]["cosine"] > 0.999
    assert out["metrics"]["functional"] is True
    # Under fp16 the verdict is the gate's, with its reason.
    half = kiln.run(path, inputs={"x": x})
    assert half["passed"] in (True, False) and half["reason"]


def test_errors_carry_the_cli_message(tmp_path, sample):
    with pytest.raises(kiln.Error, match="nope.onnx"):
        kiln.load(str(tmp_path / "nope.onnx"))
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage that is not a model")
    with pytest.raises(kiln.Error, match="bad.onnx"):
        kiln.compile(bad)
    # The history is opened while the model loads; a file made for a compile that never started goes again.
    with pytest.raises(kiln.Error, match="bad.onnx"):
        kiln.compile(bad, history=tmp_path / "never.db")
    assert not (tmp_path / "never.db").exists()
    with pytest.raises(kiln.Error, match="precision_mode"):
        kiln.compile(sample, precision_mode="half_please")
    with pytest.raises(kiln.Error, match="no_such_option"):
        kiln.compile(sample, options={"no_such_option": 1})
    notdb = tmp_path / "not_a_history.db"
    notdb.write_text("hello")
    with pytest.raises(kiln.Error, match="not_a_history.db"):
        kiln.History(notdb)
    with pytest.raises(kiln.Error, match="not_a_history.db"):
        kiln.compile(sample, history=notdb)
    assert notdb.read_text() == "hello"
    with pytest.raises(TypeError):
        kiln.compile(sample, options=42)


def test_plan_trace(tmp_path):
    trace = tmp_path / "trace.csv"
    rows = [(0, 0, 4, 100), (1, 1, 3, 50), (2, 3, 6, 80), (3, 4, 8, 60), (4, 5, 7, 40)]
    trace.write_text("id,lower,upper,size\n" + "".join("%d,%d,%d,%d\n" % r for r in rows))
    plan = kiln.plan_trace(trace, planner="exact")
    assert plan["lower_bound_bytes"] <= plan["arena_bytes"]
    bufs = plan["buffers"]
    for a in bufs:  # buffers live at the same time never overlap in memory
        for b in bufs:
            if a["id"] < b["id"] and a["lower"] < b["upper"] and b["lower"] < a["upper"]:
                assert a["offset"] + a["size"] <= b["offset"] or b["offset"] + b["size"] <= a["offset"]
    assert "exact" in kiln.planners()
    with pytest.raises(kiln.Error, match="trace.csv"):
        trace.write_text("id,lower,upper,size\n1,5,2,10\n")
        kiln.plan_trace(trace)


def test_read_batch_summary(sample, tmp_path):
    opts = tmp_path / "fp32.json"
    opts.write_text(json.dumps({"precision_mode": "force_fp32"}))
    out = tmp_path / "report"
    subprocess.run([KILN, "batch", "--models", sample, "--options", str(opts), "--out", str(out), "--timing-only",
                    "--quiet"], check=True, stdout=subprocess.DEVNULL)
    s = kiln.read_batch_summary(out / "summary.json")
    assert len(s["cases"]) == 1 and s["failed"] == 0
    case = s["cases"][0]  # its RunMetrics, gates and verdict, as summary.json holds them
    assert case["status"] == "ok" and case["latency_us"] > 0 and case["passed"] is True
    assert case["option_set"] == "fp32" and case["functional"] is False  # --timing-only: numerics not measured
    with pytest.raises(kiln.Error, match="summary.json"):
        (out / "summary.json").write_text("{\"cases\": 7}")
        kiln.read_batch_summary(out / "summary.json")


def test_long_work_releases_the_gil(sample):
    done = []
    t = threading.Thread(target=lambda: done.append(kiln.compile(sample)))
    t.start()
    spins = 0
    while t.is_alive():
        spins += 1
    t.join()
    assert done and done[0].ok
    # While the compile ran (hundreds of milliseconds), this thread kept running Python.
    assert spins > 1000


@pytest.mark.skipif(not os.path.isdir(os.path.join(SHARED, "models")), reason="../shared/models absent")
def test_symbolic_export_is_bound(tmp_path):
    r = kiln.compile(os.path.join(SHARED, "models", "transformer", "gpt2_past.onnx"))
    assert r.ok and r.summary["unsized_tensors"] == 0 and r.summary["arena_bytes"] > 0
