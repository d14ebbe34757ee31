// Structure found in graphs without name scopes (layout/repeat_blocks, layout/scope_tree): transformer layers and
// residual blocks become numbered groups named after what they hold; a layer that differs in a node still groups;
// scopes win when present; chunks are the last resort; and bad inputs — thousands of tiny disconnected pieces,
// names of odd characters, one long chain of one op — finish quickly and fall back cleanly. Real exports: the
// generated llama and bert-base with their names removed, and gpt2_past (12 layers) when ../shared is present.
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QFileInfo>
#include <QtTest>

#include "history/history_recorder.h"
#include "io/model_loader.h"
#include "ir/model.h"
#include "layout/pass_view.h"
#include "layout/repeat_blocks.h"
#include "layout/scope_tree.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "report/model_structure.h"
#include "samples/sample_models.h"
#include "support/control_flow_model.h"
#include "support/recorded_compile.h"

using namespace kiln;
using namespace kiln::layout;

namespace {

struct Builder {
  std::vector<ScopeTree::NodeName> nodes;
  int64_t next = 1;
  int64_t op(const std::string& type, std::vector<int64_t> inputs, const std::string& name = "") {
    const int64_t id = next++;
    nodes.push_back({id, name, type, std::move(inputs)});
    return id;
  }
  // A pre-LN transformer layer as an unfused export writes it: LayerNorm written out, attention, MLP with GELU.
  int64_t layer(int64_t x, bool oddOne = false) {
    auto norm = [&](int64_t in) {
      const int64_t mean = op("ReduceMean", {in});
      const int64_t centred = op("Sub", {in, mean});
      const int64_t sq = op("Pow", {centred});
      const int64_t var = op("ReduceMean", {sq});
      const int64_t eps = op("Add", {var});
      const int64_t sd = op("Sqrt", {eps});
      const int64_t n = op("Div", {centred, sd});
      return op("Add", {op("Mul", {n})});
    };
    const int64_t h = norm(x);
    const int64_t qkv = op("Add", {op("MatMul", {h})});
    const int64_t q = op("Transpose", {op("Reshape", {qkv})});
    const int64_t k = op("Transpose", {op("Reshape", {qkv})});
    const int64_t v = op("Transpose", {op("Reshape", {qkv})});
    int64_t scores = op("Div", {op("MatMul", {q, k})});
    if (oddOne) scores = op("Mul", {scores});  // one extra node in this layer
    const int64_t probs = op("Softmax", {op("Add", {scores})});
    const int64_t ctx = op("Reshape", {op("Transpose", {op("MatMul", {probs, v})})});
    const int64_t attn = op("Add", {x, op("Add", {op("MatMul", {ctx})})});
    const int64_t h2 = norm(attn);
    const int64_t up = op("Add", {op("MatMul", {h2})});
    const int64_t gelu = op("Mul", {op("Mul", {up, op("Add", {op("Erf", {op("Div", {up})})})})});
    return op("Add", {attn, op("Add", {op("MatMul", {gelu})})});
  }
};

// The root's repeat groups; with `word`, only those labelled so ("layer", "block").
std::vector<const ScopeGroup*> repeatGroups(const ScopeTree& t, const std::string& word = "") {
  std::vector<const ScopeGroup*> out;
  for (const auto& it : t.group(0).items)
    if (it.isGroup && t.group(int(it.id)).kind == ScopeGroup::Kind::Repeat &&
        t.group(int(it.id)).label.rfind(word, 0) == 0)
      out.push_back(&t.group(int(it.id)));
  return out;
}

std::string sharedModel(const char* path) { return std::string(KILN_SHARED_DIR) + "/models/" + path; }

// A generated sample exported the way unnamed exporters write it: every node name removed.
std::unique_ptr<Model> unnamed(const char* sample, int layers) {
  SampleOptions so;
  so.layers = layers;
  so.weights = false;
  auto m = buildSample(sample, so);
  for (Node* n : m->graph->nodes()) n->setName("");
  return m;
}

// The groups the workbench draws for the last pass of a compile of `model` recorded into a history under `dir`
// (compared with the pass before it, as the workbench opens a run).
ScopeTree compiledStructure(Model& model, const QTemporaryDir& dir) {
  HistoryDb db(dir.filePath("h.db").toStdString());
  const testing::RecordedCompile rec = testing::compileRecorded(model, db);
  if (rec.summary.status != RunStatus::Ok) return ScopeTree::build({});
  HistoryReader reader(db);
  const int last = reader.passes(rec.runId).back().seq;
  return ScopeTree::build(scopeNames(buildPassView(reader, rec.runId, last, last - 1)));
}

}  // namespace

