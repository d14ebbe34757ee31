// Coverage of ONNX Runtime's fusion test graphs (../shared/models/patterns/ort_fusion_suite, 241 tiny models whose
// names say the pattern): each file goes through the standard loader and the standard pipeline up to the end of
// GraphFusion, and the table below says which rule must fire at least once, or must not fire, on it. Rows for a
// rule that builtinFusionRules() does not have yet skip one by one, naming the rule, so they start checking as
// soon as it is merged. Files no row matches are "not targeted" (no Kiln rule claims their pattern), not failures.
// A row may name a known gap: a file the rule should handle (or leave) but does not yet, for a reason outside the
// rule's pattern (what Stage 1 or the reader make of the file). Its check is an expected failure (QEXPECT_FAIL):
// the reason is printed, and once the gap closes the unexpected pass fails the test until the row is updated.
// A summary (covered / total, fired as expected, known gaps) is printed at the end. Besides the table: two shared
// transformer models (ONNX Runtime test data too) fuse every block, and UB fusion keeps every suite graph valid.
#include <QDir>
#include <QRegularExpression>
#include <QtTest>
#include <algorithm>
#include <set>

#include "fusion/rules/builtin_rules.h"
#include "io/model_loader.h"
#include "ir/graph.h"
#include "fusion/graph_fusion_pass.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"

using namespace kiln;

