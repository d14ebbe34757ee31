// MatMul (numpy batched broadcasting, 1-D operands promoted then dropped) and Gemm (transA/transB, alpha, beta, C
// broadcast into [M, N]). Floats go through Kiln's tiled kernel (kernels/sgemm_tiles.h: the plain fp32 product) or
// OpenBLAS (kernels/openblas.h) (fp16/bf16 widened to float, rounded once on store); int32 and int64 MatMul are plain
// loops that wrap like the device's integer multiply-add.
#include <algorithm>
#include <climits>
#include <vector>

#include "kernels/nn_kernels.h"
#include "kernels/openblas.h"
#include "kernels/sgemm_tiles.h"
#include "ir/graph.h"
#include "ir/shape.h"
#include "util/parallel_for.h"

namespace kiln::kernels {
namespace nn {
namespace {

// CBLAS takes int extents; anything wider (possible only with a zero-sized other extent or absurd inputs) takes the
// plain loop. So does a small product (up to 32x32x32): the shape probes and constant folding of a compile multiply
// such matrices only, and loading OpenBLAS for them cost more than the products (its worker threads then spin for
// about a tenth of a second beside the compile).
bool useBlas(int64_t m, int64_t n, int64_t k) {
  constexpr double kSmallProduct = 32.0 * 32 * 32;
  return m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && double(m) * double(n) * double(k) > kSmallProduct;
}

// Each output sums its k products in order. With B not transposed, a row of C accumulates a row of B per p (the
// same order per element, a loop over j that vectorises); with B transposed, each element is a dot product.
template <typename W>
void gemmLoop(bool transA, bool transB, int64_t m, int64_t n, int64_t k, W alpha, const W* a, const W* b, W beta,
              W* c) {
  std::vector<W> acc(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    if (transB) {
      for (int64_t j = 0; j < n; ++j) {
        W dot = 0;
        for (int64_t p = 0; p < k; ++p) dot += a[transA ? p * m + i : i * k + p] * b[j * k + p];
        acc[static_cast<size_t>(j)] = dot;
      }
    } else {
      std::fill(acc.begin(), acc.end(), W(0));
      for (int64_t p = 0; p < k; ++p) {
        const W av = a[transA ? p * m + i : i * k + p];
        const W* row = b + p * n;
        for (int64_t j = 0; j < n; ++j) acc[static_cast<size_t>(j)] += av * row[j];
      }
    }
    for (int64_t j = 0; j < n; ++j) {
      W& out = c[i * n + j];
      out = alpha * acc[static_cast<size_t>(j)] + (beta == W(0) ? W(0) : beta * out);
    }
  }
}

// C = alpha · A · Bᵀ + beta · C for a few rows of A (a classifier's Gemm over one image): each output the dot of a row
// of A with a row of B, both contiguous, summed in 16 lanes the compiler vectorises. B (the weights, often megabytes)
// is read once, where BLAS would copy all of it into its packed layout on every call.
void dotRowsGemm(int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b, float beta, float* c) {
  parallelFor(static_cast<size_t>(n), std::max<size_t>(1, size_t{1 << 16} / static_cast<size_t>(k)), 1,
              [&](size_t j0, size_t j1) {
                for (int64_t i = 0; i < m; ++i) {
                  const float* ai = a + i * k;
                  for (auto j = static_cast<int64_t>(j0); j < static_cast<int64_t>(j1); ++j) {
                    const float* bj = b + j * k;
                    constexpr int kLanes = 16;
                    float lane[kLanes] = {};
                    int64_t p = 0;
                    for (; p + kLanes <= k; p += kLanes)
                      for (int l = 0; l < kLanes; ++l) lane[l] += ai[p + l] * bj[p + l];
                    float dot = 0;
                    for (; p < k; ++p) dot += ai[p] * bj[p];
                    for (int l = 0; l < kLanes; ++l) dot += lane[l];
                    float& out = c[i * n + j];
                    out = alpha * dot + (beta == 0.0f ? 0.0f : beta * out);
                  }
                }
              });
}

template <typename W>
void scaleC(int64_t count, W beta, W* c) {
  for (int64_t i = 0; i < count; ++i) c[i] = beta == W(0) ? W(0) : beta * c[i];
}

}  // namespace

bool plainProductIsTiled(int64_t m, int64_t n, int64_t k) { return useBlas(m, n, k) && tiledSgemmAvailable(); }

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b,
          float beta, float* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) return scaleC(m * n, beta, c);
  // The plain product (every convolution, most MatMuls) takes Kiln's own kernel where the build has it
  // (kernels/sgemm_tiles.h): no per-call packing of the operands.
  if (!transA && !transB && alpha == 1.0f && beta == 0.0f && plainProductIsTiled(m, n, k))
    return tiledSgemm(m, n, k, a, k, b, n, c, n);
  if (!transA && transB && m <= 4 && useBlas(m, n, k)) return dotRowsGemm(m, n, k, alpha, a, b, beta, c);
  const auto i = [](int64_t v) { return static_cast<int>(v); };
  if (!useBlas(m, n, k) ||
      !blasSgemm(transA, transB, i(m), i(n), i(k), alpha, a, i(transA ? m : k), b, i(transB ? k : n), beta, c, i(n)))
    gemmLoop(transA, transB, m, n, k, alpha, a, b, beta, c);
}

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha, const double* a, const double* b,
          double beta, double* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) return scaleC(m * n, beta, c);
  const auto i = [](int64_t v) { return static_cast<int>(v); };
  if (!useBlas(m, n, k) ||
      !blasDgemm(transA, transB, i(m), i(n), i(k), alpha, a, i(transA ? m : k), b, i(transB ? k : n), beta, c, i(n)))
    gemmLoop(transA, transB, m, n, k, alpha, a, b, beta, c);
}