class StructureTest : public QObject {
  Q_OBJECT

 private slots:
  void transformerLayersAreFoundAndNamed() {
    Builder b;
    int64_t x = b.op("Gather", {});  // the embedding
    for (int i = 0; i < 12; ++i) x = b.layer(x);
    b.op("MatMul", {x});
    const ScopeTree t = ScopeTree::build(b.nodes);
    const auto layers = repeatGroups(t);
    QVERIFY2(layers.size() == 12, qPrintable(QString::fromStdString(structureOutline(t))));
    QCOMPARE(QString::fromStdString(layers[2]->label).left(31), QString("layer 3 · Attention + MLP, 46 n"));
    QCOMPARE(layers[0]->instances, 12);
    // A layer starts with its norm and attention (where the residual crosses), not in the middle.
    const int64_t first = layers[0]->items.front().id;
    QVERIFY2(b.nodes[size_t(first - 1)].opType == "ReduceMean", b.nodes[size_t(first - 1)].opType.c_str());
  }

  void aLayerDifferingInOneNodeStillGroups() {
    Builder b;
    int64_t x = b.op("Gather", {});
    for (int i = 0; i < 8; ++i) x = b.layer(x, i == 5);
    const ScopeTree t = ScopeTree::build(b.nodes);
    const auto layers = repeatGroups(t);
    QVERIFY2(layers.size() == 8, qPrintable(QString::fromStdString(structureOutline(t))));
    QCOMPARE(layers[5]->totalNodes, layers[4]->totalNodes + 1);
  }

  void residualBlocksInACnn() {
    Builder b;
    int64_t x = b.op("Conv", {});
    for (int i = 0; i < 6; ++i) {
      const int64_t c1 = b.op("Relu", {b.op("BatchNormalization", {b.op("Conv", {x})})});
      const int64_t c2 = b.op("Relu", {b.op("BatchNormalization", {b.op("Conv", {c1})})});
      const int64_t c3 = b.op("BatchNormalization", {b.op("Conv", {c2})});
      x = b.op("Relu", {b.op("Add", {c3, x})});
    }
    b.op("Gemm", {b.op("Flatten", {b.op("GlobalAveragePool", {x})})});
    const ScopeTree t = ScopeTree::build(b.nodes, 20);
    const auto blocks = repeatGroups(t);
    QVERIFY2(blocks.size() == 6, qPrintable(QString::fromStdString(structureOutline(t))));
    QCOMPARE(QString::fromStdString(blocks[0]->label), QString("block 1 · Conv ×3 + residual, 10 nodes"));
  }

  void scopesWinWhenPresent() {
    Builder b;
    int64_t x = b.op("Gather", {}, "/embed/Gather");
    for (int i = 0; i < 6; ++i) {
      const size_t before = b.nodes.size();
      x = b.layer(x);
      for (size_t k = before; k < b.nodes.size(); ++k)
        b.nodes[k].name = "/encoder/layer." + std::to_string(i) + "/op" + std::to_string(k);
    }
    const ScopeTree t = ScopeTree::build(b.nodes);
    for (const ScopeGroup& g : t.groups()) QVERIFY(g.kind != ScopeGroup::Kind::Repeat);
    bool layer3 = false;
    for (const ScopeGroup& g : t.groups()) layer3 = layer3 || g.label == "layer.3";
    QVERIFY(layer3);
  }

