// Robustness: thousands of mutated ONNX files (bit flips, overwritten varints, truncations, spliced bytes) made
// from the generated samples and, when present, the shared corpus. Every one must either load (and then infer,
// verify and go through Stage 1) or be refused with a LoadError — never crash, hang or allocate without bound.
#include <QDirIterator>
#include <QtTest>

#include <fstream>
#include <random>

#include "io/model_loader.h"
#include "io/onnx/onnx_reader.h"
#include "io/onnx/onnx_writer.h"
#include "ir/opdefs/shape_inference.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "samples/sample_models.h"

using namespace kiln;

namespace {

std::string mutate(const std::string& in, std::mt19937& rng) {
  std::string s = in;
  if (s.empty()) return s;
  std::uniform_int_distribution<size_t> pos(0, s.size() - 1);
  switch (rng() % 5) {
    case 0:  // flip a few bits
      for (int i = 0; i < 1 + static_cast<int>(rng() % 8); ++i) s[pos(rng)] ^= static_cast<char>(1u << (rng() % 8));
      break;
    case 1:  // a huge varint-looking run (lying length / count fields)
      for (size_t i = pos(rng), n = 0; i < s.size() && n < 9; ++i, ++n) s[i] = static_cast<char>(0xff);
      break;
    case 2:  // truncate
      s.resize(pos(rng));
      break;
    case 3: {  // duplicate a slice somewhere else
      const size_t a = pos(rng), len = std::min<size_t>(s.size() - a, 1 + rng() % 64);
      s.insert(pos(rng), s.substr(a, len));
      break;
    }
    default:  // random bytes
      for (int i = 0; i < 16; ++i) s[pos(rng)] = static_cast<char>(rng());
  }
  return s;
}

}  // namespace

class MutatedInputsTest : public QObject {
  Q_OBJECT
 private slots:
  void mutatedModelsNeverCrash() {
    std::vector<std::pair<std::string, std::string>> seeds;
    SampleOptions o;
    o.weights = false;
    o.layers = 2;
    for (const char* name : {"bert-base", "llama"}) seeds.emplace_back(name, writeOnnxBytes(*buildSample(name, o)));
    o.layers = 0;
    seeds.emplace_back("mobilenetv2", writeOnnxBytes(*buildSample("mobilenetv2", o)));
    const QString shared = QStringLiteral(KILN_SHARED_DIR) + "/models";
    for (const char* rel : {"/speech/silero_vad_v4.onnx", "/transformer/gpt2_one_layer.onnx", "/cnn/mnist.onnx",
                            "/transformer/attention_past_state.onnx"}) {
      std::ifstream f((shared + rel).toStdString(), std::ios::binary);
      if (f) seeds.emplace_back(rel, std::string(std::istreambuf_iterator<char>(f), {}));
    }
    std::mt19937 rng(20261130);
    int loaded = 0, refused = 0;
    for (int i = 0; i < 1500; ++i) {
      const auto& [name, bytes] = seeds[static_cast<size_t>(i) % seeds.size()];
      const std::string m = mutate(bytes, rng);
      try {
        OnnxImport imp = readOnnxBytes(m, name, "", {.runChecker = (i % 10 == 0)});
        inferShapes(*imp.model);
        verifyModel(*imp.model);
        if (i % 5 == 0) {  // some go through the whole Stage 1 too
          PassManager pm;
          Options opts;
          addStandardPasses(pm, opts);
          pm.run(*imp.model, opts);
        }
        ++loaded;
      } catch (const LoadError&) {
        ++refused;
      }
    }
    qInfo("1500 mutated models: %d loaded and compiled or refused cleanly (%d loaded, %d refused)", loaded + refused,
          loaded, refused);
    QCOMPARE(loaded + refused, 1500);
  }
};

QTEST_GUILESS_MAIN(MutatedInputsTest)
#include "test_mutated_inputs.moc"
