// kiln:TransDataCast(x) -> y: a layout conversion and an element type conversion in one pass over the data (GE's
// TransData+Cast fusion), so the tensor is read and written once instead of twice. Attributes: TransData's
// (src_format, dst_format, origin_shape) plus Cast's `to`; `cast_first` (0/1) says which conversion the original
// graph did first — the result is the same element values, but the padded extents follow the element size that
// was blocked.
#include <stdexcept>

#include "ir/graph.h"
#include "ir/opdefs/npu_format_ops.h"
#include "ir/opdefs/op_registry.h"

namespace kiln {
namespace {

void inferTransDataCast(Node& n) {
  const auto to = dtypeFromOnnx(static_cast<int>(n.attrInt("to", 0)));
  if (!to || dtypeSize(*to) == 0) throw std::runtime_error("TransDataCast needs a fixed-size element type in 'to'");
  inferTransData(n);
  ValueType out = n.output(0)->type();
  out.dtype = *to;
  n.output(0)->setType(out);
}

}  // namespace

void registerNpuFormatOps(OpRegistry& registry, const OpDef& transData) {
  OpDef def = transData;
  def.type = "TransDataCast";
  def.infer = inferTransDataCast;
  registry.add(std::move(def));
}

}  // namespace kiln