  void badInputsFinishAndFallBack() {
    {  // thousands of tiny disconnected pieces
      Builder b;
      for (int i = 0; i < 20000; ++i) b.op(i % 3 ? "Relu" : "Sigmoid", {});
      QElapsedTimer timer;
      timer.start();
      const ScopeTree t = ScopeTree::build(b.nodes);
      QVERIFY2(timer.elapsed() < 20000, "bounded work");  // a hang guard, not a speed target
      int64_t total = 0;
      for (const auto& it : t.group(0).items) total += it.isGroup ? t.group(int(it.id)).totalNodes : 1;
      QCOMPARE(total, int64_t(20000));
    }
    {  // names of odd characters, empty scopes, a long chain of one op
      Builder b;
      int64_t x = b.op("Relu", {}, "////");
      for (int i = 0; i < 3000; ++i) x = b.op("Relu", {x}, i % 2 ? "a//b/\xe2\x9c\x93/\n" : "");
      const ScopeTree t = ScopeTree::build(b.nodes);
      QVERIFY(t.groups().size() >= 2);
      QCOMPARE(t.group(0).totalNodes, int64_t(3001));
    }
    {  // blocks too small to be layers: nothing is made of two nodes repeating
      std::vector<SequenceNode> seq(3);
      QCOMPARE(findRepeat(seq).blocks(), size_t(0));
    }
  }

  void generatedSamplesWithoutNames() {
    const ScopeTree llama = modelStructure(*unnamed("llama", 6)->graph);
    const auto layers = repeatGroups(llama);
    QVERIFY2(layers.size() == 6, qPrintable(QString::fromStdString(structureOutline(llama))));
    QVERIFY(layers[0]->description.find("Attention") != std::string::npos);
    const ScopeTree bert = modelStructure(*unnamed("bert-base", 4)->graph);
    QCOMPARE(repeatGroups(bert).size(), size_t(4));
    // kiln inspect's JSON form
    const Json j = structureToJson(bert);
    int repeats = 0;
    for (const Json& g : j.asArray())
      if (g.find("kind")->asString() == "repeat") {
        ++repeats;
        QCOMPARE(g.find("instances")->asInt(), int64_t(4));
        QVERIFY(g.find("children")->isArray());
      }
    QCOMPARE(repeats, 4);
  }

