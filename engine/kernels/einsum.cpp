// Einsum: explicit ("ij,jk->ik") and implicit ("ij,jk") outputs, "..." broadcast dims, letters repeated within one
// operand (diagonals, traces). One walk over every label's extent multiplies the operands and accumulates into the
// output (floats in double, integers modulo 2^64 like the reductions).
#include <algorithm>
#include <array>
#include <optional>

#include "kernels/kernel_util.h"
#include "ir/graph.h"
#include "ir/shape.h"

namespace kiln::kernels {
namespace {

// Labels 0..51 are the letters a-z, A-Z; 52.. are the broadcast dims of "..." (outermost first).
constexpr int kLetters = 52;
// A reference kernel has no business running for hours: more multiply-adds than this decline.
constexpr int64_t kMaxSteps = int64_t{1} << 30;

int letterLabel(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

// One operand's subscripts: letters before and after an optional "...".
struct Term {
  std::vector<int> head, tail;
  bool ellipsis = false;
};

Term parseTerm(const KernelContext& ctx, const std::string& s) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 3, "...") == 0) {
      if (t.ellipsis) ctx.fail("more than one ellipsis in a term");
      t.ellipsis = true;
      i += 2;
      continue;
    }
    const int l = letterLabel(s[i]);
    if (l < 0) ctx.fail(std::string("invalid character '") + s[i] + "' in equation");
    (t.ellipsis ? t.tail : t.head).push_back(l);
  }
  return t;
}

// Labels of each dim of an operand of `rank` dims; e = the operand's ellipsis rank, broadcast dims numbered so that
// they align right with the widest ellipsis (maxE).
std::vector<int> dimLabels(const Term& t, size_t rank, size_t maxE) {
  std::vector<int> labels = t.head;
  const size_t e = rank - t.head.size() - t.tail.size();
  for (size_t i = 0; i < e; ++i) labels.push_back(kLetters + static_cast<int>(maxE - e + i));
  labels.insert(labels.end(), t.tail.begin(), t.tail.end());
  return labels;
}

template <typename S>
Tensor contract(const KernelContext& ctx, const std::vector<const Tensor*>& ins,
                const std::vector<std::vector<int>>& labelsOf, const std::vector<int>& outLabels,
                const std::vector<int>& order, const std::vector<int64_t>& extent) {
  using C = ComputeOf<S>;
  using Acc = std::conditional_t<kIsFloat<S>, double, uint64_t>;
  std::vector<int64_t> walkDims;
  for (int l : order) walkDims.push_back(extent[static_cast<size_t>(l)]);
  // Per operand (inputs, then the output): its stride along each walked label, summed over the dims carrying it.
  std::vector<std::vector<int64_t>> strides;
  const auto stridesFor = [&](const std::vector<int>& labels, const std::vector<int64_t>& dims) {
    const std::vector<int64_t> own = stridesOf(dims);
    std::vector<int64_t> s(order.size(), 0);
    for (size_t d = 0; d < labels.size(); ++d) {
      if (dims[d] == 1) continue;  // a broadcast dim of "..." stays put
      const size_t at = static_cast<size_t>(std::find(order.begin(), order.end(), labels[d]) - order.begin());
      s[at] += own[d];
    }
    return s;
  };
  for (size_t k = 0; k < ins.size(); ++k) strides.push_back(stridesFor(labelsOf[k], ins[k]->dims()));
  std::vector<int64_t> outDims;
  for (int l : outLabels) outDims.push_back(extent[static_cast<size_t>(l)]);
  strides.push_back(stridesFor(outLabels, outDims));
  OutBuffer out(ctx, dtypeOf<S>(), outDims);
  checkScratch(ctx, out.numel(), sizeof(Acc));
  std::vector<Acc> acc(static_cast<size_t>(out.numel()), Acc(0));
  const std::optional<int64_t> steps = checkedProduct(walkDims);
  StrideWalker w(walkDims, strides);
  for (int64_t i = 0; i < *steps; ++i, w.next()) {
    Acc p = Acc(1);
    for (size_t k = 0; k < ins.size(); ++k) {
      const C v = Elem<S>::load(ins[k]->data(), w.offset(k));
      if constexpr (kIsFloat<S>)
        p *= static_cast<double>(v);
      else
        p *= static_cast<uint64_t>(v);  // wraps: the low bits of the true product, as the type's own arithmetic
    }
    acc[static_cast<size_t>(w.offset(ins.size()))] += p;
  }
  for (int64_t i = 0; i < out.numel(); ++i) Elem<S>::store(out.data(), i, static_cast<C>(acc[static_cast<size_t>(i)]));
  return out.finish();
}