namespace {

QString suiteDir() { return QStringLiteral(KILN_SHARED_DIR) + "/models/patterns/ort_fusion_suite"; }

enum class Expect { Fires, NoFusion };

// One family of files. `pass`/`counter`: where the fusion shows (GraphFusion counts each rule by its name). The
// first row whose glob matches a file decides; specific negatives come before their family.
struct Row {
  const char* glob;
  const char* pass;
  const char* counter;
  Expect expect;
  const char* why;          // for negatives
  const char* gap = nullptr;  // set: the expectation does not hold yet, for this reason
};

// ONNX Runtime registers LayerNormalization in the ONNX domain before opset 17; libonnx knows it only from 17 on.
// InferShape now runs its kernel for the shapes (kernel_shape_probe), which needs static inputs: with a symbolic
// batch, nothing after it has a shape, and no head split can be proven.
const std::vector<Row>& table() {
  static const std::vector<Row> rows{
      // --- attention (AttentionFusion)
      {"attention_past_*", "GraphFusion", "AttentionFusion", Expect::NoFusion,
       "GPT-2 with past: K and V are concatenated with the past state (and a causal mask); not the plain block"},
      {"gpt2_*", "GraphFusion", "AttentionFusion", Expect::NoFusion,
       "GPT-2 causal attention: Where/Slice causal mask and split QKV; not the plain block"},
      {"attention_distilbert.onnx", "GraphFusion", "AttentionFusion", Expect::Fires, ""},
      {"attention_int32_mask.onnx", "GraphFusion", "AttentionFusion", Expect::Fires, ""},
      {"attention_mask_no_cast.onnx", "GraphFusion", "AttentionFusion", Expect::Fires, ""},
      // LayerNormalization at opset 9 is read as LayerNormalization-17 (as ONNX Runtime does): its shape is inferred.
      {"attention_symbolic_batch.onnx", "GraphFusion", "AttentionFusion", Expect::Fires, ""},
      {"attention_*", "GraphFusion", "AttentionFusion", Expect::Fires, ""},
      // --- softmax family
      {"bias_softmax_*badaxis*", "GraphFusion", "BiasSoftmaxFusion", Expect::NoFusion,
       "the bias broadcasts inside a softmax row"},
      {"bias_softmax_*", "GraphFusion", "BiasSoftmaxFusion", Expect::Fires, ""},
      {"bias_dropout_*", "GraphFusion", "SoftmaxDropoutFusion", Expect::NoFusion,
       "Add + Dropout has no Softmax (Kiln has no BiasDropout rule)"},
      {"bitmask_bias_dropout_*", "GraphFusion", "SoftmaxDropoutFusion", Expect::NoFusion,
       "Add + Dropout has no Softmax (Kiln has no BiasDropout rule)"},
      // --- normalisation
      // ORT leaves this one alone because a Neg also reads the sum; kiln:AddLayerNorm emits the sum as its second
      // output for such readers, so the fusion is still sound here.
      {"skip_layer_norm_format3_no_fusion.onnx", "GraphFusion", "AddLayerNormFusion", Expect::Fires, ""},
      {"skip_layer_norm.onnx", "GraphFusion", "AddLayerNormFusion", Expect::NoFusion,
       "the centring subtracts the mean of X+Y from X, not from X+Y: no layer norm of the sum"},
      {"skip_layer_norm_no_beta_with_cast.onnx", "GraphFusion", "AddLayerNormFusion", Expect::Fires, ""},
      {"skip_layer_norm*with_cast*", "GraphFusion", "AddLayerNormFusion", Expect::Fires, "",
       "a Cast sits between the Add and the layer norm; AddLayerNormFusion does not look through Casts"},
      {"skip_layer_norm*", "GraphFusion", "AddLayerNormFusion", Expect::Fires, ""},
      {"simplified_layer_norm*", "GraphFusion", "RmsNormFusion", Expect::Fires, ""},
      {"layer_norm_t5*", "GraphFusion", "RmsNormFusion", Expect::Fires, ""},  // T5's LayerNorm is an RMSNorm
      {"layer_norm.onnx", "GraphFusion", "LayerNormFusion", Expect::Fires, "",
       "the normalised dim is symbolic ('None'): LayerNormFusion needs static normalised dims"},
      {"layer_norm_fusion_scale_bias.onnx", "GraphFusion", "LayerNormFusion", Expect::Fires, "",
       "a Cast sits between the centring and the variance; LayerNormFusion does not look through Casts "
       "(RmsNormFusion normalises the cast value instead)"},
      {"layer_norm*", "GraphFusion", "LayerNormFusion", Expect::Fires, ""},
      // --- GELU
      {"gelu_*use_graph_output*", "GraphFusion", "GeluFusion", Expect::NoFusion,
       "an intermediate of the GELU (the Div) is a graph output, so the ops cannot become one kernel"},
      {"bias_gelu*", "GraphFusion", "GeluFusion", Expect::Fires, ""},
      {"bias_onnx_fast_gelu*", "GraphFusion", "GeluFusion", Expect::Fires, ""},
      {"bias_onnx_gelu*", "GraphFusion", "GeluFusion", Expect::Fires, ""},
      {"fast_gelu*", "GraphFusion", "GeluFusion", Expect::Fires, ""},
      {"gelu*", "GraphFusion", "GeluFusion", Expect::Fires, ""},
      // --- transposes into MatMul / Gemm
      {"transpose_matmul_*invalid*", "GraphFusion", "TransposeMatMulFusion", Expect::NoFusion,
       "integer MatMul or a perm that is not a swap of the last two axes"},
      {"transpose_matmul_trans_batch_fusion_invalid*", "GraphFusion", "TransposeMatMulFusion", Expect::NoFusion,
       "the perm moves batch axes in a way no MatMul flag expresses"},
      {"transpose_matmul_trans_batch_fusion1.onnx", "GraphFusion", "TransposeMatMulFusion", Expect::Fires, ""},
      {"transpose_matmul_trans_batch*", "GraphFusion", "TransposeMatMulFusion", Expect::Fires, "",
       "the perm moves a batch axis next to the matrix (ORT's transBatch); Kiln's flags only swap the last two axes"},
      {"transpose_matmul_*from_transpose_scale_matmul*", "GraphFusion", "TransposeMatMulFusion", Expect::Fires, "",
       "the MatMul is ORT's contrib FusedMatMul (com.microsoft), which Kiln does not import as a MatMul"},
      {"transpose_matmul*", "GraphFusion", "TransposeMatMulFusion", Expect::Fires, ""},
      {"gemm_transpose_output_transposed.onnx", "GraphFusion", "TransposeMatMulFusion", Expect::Fires, "",
       "only a Transpose of the Gemm's result: folding it (swapping A and B) is not in Kiln"},
      {"gemm_transpose*", "GraphFusion", "TransposeMatMulFusion", Expect::Fires, ""},
      // --- convolutions
      {"conv_add*", "GraphFusion", "ConvBiasAddFusion", Expect::NoFusion,
       "the Add is a residual tensor [1,C,H,W], not a per-channel bias"},
      {"conv_softsign*", "GraphFusion", "ConvActivationFusion", Expect::NoFusion, "Softsign is no fusable activation"},
      {"conv_relu*", "GraphFusion", "ConvActivationFusion", Expect::Fires, ""},
      {"conv_with_padding_relu*", "GraphFusion", "ConvActivationFusion", Expect::Fires, ""},
      {"conv_clip*", "GraphFusion", "ConvActivationFusion", Expect::Fires, ""},
      {"conv_leakyrelu*", "GraphFusion", "ConvActivationFusion", Expect::Fires, ""},
      {"conv_sigmoid*", "GraphFusion", "ConvActivationFusion", Expect::Fires, ""},
      {"fuse-conv-bn*", "GraphFusion", "ConvBatchNormFusion", Expect::Fires, ""},
      {"negative-fuse-conv-add*", "GraphFusion", "ConvBiasAddFusion", Expect::NoFusion,
       "the bias is an overridable graph input, not a constant",
       "the reader takes an initializer also listed as a graph input as a constant (ONNX, IR >= 4: a default the "
       "caller may override)"},
      {"fuse-conv-add-mul*", "GraphFusion", "ConvBiasAddFusion", Expect::Fires, "",
       "the bias Add follows per-channel Muls; folding those into the weights (ConvMulFusion) is not in Kiln"},
      {"fuse-conv-add*", "GraphFusion", "ConvBiasAddFusion", Expect::Fires, ""},
  };
  return rows;
}

const Row* rowFor(const QString& file) {
  for (const Row& r : table())
    if (QRegularExpression(QRegularExpression::wildcardToRegularExpression(QString::fromLatin1(r.glob)))
            .match(file)
            .hasMatch())
      return &r;
  return nullptr;
}

std::set<std::string> builtinRuleNames() {
  std::set<std::string> names;
  for (const auto& r : builtinFusionRules()) names.insert(r->name());
  return names;
}

}  // namespace