MatMulPlan matMulPlan(const KernelContext& ctx, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                      bool transA, bool transB) {
  if (a.empty() || b.empty()) ctx.fail("MatMul operands must have rank 1 or more");
  MatMulPlan p;
  // A 1-D A is a row [1, K] and a 1-D B a column [K, 1]; a transpose of a vector changes nothing.
  p.transA = transA && a.size() > 1;
  p.transB = transB && b.size() > 1;
  const int64_t aRows = a.size() > 1 ? a[a.size() - 2] : 1, aCols = a.back();
  const int64_t bRows = b.size() > 1 ? b[b.size() - 2] : b.back(), bCols = b.size() > 1 ? b.back() : 1;
  p.m = p.transA ? aCols : aRows;
  p.k = p.transA ? aRows : aCols;
  const int64_t kB = p.transB ? bCols : bRows;
  p.n = p.transB ? bRows : bCols;
  if (p.k != kB) ctx.fail("inner dimensions differ (" + std::to_string(p.k) + " against " + std::to_string(kB) + ")");
  const std::vector<int64_t> aBatch(a.begin(), a.end() - std::min<ptrdiff_t>(2, std::ssize(a)));
  const std::vector<int64_t> bBatch(b.begin(), b.end() - std::min<ptrdiff_t>(2, std::ssize(b)));
  const std::vector<int64_t> batch = broadcastShapes(ctx, {&aBatch, &bBatch});
  p.outDims = batch;
  if (a.size() > 1) p.outDims.push_back(p.m);
  if (b.size() > 1) p.outDims.push_back(p.n);
  const std::optional<int64_t> count = checkedProduct(batch);
  if (!count) ctx.fail("batch size overflows");
  // Offsets only matter when the product has elements; an empty output needs none (and A or B may be empty).
  const std::optional<int64_t> outCount = checkedProduct(p.outDims);
  if (!outCount || *outCount == 0) return p;
  checkScratch(ctx, *count, 2 * sizeof(int64_t));
  BroadcastWalker w(batch, {&aBatch, &bBatch});
  for (int64_t i = 0; i < *count; ++i, w.next()) {
    p.aOffsets.push_back(w.offset(0) * p.m * p.k);
    p.bOffsets.push_back(w.offset(1) * p.k * p.n);
  }
  return p;
}

void matMul(const MatMulPlan& p, float alpha, const float* a, const float* b, float* y) {
  for (size_t i = 0; i < p.aOffsets.size(); ++i)
    gemm(p.transA, p.transB, p.m, p.n, p.k, alpha, a + p.aOffsets[i], b + p.bOffsets[i], 0.0f,
         y + static_cast<int64_t>(i) * p.m * p.n);
}

void matMul(const MatMulPlan& p, double alpha, const double* a, const double* b, double* y) {
  for (size_t i = 0; i < p.aOffsets.size(); ++i)
    gemm(p.transA, p.transB, p.m, p.n, p.k, alpha, a + p.aOffsets[i], b + p.bOffsets[i], 0.0,
         y + static_cast<int64_t>(i) * p.m * p.n);
}

}  // namespace nn

