// Pad: the opset 1/2 attribute form (paddings / pads, value) and the opset 11+ input form (pads, constant_value,
// opset 18 axes); modes constant, reflect, edge and wrap (opset 19). Elements are copied as bytes, so every
// fixed-size type works.
//
// Each output position along an axis maps to one input position (or to the constant): position o reads input
// o - begin, folded back into the input by the mode. A negative pad is a crop; folding relative to the whole input
// gives what the spec describes (pad the positive sides, then crop the negative ones).
#include <algorithm>

#include "kernels/kernel_util.h"
#include "ir/graph.h"

namespace kiln::kernels {
namespace {

enum class PadMode { Constant, Reflect, Edge, Wrap };

int64_t floorMod(int64_t a, int64_t m) { return ((a % m) + m) % m; }

// Input position read by output position `o` of an axis (-1: the constant). The periodic modes reduce o and begin
// separately, so a begin near INT64_MIN (a huge crop) cannot overflow o - begin.
int64_t sourceOf(PadMode mode, int64_t o, int64_t begin, int64_t in) {
  int64_t i = 0;
  if (__builtin_sub_overflow(o, begin, &i)) i = INT64_MAX;  // far past the end
  if (i >= 0 && i < in) return i;
  switch (mode) {
    case PadMode::Constant:
      return -1;
    case PadMode::Edge:
      return std::clamp<int64_t>(i, 0, in - 1);
    case PadMode::Wrap:
      return floorMod(o % in - begin % in, in);
    case PadMode::Reflect: {
      if (in == 1) return 0;
      const int64_t period = 2 * (in - 1);  // reflection without repeating the edge element, as numpy's "reflect"
      const int64_t j = floorMod(o % period - begin % period, period);
      return j < in ? j : period - j;
    }
  }
  return -1;
}

PadMode parseMode(const KernelContext& ctx) {
  const std::string m = ctx.node().attrString("mode", "constant");
  if (m == "constant") return PadMode::Constant;
  if (m == "reflect") return PadMode::Reflect;
  if (m == "edge") return PadMode::Edge;
  if (m == "wrap") return PadMode::Wrap;
  ctx.fail("unknown mode '" + m + "'");
}

std::vector<Tensor> pad(const KernelContext& ctx) {
  const Node& node = ctx.node();
  const Tensor& x = ctx.required(0);
  const auto rank = static_cast<int64_t>(x.dims().size());
  const PadMode mode = parseMode(ctx);
  std::vector<int64_t> pads, axes;
  std::vector<uint8_t> fill = elementBytes(x.dtype(), 0.0);
  if (hasAttr(node, "pads") || hasAttr(node, "paddings")) {  // opset 1/2
    pads = node.attrInts(hasAttr(node, "pads") ? "pads" : "paddings");
    fill = elementBytes(x.dtype(), node.attrFloat("value", 0.0f));
  } else {
    pads = intValues(ctx, ctx.required(1), "pads");
    if (const Tensor* c = ctx.input(2); c && c->numel() > 0) {
      if (c->dtype() != x.dtype()) ctx.fail("constant_value must have the data's element type");
      if (c->numel() != 1) ctx.fail("constant_value must be one element");
      fill.assign(c->data(), c->data() + c->byteSize());
    }
    if (const Tensor* a = ctx.input(3)) axes = intValues(ctx, *a, "axes");
  }
  if (!ctx.input(3))
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  const auto n = axes.size();
  if (pads.size() != 2 * n)
    ctx.fail("pads has " + std::to_string(pads.size()) + " entries, expected " + std::to_string(2 * n));

  std::vector<int64_t> begin(static_cast<size_t>(rank), 0), end(begin), dims = x.dims();
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < n; ++i) {
    const auto a = static_cast<size_t>(normalizeAxis(ctx, axes[i], rank, "axis"));
    if (seen[a]) ctx.fail("axes repeat an axis");
    seen[a] = true;
    begin[a] = pads[i];
    end[a] = pads[n + i];
    if (__builtin_add_overflow(dims[a], begin[a], &dims[a]) || __builtin_add_overflow(dims[a], end[a], &dims[a]))
      throw KernelOutputTooLarge("Pad '" + node.name() + "': output size overflows", INT64_MAX);
    if (dims[a] < 0) ctx.fail("pads crop more than axis " + std::to_string(a) + " holds");
  }
  OutBuffer out(ctx, x.dtype(), dims);
  if (out.numel() == 0) return {out.finish()};

  // Output extents are all >= 1 here, so each is at most the (checked) output size.
  std::vector<std::vector<int64_t>> source(static_cast<size_t>(rank));
  for (size_t a = 0; a < source.size(); ++a) {
    const int64_t in = x.dims()[a];
    if (in == 0 && mode != PadMode::Constant) ctx.fail("cannot pad an empty axis except with a constant");
    checkScratch(ctx, dims[a], 8);
    source[a].resize(static_cast<size_t>(dims[a]));
    for (int64_t o = 0; o < dims[a]; ++o)
      source[a][static_cast<size_t>(o)] = in == 0 ? -1 : sourceOf(mode, o, begin[a], in);
  }
  const int64_t size = dtypeSize(x.dtype());
  const std::vector<int64_t> strides = stridesOf(x.dims());
  std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t offset = 0;
    bool constant = false;
    for (size_t a = 0; a < pos.size(); ++a) {
      const int64_t s = source[a][static_cast<size_t>(pos[a])];
      constant = constant || s < 0;
      offset += s * strides[a];
    }
    copyElement(out.data() + i * size, constant ? fill.data() : x.data() + offset * size, static_cast<size_t>(size));
    for (size_t a = pos.size(); a-- > 0;)
      if (++pos[a] < dims[a])
        break;
      else
        pos[a] = 0;
  }
  return {out.finish()};
}

}  // namespace

void registerPadKernels(KernelRegistry& r) { r.add("Pad", pad); }

}  // namespace kiln::kernels
