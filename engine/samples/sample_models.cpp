#include "samples/sample_models.h"

#include <cstdio>
#include <stdexcept>

#include "ir/opdefs/shape_inference.h"
#include "samples/graph_builder.h"
#include "samples/quantize_sample.h"

namespace kiln {
namespace {

constexpr int kMaxLayers = 4096;
constexpr uint64_t kMaxWeightBytes = uint64_t{4} << 30;

struct Entry {
  SampleInfo info;
  void (*build)(samples::GraphBuilder&, int layers);
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> list{
      {{"resnet50",
        "ResNet-50 v1.5 classifier, 1×3×224×224 → 1000 classes, Conv and BatchNorm unfused. Layers: bottleneck "
        "blocks, spread over the four stages (at least one each).",
        16},
       samples::buildResNet50},
      {{"bert-base",
        "BERT-base encoder (hidden 768, 12 heads) over batch×sequence token ids and attention mask, LayerNorm and "
        "GELU written out. Layers: encoder layers.",
        12},
       samples::buildBertBase},
      {{"llama",
        "LLaMA-7B-shaped decoder (hidden 4096, 32 heads sharing 8 KV heads) with RMSNorm, rotary embeddings and "
        "SwiGLU written out. Layers: decoder layers; more than 4 need --no-weights.",
        32},
       samples::buildLlama},
      {{"mobilenetv2",
        "MobileNetV2 (width 1.0) classifier, 1×3×224×224 → 1000 classes, depthwise convolutions and ReLU6 as "
        "Clip. Layers: inverted-residual blocks, spread over the seven stages (at least one each).",
        17},
       samples::buildMobileNetV2},
  };
  return list;
}

std::string gib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(uint64_t{1} << 30));
  return buf;
}

}  // namespace

const std::vector<SampleInfo>& sampleCatalog() {
  static const std::vector<SampleInfo> catalog = [] {
    std::vector<SampleInfo> out;
    for (const Entry& e : entries()) out.push_back(e.info);
    return out;
  }();
  return catalog;
}

std::unique_ptr<Model> buildSample(const std::string& name, const SampleOptions& options) {
  const Entry* entry = nullptr;
  std::string known;
  for (const Entry& e : entries()) {
    if (e.info.name == name) entry = &e;
    known += (known.empty() ? "" : ", ") + e.info.name;
  }
  if (!entry) throw std::invalid_argument("unknown sample model '" + name + "' (known: " + known + ")");
  if (options.layers < 0 || options.layers > kMaxLayers)
    throw std::invalid_argument("--layers must be between 1 and " + std::to_string(kMaxLayers) + " (0 = default), got " +
                                std::to_string(options.layers));
  const int layers = options.layers ? options.layers : entry->info.defaultLayers;
  const samples::Quantization quantization = samples::parseQuantization(options.quantize);
  if (options.names != "scoped" && options.names != "numbered" && options.names != "none")
    throw std::invalid_argument("--names must be scoped, numbered or none, got '" + options.names + "'");

  if (options.weights) {
    // A counting pass sizes the weights before anything is allocated.
    samples::GraphBuilder counter(nullptr, options);
    entry->build(counter, layers);
    if (counter.weightBytes() > kMaxWeightBytes)
      throw std::invalid_argument(name + " with " + std::to_string(layers) + " layers would need " +
                                  gib(counter.weightBytes()) + " of weights (the limit is " + gib(kMaxWeightBytes) +
                                  "); use --no-weights for a shapes-only graph, or fewer --layers");
  }

  auto model = std::make_unique<Model>();
  model->irVersion = 8;
  model->opsets = {{"", 17}};
  model->producerName = "kiln-sample";
  model->graph->setName("main_graph");
  samples::GraphBuilder builder(model.get(), options);
  entry->build(builder, layers);
  // Typed like an export with value_info, so the file carries every shape.
  inferShapes(*model);
  if (quantization != samples::Quantization::None) {
    if (!options.weights) throw std::invalid_argument("--quantize needs the weights (drop --no-weights)");
    if (samples::quantizeModel(*model, quantization) == 0)
      throw std::invalid_argument(name + " has no Conv or MatMul with constant weights to quantize");
    model->producerName = "onnx.quantize";
  }
  return model;
}

}  // namespace kiln