namespace {

template <typename S>
Tensor matMulFloat(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  using W = nn::Work<S>;
  const nn::MatMulPlan p = nn::matMulPlan(ctx, a.dims(), b.dims(), false, false);
  nn::Result<S, W> y(ctx, a.dtype(), p.outDims);  // size check before any work
  // fp32 operands are read in place when aligned (a copy otherwise: BLAS wants aligned operands).
  const nn::Operand<S, W> av(ctx, a), bv(ctx, b);
  nn::matMul(p, W(1), av.data(), bv.data(), y.data());
  return y.finish();
}

template <typename S>
Tensor matMulInt(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  const nn::MatMulPlan p = nn::matMulPlan(ctx, a.dims(), b.dims(), false, false);
  OutBuffer out(ctx, a.dtype(), p.outDims);
  nn::wrappingMatMul<S>(
      p, [&](int64_t i) { return Elem<S>::load(a.data(), i); }, [&](int64_t i) { return Elem<S>::load(b.data(), i); },
      [&](int64_t i, S v) { Elem<S>::store(out.data(), i, v); });
  return out.finish();
}

std::vector<Tensor> matMulKernel(const KernelContext& ctx) {
  const Tensor& a = ctx.required(0);
  const Tensor& b = ctx.required(1);
  if (a.dtype() != b.dtype()) ctx.fail("A and B have different element types");
  std::vector<Tensor> out;
  dispatch<kFloats>(a.dtype(), [&](auto tag) { out.push_back(matMulFloat<typename decltype(tag)::type>(ctx, a, b)); });
  if (a.dtype() == DType::Int32) out.push_back(matMulInt<int32_t>(ctx, a, b));
  if (a.dtype() == DType::Int64) out.push_back(matMulInt<int64_t>(ctx, a, b));
  return out;
}

// Gemm: Y = alpha · op(A) · op(B) + beta · C, A and B 2-D, C unidirectionally broadcast to [M, N].
template <typename S>
Tensor gemmTyped(const KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor* c) {
  using W = nn::Work<S>;
  const Node& node = ctx.node();
  if (a.dims().size() != 2 || b.dims().size() != 2) ctx.fail("A and B must be 2-D");
  const bool ta = node.attrInt("transA", 0) != 0, tb = node.attrInt("transB", 0) != 0;
  const int64_t m = ta ? a.dims()[1] : a.dims()[0], k = ta ? a.dims()[0] : a.dims()[1];
  const int64_t kB = tb ? b.dims()[1] : b.dims()[0], n = tb ? b.dims()[0] : b.dims()[1];
  if (k != kB) ctx.fail("inner dimensions differ (" + std::to_string(k) + " against " + std::to_string(kB) + ")");
  const std::vector<int64_t> outDims{m, n};
  // fp32 operands are read in place and the result computed straight into the output tensor (a classifier's
  // weights were copied on every run: 5 MB for MobileNetV2's).
  nn::Result<S, W> y(ctx, a.dtype(), outDims);  // size check before any work
  std::fill(y.begin(), y.end(), W(0));
  const W beta = static_cast<W>(node.attrFloat("beta", 1.0f));
  if (c && c->dtype() != a.dtype()) ctx.fail("C has another element type than A");
  if (c) {
    if (c->dims().size() > 2) ctx.fail("C must have rank 2 or less");
    for (size_t i = 0; i < c->dims().size(); ++i) {
      const int64_t want = outDims[2 - c->dims().size() + i];
      if (c->dims()[i] != 1 && c->dims()[i] != want) ctx.fail("C does not broadcast to [M, N]");
    }
    BroadcastWalker w(outDims, {&c->dims()});
    W* out = y.data();
    for (int64_t i = 0; i < y.numel(); ++i, w.next()) out[i] = static_cast<W>(Elem<S>::load(c->data(), w.offset(0)));
  }
  const nn::Operand<S, W> av(ctx, a), bv(ctx, b);
  nn::gemm(ta, tb, m, n, k, static_cast<W>(node.attrFloat("alpha", 1.0f)), av.data(), bv.data(), c ? beta : W(0),
           y.data());
  return y.finish();
}

std::vector<Tensor> gemmKernel(const KernelContext& ctx) {
  const Tensor& a = ctx.required(0);
  const Tensor& b = ctx.required(1);
  if (a.dtype() != b.dtype()) ctx.fail("A and B have different element types");
  std::vector<Tensor> out;
  dispatch<kFloats>(a.dtype(),
                    [&](auto tag) { out.push_back(gemmTyped<typename decltype(tag)::type>(ctx, a, b, ctx.input(2))); });
  return out;
}

}  // namespace

void registerMatMulKernels(KernelRegistry& r) {
  r.add("MatMul", matMulKernel);
  r.add("Gemm", gemmKernel);
}

}  // namespace kiln::kernels
