// MobileNetV2 (torchvision's mobilenet_v2, width 1.0, 224×224) as torch.onnx.export writes it with Conv+BatchNorm
// unfused: depthwise convolutions, ReLU6 as Clip(0, 6), linear bottlenecks and residual Adds.
#include "samples/graph_builder.h"

namespace kiln::samples {
namespace {

// Conv2dNormActivation: a Sequential of conv (0), BatchNorm (1) and ReLU6 (2). Opset 11+ Clip takes its bounds
// as inputs, which torch exports as constants.
Value* convBnRelu6(GraphBuilder& b, Value* x, int64_t cin, int64_t cout, int64_t kernel, int64_t stride,
                   int64_t group) {
  {
    auto s = b.item(0);
    x = b.conv(x, "", cin, cout, kernel, stride, (kernel - 1) / 2, group);
  }
  {
    auto s = b.item(1);
    x = b.batchNorm(x, "", cout);
  }
  auto s = b.item(2);
  return b.op("Clip", {x, b.scalar(0.0f), b.scalar(6.0f)});
}

// Expand 1×1 (skipped when the expansion is 1), depthwise 3×3, linear 1×1 projection (no activation: the
// "linear bottleneck"), and a residual Add when the block keeps the shape.
Value* invertedResidual(GraphBuilder& b, Value* x, int64_t cin, int64_t cout, int64_t stride, int64_t expand) {
  const int64_t hidden = cin * expand;
  Value* y = x;
  {
    auto s = b.scope("conv");
    int item = 0;
    if (expand != 1) {
      auto e = b.item(item++);
      y = convBnRelu6(b, y, cin, hidden, 1, 1, 1);
    }
    {
      auto dw = b.item(item++);
      y = convBnRelu6(b, y, hidden, hidden, 3, stride, hidden);
    }
    {
      auto pw = b.item(item++);
      y = b.conv(y, "", hidden, cout, 1, 1, 0);
    }
    auto bn = b.item(item++);
    y = b.batchNorm(y, "", cout);
  }
  return stride == 1 && cin == cout ? b.add(x, y) : y;
}

}  // namespace

void buildMobileNetV2(GraphBuilder& b, int layers) {
  struct Stage {
    int64_t expand, channels;
    int blocks;
    int64_t stride;
  };
  const std::vector<Stage> stages{{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                  {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  // `layers` counts inverted-residual blocks (17); other depths keep all seven stages and their proportions.
  std::vector<int> base;
  for (const Stage& st : stages) base.push_back(st.blocks);
  const std::vector<int> blocks = distributeBlocks(layers, base);

  Value* x = b.input("input", DType::Float, {Dim::fixed(1), Dim::fixed(3), Dim::fixed(224), Dim::fixed(224)});
  int64_t channels = 32;
  {
    auto features = b.scope("features");
    int feature = 0;
    {
      auto s = b.item(feature++);
      x = convBnRelu6(b, x, 3, channels, 3, 2, 1);
    }
    for (size_t i = 0; i < stages.size(); ++i) {
      for (int j = 0; j < blocks[i]; ++j) {
        auto s = b.item(feature++);
        x = invertedResidual(b, x, channels, stages[i].channels, j == 0 ? stages[i].stride : 1, stages[i].expand);
        channels = stages[i].channels;
      }
    }
    auto s = b.item(feature);
    x = convBnRelu6(b, x, channels, 1280, 1, 1, 1);
  }
  // The head is written in forward() (no module of its own): adaptive_avg_pool2d((1, 1)), flatten, classifier.
  x = b.op("GlobalAveragePool", {x});
  x = b.op("Flatten", {x}, {intAttr("axis", 1)});
  auto classifier = b.scope("classifier");
  auto linear = b.item(1);  // item 0 is Dropout, gone in eval mode
  b.output(b.gemm(x, "", 1280, 1000), "output");
}

}  // namespace kiln::samples
