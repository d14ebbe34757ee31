// The files Ascend's toolchain writes, read generously: GE graph dumps (ge_proto text, ge_onnx text) with fields
// Kiln's schema does not know and names that are not UTF-8, dump folders sorted into compilations, `atc --mode=1`
// JSON, ATC's fusion_result.json in its four layouts. Small files written here cover each rule; the real files of
// ../shared/models/ascend/ (when present) must all open.
#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

#include "history/ge_dump_import.h"
#include "history/history_db.h"
#include "history/history_reader.h"
#include "io/atc/fusion_result.h"
#include "io/atc/om_json_reader.h"
#include "io/gedump/dump_files.h"
#include "io/gedump/ge_dump_reader.h"
#include "io/model_loader.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "util/load_error.h"
#include "util/text_encoding.h"

using namespace kiln;

namespace {

const Node* nodeNamed(const Graph& g, const std::string& name) {
  for (const Node* n : g.nodes())
    if (n->name() == name) return n;
  return nullptr;
}

std::string attrText(const Node& n, const std::string& key) {
  const Attribute* a = n.attr(key);
  const std::string* s = a ? a->get<std::string>() : nullptr;
  return s ? *s : std::string("<absent>");
}

void write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// A small Build-stage dump: Data -> Relu -> NetOutput, offsets and a stream on the Relu.
std::string smallDump(const std::string& graphName, const std::string& extraOpFields = {},
                      const std::string& extraDescFields = {}) {
  return "graph {\n  name: \"" + graphName + "\"\n"
         "  op { name: \"x\" type: \"Data\" input: \"\" attr { key: \"index\" value { i: 0 } }\n"
         "       input_desc { dtype: DT_FLOAT shape { dim: 1 dim: 4 } layout: \"ND\" }\n"
         "       output_desc { dtype: DT_FLOAT shape { dim: 1 dim: 4 } layout: \"ND\" } output_i: 1024 }\n"
         "  op { name: \"relu\" type: \"Relu\" input: \"x:0\" stream_id: 0 input_i: 1024 output_i: 0 " +
         extraOpFields +
         "\n       input_desc { dtype: DT_FLOAT shape { dim: 1 dim: 4 } layout: \"ND\" }\n"
         "       output_desc { dtype: DT_FLOAT shape { dim: 1 dim: 4 } layout: \"ND\" size: 512 " +
         extraDescFields +
         " } }\n"
         "  op { name: \"out\" type: \"NetOutput\" input: \"relu:0\" input_i: 0\n"
         "       input_desc { dtype: DT_FLOAT shape { dim: 1 dim: 4 } layout: \"ND\" } }\n"
         "}\n";
}

QString sharedAscend() { return QStringLiteral(KILN_SHARED_DIR) + "/models/ascend"; }

}  // namespace

class GeFilesTest : public QObject {
  Q_OBJECT
 private slots:
  // A field the schema does not know, anywhere, becomes a raw attribute of its op; the dump still loads.
  void unknownFieldsAreKeptAsRawAttributes() {
    std::vector<std::string> warnings;
    const auto m = gedump::readGeProtoDump(
        smallDump("g", "future_field: 7 future_msg { a: 1 b: \"two\" } [ext.thing]: 3",
                  "has_out_attr: true newer_desc_field: \"x\" dtype_hint: DT_SOMETHING_NEW"),
        "dump.txt", warnings);
    const Node* relu = nodeNamed(*m->graph, "relu");
    QVERIFY(relu);
    QCOMPARE(attrText(*relu, "raw.future_field"), std::string("7"));
    QCOMPARE(attrText(*relu, "raw.future_msg"), std::string("{ a: 1 b: \"two\" }"));
    QCOMPARE(attrText(*relu, "raw.[ext.thing]"), std::string("3"));
    QCOMPARE(attrText(*relu, "raw.output_desc[0].newer_desc_field"), std::string("\"x\""));
    QCOMPARE(attrText(*relu, "raw.output_desc[0].dtype_hint"), std::string("DT_SOMETHING_NEW"));
    QVERIFY(!relu->attr("raw.output_desc[0].has_out_attr"));  // a field GE's schema has: not raw
    bool said = false;
    for (const std::string& w : warnings) said = said || w.find("5 fields") != std::string::npos;
    QVERIFY2(said, warnings.empty() ? "no warning" : warnings[0].c_str());
    // GE's own byte size and plan are read.
    QCOMPARE(relu->annotation("om.output0.size"), std::string("512"));
    QVERIFY(m->precompiled);
    QCOMPARE(relu->annotation("mem.out"), std::string("output"));
  }

