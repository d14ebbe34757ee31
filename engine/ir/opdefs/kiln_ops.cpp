// Kiln's own NPU ops, with hand-written inference (libonnx knows nothing of them): the layout conversion (formats
// are part of the IR) and the fused ops the built-in fusion rules create.
#include <stdexcept>

#include "ir/graph.h"
#include "ir/opdefs/npu_format_ops.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {

// TransData(x) -> y: converts between layouts. Attributes: src_format, dst_format (Format names) and, when
// converting out of a blocked layout, origin_shape (the logical NCHW/ND extents the padding hides; -1 marks a dim
// the physical shape keeps, e.g. a symbolic batch). Symbolic dims outside the blocked axes survive the conversion.
void inferTransData(Node& n) {
  const Value* x = n.input(0);
  if (!x || !n.output(0)) throw std::runtime_error("TransData needs one input and one output");
  const auto dst = formatFromName(n.attrString("dst_format", ""));
  if (!dst) throw std::runtime_error("TransData has an unknown dst_format '" + n.attrString("dst_format", "") + "'");
  const auto src = formatFromName(n.attrString("src_format", std::string(formatName(x->type().format))));
  if (!src) throw std::runtime_error("TransData has an unknown src_format '" + n.attrString("src_format", "") + "'");
  ValueType out = x->type();
  out.format = *dst;
  if (!x->type().shape.rankKnown()) {  // layout known, extents not
    n.output(0)->setType(out);
    return;
  }
  const auto logical = logicalShape(x->type().shape, *src, n.attrInts("origin_shape"));
  if (!logical) throw std::runtime_error("TransData cannot recover the logical shape of " + x->type().shape.toString() +
                                         " from " + std::string(formatName(*src)));
  const auto phys = physicalShape(*logical, *dst, dtypeSize(x->type().dtype));
  if (!phys) throw std::runtime_error("TransData cannot express a " + logical->toString() + " tensor in " +
                                      std::string(formatName(*dst)));
  // Into a blocked layout the logical extents become the output's origin; out of one, the origin is gone.
  ValueType from = x->type();
  from.shape = *logical;
  from.format = isBlockedFormat(*src) ? (isBlockedFormat(*dst) ? x->type().originFormat : *dst) : *src;
  n.output(0)->setType(from.storedAs(*dst, *phys));
}

namespace {

// LayerNorm(X [, Scale [, Bias]]) / RmsNorm(X [, Scale]) -> Y, normalising over dims [axis, rank) with `epsilon`:
// Y has X's type.
void inferLayerNorm(Node& n) {
  const Value* x = n.input(0);
  if (!x || !n.output(0)) throw std::runtime_error(n.opType() + " needs an input X and an output");
  const int64_t axis = n.attrInt("axis", -1);
  if (x->type().shape.rankKnown()) {
    const auto rank = static_cast<int64_t>(x->type().shape.rank());
    if (axis < -rank || axis >= rank)
      throw std::runtime_error(n.opType() + " axis " + std::to_string(axis) + " is outside rank " + std::to_string(rank));
  }
  n.output(0)->setType(x->type());
}

}  // namespace

// Fused ops defined in their own files (kiln_attention_ops.cpp, kiln_elementwise_ops.cpp).
void registerKilnAttentionOps(OpRegistry& registry);
void registerKilnElementwiseOps(OpRegistry& registry);

void registerKilnOps(OpRegistry& registry) {
  registerKilnAttentionOps(registry);
  registerKilnElementwiseOps(registry);
  OpDef layerNorm;
  layerNorm.domain = std::string(kKilnDomain);
  layerNorm.type = "LayerNorm";
  layerNorm.minInputs = 1;
  layerNorm.maxInputs = 3;
  layerNorm.minOutputs = layerNorm.maxOutputs = 1;
  layerNorm.unit = ComputeUnit::Vector;
  layerNorm.inputNames = {"X", "Scale", "Bias"};
  layerNorm.outputNames = {"Y"};
  layerNorm.infer = inferLayerNorm;
  registry.add(layerNorm);
  // RmsNorm(X [, Scale]) -> Y: the same contract without the centring and the bias.
  OpDef rmsNorm = layerNorm;
  rmsNorm.type = "RmsNorm";
  rmsNorm.maxInputs = 2;
  rmsNorm.inputNames = {"X", "Scale"};
  registry.add(std::move(rmsNorm));

  OpDef transData;
  transData.domain = std::string(kKilnDomain);
  transData.type = "TransData";
  transData.minInputs = transData.maxInputs = 1;
  transData.minOutputs = transData.maxOutputs = 1;
  transData.unit = ComputeUnit::Vector;
  transData.inputNames = {"x"};
  transData.outputNames = {"y"};
  transData.infer = inferTransData;
  registerNpuFormatOps(registry, transData);
  registry.add(std::move(transData));
  registerKilnFusedOps(registry);
}

}  // namespace kiln