std::vector<Tensor> einsum(const KernelContext& ctx) {
  std::string eq;
  for (char c : ctx.node().attrString("equation", "")) {
    if (c != ' ') eq += c;
  }
  if (eq.empty()) ctx.fail("equation is missing");
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(parseTerm(ctx, lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ctx.numInputs()) ctx.fail("equation has " + std::to_string(terms.size()) + " operands");
  std::vector<const Tensor*> ins;
  size_t maxE = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    ins.push_back(&ctx.required(k));
    if (ins[k]->dtype() != ins[0]->dtype()) ctx.fail("input element types differ");
    const size_t letters = terms[k].head.size() + terms[k].tail.size(), rank = ins[k]->dims().size();
    if (rank < letters || (!terms[k].ellipsis && rank != letters))
      ctx.fail("operand " + std::to_string(k) + " has rank " + std::to_string(rank) + " for its subscripts");
    maxE = std::max(maxE, rank - letters);
  }
  // Every label's extent: letters must agree; broadcast dims follow numpy (1 stretches).
  std::vector<int64_t> extent(kLetters + maxE, -1);
  std::array<int, kLetters> uses{};
  std::vector<std::vector<int>> labelsOf;
  for (size_t k = 0; k < terms.size(); ++k) {
    labelsOf.push_back(dimLabels(terms[k], ins[k]->dims().size(), maxE));
    for (size_t d = 0; d < labelsOf[k].size(); ++d) {
      const int l = labelsOf[k][d];
      const int64_t n = ins[k]->dims()[d];
      int64_t& e = extent[static_cast<size_t>(l)];
      if (l < kLetters) ++uses[static_cast<size_t>(l)];
      if (e == -1 || (l >= kLetters && e == 1))
        e = n;
      else if (n != e && !(l >= kLetters && n == 1))
        ctx.fail("extents " + std::to_string(e) + " and " + std::to_string(n) + " differ for one subscript");
    }
  }
  for (size_t i = 0; i < maxE; ++i) {
    if (extent[kLetters + i] == -1) extent[kLetters + i] = 1;
  }
  std::vector<int> outLabels;
  if (arrow == std::string::npos) {  // implicit: "..." first, then the letters used once, in alphabetical order
    for (size_t i = 0; i < maxE; ++i) outLabels.push_back(kLetters + static_cast<int>(i));
    for (char c = 'A'; c <= 'Z'; ++c)
      if (uses[static_cast<size_t>(letterLabel(c))] == 1) outLabels.push_back(letterLabel(c));
    for (char c = 'a'; c <= 'z'; ++c)
      if (uses[static_cast<size_t>(letterLabel(c))] == 1) outLabels.push_back(letterLabel(c));
  } else {
    const Term out = parseTerm(ctx, eq.substr(arrow + 2));
    if (!out.ellipsis && maxE > 0) ctx.fail("the output drops the ellipsis dims");
    outLabels = dimLabels(out, out.head.size() + out.tail.size() + (out.ellipsis ? maxE : 0), maxE);
    std::array<bool, kLetters> seen{};
    for (int l : outLabels) {
      if (l >= kLetters) continue;
      if (uses[static_cast<size_t>(l)] == 0) ctx.fail("an output subscript appears in no input");
      if (seen[static_cast<size_t>(l)]) ctx.fail("an output subscript repeats");
      seen[static_cast<size_t>(l)] = true;
    }
  }
  // Walk the output labels first (outermost), then the summed ones.
  std::vector<int> order = outLabels;
  for (size_t l = 0; l < extent.size(); ++l)
    if (extent[l] != -1 && std::find(order.begin(), order.end(), static_cast<int>(l)) == order.end())
      order.push_back(static_cast<int>(l));
  std::vector<int64_t> walkDims;
  for (int l : order) walkDims.push_back(extent[static_cast<size_t>(l)]);
  const std::optional<int64_t> steps = checkedProduct(walkDims);
  const std::optional<int64_t> work = steps ? checkedMul(*steps, static_cast<int64_t>(ins.size())) : std::nullopt;
  if (!work || *work > kMaxSteps) return {};
  std::vector<Tensor> result;
  dispatch<kNumeric>(ins[0]->dtype(), [&](auto tag) {
    result.push_back(contract<typename decltype(tag)::type>(ctx, ins, labelsOf, outLabels, order, extent));
  });
  return result;
}

}  // namespace

void registerEinsumKernels(KernelRegistry& r) { r.add("Einsum", einsum); }

}  // namespace kiln::kernels