  // GE writes names in the machine's locale: GBK bytes are decoded, bytes that are no encoding at all are escaped.
  void namesThatAreNotUtf8AreDecoded() {
    std::vector<std::string> warnings;
    const std::string gbk = "\xD6\xD0\xCE\xC4";  // "中文" in GBK
    std::string text = smallDump("g");
    text.replace(text.find("\"relu\""), 6, "\"relu_" + gbk + "\"");
    text.replace(text.find("\"relu:0\""), 8, "\"relu_" + gbk + ":0\"");
    const auto m = gedump::readGeProtoDump(text, "dump.txt", warnings);
    QVERIFY(nodeNamed(*m->graph, "relu_\xE4\xB8\xAD\xE6\x96\x87"));
    QCOMPARE(displayableUtf8("a\xFF" "b"), std::string("a\\xFFb"));
    QVERIFY(isValidUtf8(displayableUtf8(std::string("\x80\x81\xFE", 3))));
  }

  void syntaxErrorsNameTheLine() {
    std::vector<std::string> warnings;
    try {
      gedump::readGeProtoDump("graph {\n  op { name: \"x\"\n  type: }\n}", "bad.txt", warnings);
      QFAIL("a broken dump was read");
    } catch (const LoadError& e) {
      QVERIFY2(e.describe().find("bad.txt: line 3") != std::string::npos, e.describe().c_str());
    }
    QVERIFY_THROWS_EXCEPTION(LoadError, gedump::readGeProtoDump(std::string(300, '{'), "deep.txt", warnings));
    QVERIFY_THROWS_EXCEPTION(LoadError, gedump::readGeProtoDump("name: \"only a name\"", "empty.txt", warnings));
  }

  void dumpNamesOfEveryRelease() {
    auto f = gedump::parseDumpName("/d/ge_proto_00026_afterUBMatch.txt");
    QVERIFY(f);
    QCOMPARE(f->index, int64_t{26});
    QCOMPARE(f->stage, std::string("afterUBMatch"));
    QVERIFY(f->graphId.empty());
    f = gedump::parseDumpName("ge_proto_00000012_graph_3_PreRunAfterPrepare.txt");
    QVERIFY(f);
    QCOMPARE(f->graphId, std::string("3"));
    QCOMPARE(f->stage, std::string("PreRunAfterPrepare"));
    f = gedump::parseDumpName("ge_proto_00015_OptimizeQuantGraph_FeGraphFusionAfter.txt");
    QVERIFY(f);
    QCOMPARE(f->stage, std::string("OptimizeQuantGraph_FeGraphFusionAfter"));
    f = gedump::parseDumpName("ge_onnx_00000001_graph_11_Build.pbtxt");
    QVERIFY(f && f->kind == gedump::DumpKind::GeOnnx && f->graphId == "11" && f->stage == "Build");
    QVERIFY(!gedump::parseDumpName("ge_proto_Build.txt"));
    QVERIFY(!gedump::parseDumpName("ge_proto_00001_Build.pbtxt"));
    QVERIFY(!gedump::parseDumpName("fusion_result.json"));
  }