  // If's branches and a Loop nested in one of them: body groups after their owner, nested inside theirs, in the
  // structure (kind "body") and in the view a report draws (owners, body terminals, the body feeding its owner).
  void controlFlowBodiesAreGroups() {
    const auto cf = testing::makeControlFlowModel();
    const Graph& g = *cf->model.graph;
    const Node *relu = cf->relu, *thenNeg = cf->thenNeg, *ifNode = cf->ifNode, *loop = cf->loop, *twice = cf->twice;
    const Value* carried = twice->input(0);  // the Loop's carried value, a body input
    const ScopeTree t = modelStructure(g);
    QCOMPARE(t.group(0).totalNodes, int64_t(8));
    // Root: relu, check, then_branch, else_branch, out (bodies right after their owner).
    std::vector<std::string> root;
    for (const auto& it : t.group(0).items) root.push_back(it.isGroup ? t.group(int(it.id)).label : "#" + std::to_string(it.id));
    QCOMPARE(root.size(), size_t(5));
    QCOMPARE(root[1], "#" + std::to_string(ifNode->id()));
    QCOMPARE(QString::fromStdString(root[2]), QString("then_branch of If 'check'"));
    QCOMPARE(QString::fromStdString(root[3]), QString("else_branch of If 'check'"));
    const int elseGroup = t.groupOf(loop->id());
    QCOMPARE(t.group(elseGroup).kind, ScopeGroup::Kind::Body);
    QCOMPARE(t.group(elseGroup).owner, ifNode->id());
    QCOMPARE(t.group(elseGroup).totalNodes, int64_t(3));  // the Loop and its body's two nodes
    const int loopBody = t.groupOf(twice->id());
    QCOMPARE(QString::fromStdString(t.group(loopBody).label), QString("body of Loop 'repeat'"));
    QCOMPARE(t.group(loopBody).parent, elseGroup);
    const std::string json = structureToJson(t).dump();
    QVERIFY2(json.find("\"kind\":\"body\"") != std::string::npos, json.c_str());

    // Bodies listed in any order still land in their owner's group; an unknown owner falls back to the root.
    std::vector<ScopeTree::NodeName> names = structureNames(g);
    std::reverse(names.begin(), names.end());
    names.push_back({999, "orphan", "Relu", {}, 12345, "body"});
    const ScopeTree shuffled = ScopeTree::build(names);
    QCOMPARE(shuffled.group(shuffled.groupOf(twice->id())).parent, shuffled.groupOf(loop->id()));
    QCOMPARE(shuffled.groupOf(999), 0);

    const PassView v = passViewOf(g);
    QCOMPARE(v.ops, int64_t(3));      // relu, check, out
    QCOMPARE(v.bodyOps, int64_t(5));  // then: 2; else: the Loop and its body's 2
    QCOMPARE(v.node(twice->id())->owner, loop->id());
    QCOMPARE(QString::fromStdString(v.node(twice->id())->body), QString("body"));
    auto hasEdge = [&](int64_t from, int64_t to) {
      return std::any_of(v.edges.begin(), v.edges.end(), [&](const NodeEdge& e) { return e.from == from && e.to == to; });
    };
    QVERIFY(hasEdge(relu->id(), thenNeg->id()));                       // a captured value enters the body
    QVERIFY(hasEdge(inputTerminal(carried->id()), twice->id()));       // a body input is a terminal in it
    QVERIFY(hasEdge(outputTerminal(twice->output(0)->id()), loop->id()));  // the body yields to its owner
    QCOMPARE(v.node(inputTerminal(carried->id()))->owner, loop->id());
  }

  void gpt2PastShowsTwelveLayers() {
    const std::string path = sharedModel("transformer/gpt2_past.onnx");
    if (!QFileInfo::exists(QString::fromStdString(path))) QSKIP("the shared corpus (../shared/models) is absent");
    const LoadedModel m = loadModel(path);
    const ScopeTree t = modelStructure(*m.model->graph);
    const auto layers = repeatGroups(t, "layer");
    QVERIFY2(layers.size() == 12, qPrintable(QString::fromStdString(structureOutline(t))));
    for (size_t i = 0; i < layers.size(); ++i)
      QVERIFY2(layers[i]->label.rfind("layer " + std::to_string(i + 1) + " · Attention + MLP", 0) == 0,
               layers[i]->label.c_str());
  }

  // After the compile, fused and inserted nodes stand where the nodes they came from stood: the layers are still
  // found (the workbench opens a run at its last pass).
  void compiledGraphsKeepTheirLayers() {
    QTemporaryDir tmp;
    auto llama = unnamed("llama", 6);
    const ScopeTree t = compiledStructure(*llama, tmp);
    QVERIFY2(repeatGroups(t, "layer").size() == 6, qPrintable(QString::fromStdString(structureOutline(t))));
    const std::string path = sharedModel("transformer/gpt2_past.onnx");
    if (!QFileInfo::exists(QString::fromStdString(path))) QSKIP("the shared corpus (../shared/models) is absent");
    QTemporaryDir tmp2;
    const LoadedModel m = loadModel(path);
    const ScopeTree g = compiledStructure(*m.model, tmp2);
    QVERIFY2(repeatGroups(g, "layer").size() == 12, qPrintable(QString::fromStdString(structureOutline(g))));
  }
};

QTEST_APPLESS_MAIN(StructureTest)
#include "test_structure.moc"