class OrtFusionSuiteTest : public QObject {
  Q_OBJECT
  int total_ = 0, covered_ = 0, asExpected_ = 0, skipped_ = 0, gaps_ = 0;
  QStringList notTargeted_, failedToRun_;

 private slots:
  void initTestCase() {
    if (!QFileInfo(suiteDir()).isDir())
      QSKIP(qPrintable("ONNX Runtime fusion suite not found at " + suiteDir() + " (tests that need ../shared skip)"));
  }

  void eachFileFusesAsItsRowSays_data() {
    QTest::addColumn<QString>("file");
    const QStringList files = QDir(suiteDir()).entryList({"*.onnx"}, QDir::Files, QDir::Name);
    QVERIFY2(files.size() >= 200, qPrintable(QString("only %1 files in the suite").arg(files.size())));
    for (const QString& f : files) QTest::newRow(qPrintable(f)) << f;
  }
  void eachFileFusesAsItsRowSays() {
    QFETCH(QString, file);
    ++total_;
    const Row* row = rowFor(file);
    RunSummary run;
    std::string loadError;
    try {
      LoadedModel lm = loadModel((suiteDir() + "/" + file).toStdString());
      // Each file checks a rule's own tests on the symbolic shapes ORT's tests wrote (d_0..d_8): bound to the
      // policy's 1s, a bias that broadcasts inside a softmax row would no longer do so, and the negative case
      // would fuse correctly for that binding. So the rules meet the file's shapes as written.
      Options options;
      options.set("dim_values=keep");
      PassManager pm;
      addStandardPasses(pm, options);
      pm.setUntil("GraphFusion");
      run = pm.run(*lm.model, options);
    } catch (const std::exception& e) {
      loadError = e.what();
    }
    const bool ran = loadError.empty() && run.status != RunStatus::Failed;
    if (!ran) failedToRun_ << file + ": " + QString::fromStdString(loadError.empty() ? run.error : loadError);
    if (!row) {
      notTargeted_ << file;
      // No rule claims the file, but no rule may break it either.
      QVERIFY2(run.error.rfind("GraphFusion", 0) != 0, run.error.c_str());
      return;
    }
    ++covered_;
    const std::string pass = row->pass, counter = row->counter;
    if (pass == "GraphFusion" && !builtinRuleNames().count(counter)) {
      ++skipped_;
      QSKIP(qPrintable(QString("rule %1 is not in builtinFusionRules() yet").arg(row->counter)));
    }
    QVERIFY2(ran, qPrintable(failedToRun_.isEmpty() ? QString() : failedToRun_.last()));
    int64_t count = -1;
    for (const PassRecord& r : run.passes)
      if (r.name == pass) {
        auto it = r.counters.find(counter);
        count = std::max<int64_t>(count, 0) + (it == r.counters.end() ? 0 : it->second);
      }
    QVERIFY2(count >= 0, qPrintable("pass " + QString::fromStdString(pass) + " did not run"));
    const bool fired = count > 0;
    if (row->gap) {
      ++gaps_;
      QEXPECT_FAIL("", row->gap, Continue);
    }
    if (row->expect == Expect::Fires)
      QVERIFY2(fired, qPrintable(QString("%1 did not fire").arg(row->counter)));
    else
      QVERIFY2(!fired,
               qPrintable(QString("%1 fired %2 times; must not: %3").arg(row->counter).arg(count).arg(row->why)));
    if (!row->gap) ++asExpected_;
  }