  // A folder holding two graphs, both formats of one stage, files without graph ids and a process subfolder.
  void foldersAreSortedIntoCompilations() {
    QTemporaryDir tmp;
    const std::string d = tmp.path().toStdString();
    write(d + "/ge_proto_00000001_graph_1_PreRunBegin.txt", smallDump("a"));
    write(d + "/ge_proto_00000003_graph_1_Build.txt", smallDump("a"));
    write(d + "/ge_onnx_00000003_graph_1_Build.pbtxt", "ir_version: 6\nproducer_name: \"GE\"\n");
    write(d + "/ge_proto_00000002_graph_2_Build.txt", smallDump("b"));
    write(d + "/ge_proto_00007_Build.txt", smallDump("named_c"));  // no id: its root graph's name
    write(d + "/ge_proto_00009_afterUBMatch.txt", smallDump("named_c"));
    write(d + "/notes.txt", "not a dump");
    write(d + "/pid_7/ge_proto_00000001_graph_1_PreRunBegin.txt", smallDump("a"));
    const gedump::DumpListing l = gedump::listDumps({d});
    QCOMPARE(l.groups.size(), size_t(4));
    std::map<std::string, size_t> stages;
    for (const auto& g : l.groups) stages[g.label] = g.files.size();
    const std::string top = std::filesystem::path(d).filename().string();
    QCOMPARE(stages["graph 1 in " + top], size_t(2));
    QCOMPARE(stages["graph 2 in " + top], size_t(1));
    QCOMPARE(stages["graph 'named_c' in " + top], size_t(2));
    QCOMPARE(stages["graph 1 in pid_7"], size_t(1));
    QCOMPARE(l.skipped.size(), size_t(1));  // the ge_onnx twin of a ge_proto stage
    QCOMPARE(l.others.size(), size_t(1));
    // One run per compilation, with the stages in index order.
    HistoryDb db(tmp.filePath("h.db").toStdString());
    const gedump::ImportResult r = gedump::importDumps({d}, db);
    QCOMPARE(r.runs.size(), size_t(4));
    HistoryReader reader(db);
    for (const auto& run : r.runs)
      if (run.label == "graph 1 in " + top) {
        const auto passes = reader.passes(run.runId);
        QCOMPARE(passes.size(), size_t(2));
        QCOMPARE(passes[1].name, std::string("Build"));
      }
    QVERIFY_THROWS_EXCEPTION(LoadError, gedump::listDumps({d + "/pid_7/none"}));
  }

  // GE's ONNX text: descriptors spelled as attributes, subgraphs as "subgraph" nodes linked by name.
  void geOnnxTextIsTheSameGraph() {
    const std::string text =
        "ir_version: 6\nproducer_name: \"GE\"\ngraph {\n"
        "  node { output: \"d:0\" name: \"d\" op_type: \"ge:Data\" input: \"\"\n"
        "    attribute { name: \"output_desc_dtype:0\" s: \"DT_FLOAT\" type: STRING }\n"
        "    attribute { name: \"output_desc_shape:0\" ints: 2 ints: 3 type: INTS }\n"
        "    attribute { name: \"output_desc_layout:0\" s: \"ND\" type: STRING }\n"
        "    attribute { name: \"output_desc_cmps_size:0\" i: 0 type: INT }\n"
        "    attribute { name: \"output_desc_future:0\" i: 5 type: INT }\n"
        "    attribute { name: \"index\" i: 0 type: INT } }\n"
        "  node { input: \"d:0\" output: \"g_sub_0_PartitionedCall_0:0\" name: \"g_sub_0_PartitionedCall_0\"\n"
        "    op_type: \"ge:PartitionedCall\"\n"
        "    attribute { name: \"output_desc_dtype:0\" s: \"DT_FLOAT\" type: STRING }\n"
        "    attribute { name: \"output_desc_shape:0\" ints: 2 ints: 3 type: INTS }\n"
        "    attribute { name: \"stream_id\" i: 1 type: INT }\n"
        "    attribute { name: \"output_i\" ints: 64 type: INTS } }\n"
        "  node { input: \"g_sub_0_PartitionedCall_0:0\" name: \"out\" op_type: \"ge:NetOutput\" }\n"
        "  node { name: \"g_sub_0\" op_type: \"subgraph\" attribute { name: \"graph\" type: GRAPH g {\n"
        "    node { output: \"a:0\" name: \"a\" op_type: \"ge:Data\"\n"
        "      attribute { name: \"output_desc_dtype:0\" s: \"DT_FLOAT\" type: STRING } }\n"
        "    node { input: \"a:0\" name: \"o\" op_type: \"ge:NetOutput\" }\n"
        "    name: \"g_sub_0\" } } }\n"
        "  name: \"g\"\n}\n";
    std::vector<std::string> warnings;
    const auto m = gedump::readGeOnnxDump(text, "ge_onnx_00000001_graph_1_Build.pbtxt", warnings);
    const Node* call = nodeNamed(*m->graph, "g_sub_0_PartitionedCall_0");
    QVERIFY(call);
    QCOMPARE(call->opType(), std::string("PartitionedCall"));
    QCOMPARE(call->subgraphs().size(), size_t(1));
    QCOMPARE(call->subgraphs()[0]->name(), std::string("g_sub_0"));
    QCOMPARE(call->annotation("om.stream_id"), std::string("1"));
    QCOMPARE(call->annotation("om.output_offsets"), std::string("64"));
    const Node* d = nodeNamed(*m->graph, "d");
    QCOMPARE(d->output(0)->type().toString(), std::string("fp32[2×3]"));
    const Attribute* future = d->attr("raw.output_desc[0].future");
    QVERIFY(future && future->get<int64_t>() && *future->get<int64_t>() == 5);
    QVERIFY(!d->attr("raw.output_desc[0].cmps_size"));
    QCOMPARE(m->graph->outputs().size(), size_t(1));
  }

