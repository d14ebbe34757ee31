// ResNet-50 v1.5 (torchvision's resnet50) as torch.onnx.export writes it in eval mode with Conv+BatchNorm left
// unfused, so the compiler's own fusion passes have something to do.
#include "samples/graph_builder.h"

namespace kiln::samples {
namespace {

Value* convBn(GraphBuilder& b, Value* x, const std::string& conv, const std::string& bn, int64_t cin, int64_t cout,
              int64_t kernel, int64_t stride, int64_t pad) {
  return b.batchNorm(b.conv(x, conv, cin, cout, kernel, stride, pad), bn, cout);
}

Value* relu(GraphBuilder& b, Value* x) {
  auto s = b.scope("relu");  // one nn.ReLU module, called after every BatchNorm of the block
  return b.relu(x);
}

// 1×1 reduce, 3×3 (v1.5 puts the stride here, not on the first 1×1), 1×1 expand to 4× planes, plus the shortcut
// (a strided 1×1 conv + BN whenever the shape changes).
Value* bottleneck(GraphBuilder& b, Value* x, int64_t cin, int64_t planes, int64_t stride) {
  const int64_t cout = planes * 4;
  Value* y = relu(b, convBn(b, x, "conv1", "bn1", cin, planes, 1, 1, 0));
  y = relu(b, convBn(b, y, "conv2", "bn2", planes, planes, 3, stride, 1));
  y = convBn(b, y, "conv3", "bn3", planes, cout, 1, 1, 0);
  Value* shortcut = x;
  if (stride != 1 || cin != cout) {
    auto s = b.scope("downsample");
    {
      auto conv = b.item(0);
      shortcut = b.conv(x, "", cin, cout, 1, stride, 0);
    }
    auto bn = b.item(1);
    shortcut = b.batchNorm(shortcut, "", cout);
  }
  return relu(b, b.add(y, shortcut));
}

}  // namespace

void buildResNet50(GraphBuilder& b, int layers) {
  // `layers` counts bottleneck blocks (16 = 3+4+6+3); other depths keep the four stages and their proportions.
  const std::vector<int> blocks = distributeBlocks(layers, {3, 4, 6, 3});
  Value* x = b.input("input", DType::Float, {Dim::fixed(1), Dim::fixed(3), Dim::fixed(224), Dim::fixed(224)});
  x = relu(b, convBn(b, x, "conv1", "bn1", 3, 64, 7, 2, 3));
  {
    auto s = b.scope("maxpool");
    x = b.op("MaxPool", {x},
             {intAttr("ceil_mode", 0), intsAttr("dilations", {1, 1}), intsAttr("kernel_shape", {3, 3}),
              intsAttr("pads", {1, 1, 1, 1}), intsAttr("strides", {2, 2})});
  }
  int64_t channels = 64;
  for (int stage = 0; stage < 4; ++stage) {
    auto s = b.scope("layer" + std::to_string(stage + 1));
    const int64_t planes = int64_t{64} << stage;
    for (int i = 0; i < blocks[stage]; ++i) {
      auto block = b.item(i);
      x = bottleneck(b, x, channels, planes, i == 0 && stage > 0 ? 2 : 1);
      channels = planes * 4;
    }
  }
  {
    auto s = b.scope("avgpool");  // AdaptiveAvgPool2d((1, 1)) exports as GlobalAveragePool
    x = b.op("GlobalAveragePool", {x});
  }
  x = b.op("Flatten", {x}, {intAttr("axis", 1)});
  b.output(b.gemm(x, "fc", channels, 1000), "output");
}

}  // namespace kiln::samples