  void sharedTransformersFuseEveryBlock_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("rule");
    // bert_toy_optimized: BERT written out, every Softmax is an attention block's. gather_roberta_e2e: training
    // graph, one Softmax followed by a live Dropout (training_mode true).
    QTest::newRow("bert_toy_optimized") << "transformer/bert_toy_optimized.onnx" << "AttentionFusion";
    QTest::newRow("gather_roberta_e2e") << "transformer/gather_roberta_e2e.onnx" << "SoftmaxDropoutFusion";
  }
  void sharedTransformersFuseEveryBlock() {
    QFETCH(QString, file);
    QFETCH(QString, rule);
    const QString path = QStringLiteral(KILN_SHARED_DIR) + "/models/" + file;
    if (!QFileInfo::exists(path)) QSKIP(qPrintable(path + " not found"));
    LoadedModel lm = loadModel(path.toStdString());
    int softmaxes = 0;
    for (const Node* n : lm.model->graph->nodes()) softmaxes += n->opType() == "Softmax";
    Options options;
    PassManager pm;
    addStandardPasses(pm, options);
    pm.setUntil("GraphFusion");
    const RunSummary run = pm.run(*lm.model, options);
    QVERIFY2(run.status != RunStatus::Failed, run.error.c_str());
    QCOMPARE(run.passes.back().name, std::string("GraphFusion"));
    const auto& counters = run.passes.back().counters;
    const auto it = counters.find(rule.toStdString());
    QVERIFY(softmaxes > 0);
    QCOMPARE(it == counters.end() ? 0 : int(it->second), softmaxes);
    for (const Node* n : lm.model->graph->nodes()) QVERIFY2(n->opType() != "Softmax", n->name().c_str());
  }

  void ubFusionKeepsEveryGraphValid() {
    // UB fusion after the whole standard pipeline, on every file that compiles: the verifier runs after the pass
    // (verify_each_pass), so a FusedElementwise that breaks a graph fails the run.
    int fused = 0, files = 0;
    for (const QString& f : QDir(suiteDir()).entryList({"*.onnx"}, QDir::Files, QDir::Name)) {
      std::unique_ptr<Model> model;
      try {
        model = std::move(loadModel((suiteDir() + "/" + f).toStdString()).model);
      } catch (const std::exception&) {
        continue;  // what the loader refuses is test_corpus's business
      }
      Options options;
      PassManager pm;
      addStandardPasses(pm, options);
      pm.add(Stage::Optimize, makeGraphFusionPass({makeElementwiseChainFusion()}, "UBFusion"));
      const RunSummary run = pm.run(*model, options);
      if (run.status == RunStatus::Failed && run.error.rfind("UBFusion", 0) != 0) continue;  // failed before it
      ++files;
      QVERIFY2(run.status == RunStatus::Ok, qPrintable(f + ": " + QString::fromStdString(run.error)));
      for (const PassRecord& r : run.passes)
        if (auto it = r.counters.find("ElementwiseChainFusion"); r.name == "UBFusion" && it != r.counters.end())
          fused += int(it->second);
    }
    qInfo("UB fusion over the suite: %d files compiled, %d element-wise chains fused", files, fused);
    QVERIFY(files >= 200);
    QVERIFY(fused > 0);
  }

  void cleanupTestCase() {
    if (!total_) return;
    qInfo("ORT fusion suite: %d files, %d covered by the table (%d not targeted), %d as expected, %d known gaps, "
          "%d skipped (rule not merged yet)",
          total_, covered_, int(notTargeted_.size()), asExpected_, gaps_, skipped_);
    qInfo("not targeted: %s", qPrintable(notTargeted_.join(", ")));
    for (const QString& f : failedToRun_) qInfo("did not compile: %s", qPrintable(f));
  }
};

QTEST_GUILESS_MAIN(OrtFusionSuiteTest)
#include "test_ort_fusion_suite.moc"