  void atcJsonIsTheOmsModel() {
    const std::string json = R"({"name": "m", "version": 1,
      "attr": [{"key": "memory_size", "value": {"i": "4096"}}, {"key": "soc_version", "value": {"s": "Ascend310"}},
               {"key": "tasks", "value": null}],
      "graph": [{"name": "g", "op": [
        {"name": "x", "type": "Data", "output_desc": [{"dtype": "DT_FLOAT16", "shape": {"dim": [1, 8]}}],
         "output_i": [4096], "attr": [{"key": "index", "value": {"i": 0}}]},
        {"name": "r", "type": "Relu", "input": ["x:0"], "output_i": [0], "stream_id": 0, "brand_new": [1, 2],
         "output_desc": [{"dtype": "DT_FLOAT16", "shape": {"dim": [1, 8]}, "size": 512}]},
        {"name": "o", "type": "NetOutput", "input": ["r:0"]}]}]})";
    std::vector<std::string> warnings;
    const auto m = atc::readOmJson(json, "m.json", warnings);
    QVERIFY(m->precompiled);
    QCOMPARE(attrText(*nodeNamed(*m->graph, "r"), "raw.brand_new"), std::string("[1,2]"));
    bool memory = false;
    for (const auto& [k, v] : m->metadata) memory = memory || (k == "om.memory_size" && v == "4096");
    QVERIFY(memory);
    QVERIFY_THROWS_EXCEPTION(LoadError, atc::readOmJson(R"({"name": "no graph"})", "x.json", warnings));
    QVERIFY_THROWS_EXCEPTION(LoadError, atc::readOmJson(R"({"graph": [[1]]})", "x.json", warnings));
    QVERIFY_THROWS_EXCEPTION(LoadError, atc::readOmJson("{\"graph\": ", "x.json", warnings));
  }

  void fusionResultInEveryLayout() {
    const std::string entry = R"("graph_fusion": {"A": {"match_times": "3", "effect_times": "2"}},
                                 "ub_fusion": {"U": {"match_times": 4, "effect_times": 4}})";
    auto r = atc::parseFusionResult("{\"graphId\": \"1\", \"sessionId\": \"0\", " + entry + "}{\"graphId\": \"5\", " +
                                        entry + "}",
                                    "f.json");
    QCOMPARE(r.layout, std::string("concatenated"));
    QCOMPARE(r.passes.size(), size_t(4));
    QCOMPARE(r.passes[0].graph, std::string("0_1"));
    QCOMPARE(r.passes[2].graph, std::string("5"));
    QCOMPARE(r.passes[1].kind, std::string("ub"));
    QCOMPARE(r.passes[1].match, int64_t{4});
    r = atc::parseFusionResult("[{\"session_and_graph_id\": \"0_11\", " + entry + "}]", "f.json");
    QCOMPARE(r.layout, std::string("array"));
    QCOMPARE(r.passes[0].graph, std::string("0_11"));
    r = atc::parseFusionResult("{" + entry + "}", "f.json");
    QCOMPARE(r.layout, std::string("single"));
    QCOMPARE(r.passes[0].graph, std::string());
    r = atc::parseFusionResult("{\"session_and_graph_id_0_3\": {" + entry + "}}", "f.json");
    QCOMPARE(r.layout, std::string("keyed"));
    QCOMPARE(r.passes[0].graph, std::string("0_3"));
    QCOMPARE(r.passes[0].effect, int64_t{2});
    // Counts that are not counts: the pass is skipped and said.
    r = atc::parseFusionResult(R"({"graph_fusion": {"A": {"match_times": "x", "effect_times": "1"}, "B": 3}})", "f.json");
    QCOMPARE(r.passes.size(), size_t(0));
    QCOMPARE(r.warnings.size(), size_t(2));
    QVERIFY_THROWS_EXCEPTION(LoadError, atc::parseFusionResult("", "f.json"));
    QVERIFY_THROWS_EXCEPTION(LoadError, atc::parseFusionResult("\"text\"", "f.json"));
    QVERIFY_THROWS_EXCEPTION(LoadError, atc::parseFusionResult("{\"graph_fusion\": ", "f.json"));
  }

  // Every file of ../shared/models/ascend/ opens: dumps and om JSON as models, fusion results as reports, the dump
  // folders as compilations.
  void everySharedAscendFileOpens() {
    if (!QFileInfo(sharedAscend()).isDir()) QSKIP(qPrintable(sharedAscend() + " not found (tests that need ../shared skip)"));
    int models = 0, reports = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(sharedAscend().toStdString())) {
      if (!e.is_regular_file()) continue;
      const std::string p = e.path().string();
      if (p.find("/msprof/") != std::string::npos) {  // measurements, not models: refused with a clear message
        if (p.ends_with(".json")) QVERIFY_THROWS_EXCEPTION(LoadError, loadModel(p));
        continue;
      }
      const ModelFormat f = detectModelFormat(p);
      if (f == ModelFormat::FusionResult) {
        QVERIFY2(!atc::readFusionResult(p).passes.empty(), p.c_str());
        ++reports;
      } else if (isGeFormat(f)) {
        const LoadedModel m = loadModel(p);
        QVERIFY2(m.model->graph->numNodes() > 0, p.c_str());
        ++models;
      }
    }
    QVERIFY2(models >= 8 && reports >= 5, qPrintable(QString("%1 models, %2 reports").arg(models).arg(reports)));
    // ResNet-50 as GE built it: 170 ops, 50 Conv2D, its Conv2D ops name the framework ops they absorbed.
    const LoadedModel resnet = loadModel((sharedAscend() + "/ge_dumps/oam_tools_compile/ge_proto_00000062_Build.txt").toStdString());
    QCOMPARE(resnet.model->graph->numNodes(), size_t(170));
    int conv = 0;
    for (const Node* n : resnet.model->graph->nodes()) conv += n->opType() == "Conv2D";
    QCOMPARE(conv, 50);
    // The subgraphs GE's PartitionedCall ops name are the ops' bodies, in both formats.
    for (const char* name : {"ge_proto_00000001_Build.txt", "ge_onnx_00000001_graph_11_Build.pbtxt"}) {
      const LoadedModel m = loadModel((sharedAscend() + "/ge_dumps/oam_tools_370/" + name).toStdString());
      int bodies = 0;
      for (const Node* n : m.model->graph->nodes()) bodies += int(n->subgraphs().size());
      QCOMPARE(bodies, 4);
      QCOMPARE(m.model->graph->numNodesRecursive(), size_t(18));
    }
  }
};

QTEST_GUILESS_MAIN(GeFilesTest)
#include "test_ge_files.moc"
