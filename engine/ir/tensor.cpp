#include "ir/tensor.h"

#include "ir/low_bit_types.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include "ir/shape.h"

namespace kiln {

MappedFileStorage::MappedFileStorage(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open: " + std::string(std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error("not a regular file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    addr_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr_ == MAP_FAILED) {
      addr_ = nullptr;
      ::close(fd);
      throw std::runtime_error("cannot map: " + std::string(std::strerror(errno)));
    }
  }
  ::close(fd);
}

MappedFileStorage::~MappedFileStorage() {
  if (addr_) ::munmap(addr_, size_);
}

HeapStorage::HeapStorage(size_t size, Start start) : size_(size) {
  const size_t n = size ? size : 1;
  data_ = static_cast<uint8_t*>(start == Start::Zeroed ? std::calloc(n, 1) : std::malloc(n));
  if (!data_) throw std::bad_alloc();
}

HeapStorage::~HeapStorage() { std::free(data_); }

Tensor::Tensor(DType dtype, std::vector<int64_t> dims, std::shared_ptr<const Storage> storage, size_t offset)
    : dtype_(dtype), dims_(std::move(dims)), storage_(std::move(storage)), offset_(offset) {
  numel_ = checkedProduct(dims_).value_or(0);
  nbytes_ = static_cast<size_t>(std::max<int64_t>(storageBytes(dtype_, numel_), 0));  // packed types by bits
  assert(!storage_ || offset_ + nbytes_ <= storage_->size());
}

Tensor::Tensor(std::vector<int64_t> dims, std::vector<std::string> strings)
    : dtype_(DType::String), dims_(std::move(dims)), strings_(std::move(strings)) {
  numel_ = checkedProduct(dims_).value_or(0);
}

Tensor Tensor::fromBytes(DType dtype, std::vector<int64_t> dims, std::string bytes) {
  auto storage = std::make_shared<OwnedStorage>(std::move(bytes));
  return Tensor(dtype, std::move(dims), std::move(storage), 0);
}

bool Tensor::operator==(const Tensor& o) const {
  if (dtype_ != o.dtype_ || dims_ != o.dims_) return false;
  if (dtype_ == DType::String) return strings_ == o.strings_;
  if (nbytes_ != o.nbytes_) return false;
  return data() == o.data() || nbytes_ == 0 || std::memcmp(data(), o.data(), nbytes_) == 0;
}

namespace {
template <typename T>
T load(const uint8_t* p, int64_t i) {
  T v;
  std::memcpy(&v, p + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return v;
}

// One loop per element type (the dtype switch is outside the loop: weights can be tens of millions of elements).
template <typename Out, typename In, typename Convert>
void widenAs(const uint8_t* p, int64_t n, std::vector<Out>& out, Convert convert) {
  out.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = static_cast<Out>(convert(load<In>(p, i)));
}

template <typename Out>
std::vector<Out> widen(const Tensor& t) {
  std::vector<Out> out;
  if (!t.data()) return out;
  const uint8_t* p = t.data();
  const int64_t n = t.numel();
  auto same = [](auto v) { return v; };
  switch (t.dtype()) {
    case DType::Float: widenAs<Out, float>(p, n, out, same); break;
    case DType::Double: widenAs<Out, double>(p, n, out, same); break;
    case DType::Float16: widenAs<Out, uint16_t>(p, n, out, [](uint16_t h) { return halfToFloat(h); }); break;
    case DType::BFloat16: widenAs<Out, uint16_t>(p, n, out, [](uint16_t h) { return bfloat16ToFloat(h); }); break;
    case DType::Int8: widenAs<Out, int8_t>(p, n, out, same); break;
    case DType::UInt8: widenAs<Out, uint8_t>(p, n, out, same); break;
    case DType::Bool: widenAs<Out, uint8_t>(p, n, out, [](uint8_t b) { return b != 0 ? 1 : 0; }); break;
    case DType::Int16: widenAs<Out, int16_t>(p, n, out, same); break;
    case DType::UInt16: widenAs<Out, uint16_t>(p, n, out, same); break;
    case DType::Int32: widenAs<Out, int32_t>(p, n, out, same); break;
    case DType::UInt32: widenAs<Out, uint32_t>(p, n, out, same); break;
    case DType::Int64: widenAs<Out, int64_t>(p, n, out, same); break;
    case DType::UInt64: widenAs<Out, uint64_t>(p, n, out, same); break;
    case DType::Float8E4M3FN:
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ: {
      const DType type = t.dtype();
      widenAs<Out, uint8_t>(p, n, out, [type](uint8_t b) { return lowBitFloatToFloat(type, b); });
      break;
    }
    case DType::Float8E8M0: {
      widenAs<Out, uint8_t>(p, n, out, [](uint8_t b) { return lowBitFloatToFloat(DType::Float8E8M0, b); });
      break;
    }
    case DType::Int4:
    case DType::UInt4:
    case DType::Float4E2M1:
    case DType::Int2:
    case DType::UInt2: {  // packed: element 0 in the lowest bits
      const int bits = dtypeBits(t.dtype());
      out.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const uint8_t code = packedAt(p, i, bits);
        out[static_cast<size_t>(i)] = t.dtype() == DType::Float4E2M1
                                          ? static_cast<Out>(lowBitFloatToFloat(t.dtype(), code))
                                          : static_cast<Out>(packedIntValue(t.dtype(), code));
      }
      break;
    }
    default: return {};
  }
  return out;
}
}  // namespace

std::vector<int64_t> Tensor::toInt64() const {
  if (isFloating(dtype_) || isLowBitFloat(dtype_)) {
    std::vector<int64_t> out;
    for (double d : widen<double>(*this))
      out.push_back(std::isfinite(d) ? static_cast<int64_t>(d) : 0);
    return out;
  }
  return widen<int64_t>(*this);
}
std::vector<double> Tensor::toDouble() const { return widen<double>(*this); }

float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u)  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (absx < 0x38800000u) {                                               // subnormal or zero in half
    if (absx < 0x33000000u) return sign;
    // value = mant * 2^(exp-150); half subnormal unit is 2^-24, so shift right by 126-exp.
    const uint32_t exp = absx >> 23;
    const uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14..24
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t v = absx - 0x38000000u;  // rebias exponent 127 -> 15
  const uint32_t rem = v & 0x1fffu;
  v >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (v & 1u))) ++v;
  return static_cast<uint16_t>(sign | v);
}

namespace {

// Tensor bytes need not be aligned for float: elements are read through memcpy.
float floatAt(const float* p, size_t i) {
  float f;
  std::memcpy(&f, reinterpret_cast<const char*>(p) + i * sizeof f, sizeof f);
  return f;
}

#if defined(__x86_64__) || defined(__i386__)
// Eight lanes at a time with round-to-nearest-even, as floatToHalf rounds. NaN lanes are redone by floatToHalf,
// which writes one canonical quiet NaN where the instruction would keep the payload's top bits.
__attribute__((target("avx,f16c"))) void floatsToHalvesF16c(const float* in, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(in + i);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    if (const int nan = _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)))
      for (size_t j = 0; j < 8; ++j)
        if (nan >> j & 1) out[i + j] = floatToHalf(floatAt(in, i + j));
  }
  for (; i < n; ++i) out[i] = floatToHalf(floatAt(in, i));
}

// Eight lanes at a time (exact: every half is a float). NaN lanes are redone by halfToFloat, which keeps a signalling
// NaN signalling where the instruction would quiet it.
__attribute__((target("avx,f16c"))) void halvesToFloatsF16c(const uint16_t* in, float* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    _mm256_storeu_ps(out + i, v);
    if (const int nan = _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)))
      for (size_t j = 0; j < 8; ++j)
        if (nan >> j & 1) out[i + j] = halfToFloat(in[i + j]);
  }
  for (; i < n; ++i) out[i] = halfToFloat(in[i]);
}

// F16C from CPUID (leaf 1, ECX): clang's __builtin_cpu_supports knows "avx" (which checks the OS saves the AVX
// state too) but not "f16c".
bool hasF16c() {
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
  }();
  return yes;
}

__attribute__((target("avx"))) void scaleFloatsAvx(const float* in, float* out, size_t n, double scale) {
  const __m256d s = _mm256_set1_pd(scale);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d wide = _mm256_cvtps_pd(_mm_loadu_ps(in + i));
    _mm_storeu_ps(out + i, _mm256_cvtpd_ps(_mm256_mul_pd(wide, s)));
  }
  for (; i < n; ++i) out[i] = static_cast<float>(double(floatAt(in, i)) * scale);
}

bool hasAvx() {
  static const bool yes = __builtin_cpu_supports("avx");
  return yes;
}
#endif

}  // namespace

void floatsToHalves(const float* in, uint16_t* out, size_t n) {
#if defined(__x86_64__) || defined(__i386__)
  if (hasF16c()) return floatsToHalvesF16c(in, out, n);
#endif
  for (size_t i = 0; i < n; ++i) out[i] = floatToHalf(floatAt(in, i));
}

void halvesToFloats(const uint16_t* in, float* out, size_t n) {
#if defined(__x86_64__) || defined(__i386__)
  if (hasF16c()) return halvesToFloatsF16c(in, out, n);
#endif
  for (size_t i = 0; i < n; ++i) out[i] = halfToFloat(in[i]);
}

void scaleFloats(const float* in, float* out, size_t n, double scale) {
#if defined(__x86_64__) || defined(__i386__)
  if (hasAvx()) return scaleFloatsAvx(in, out, n, scale);
#endif
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(double(floatAt(in, i)) * scale);
}

float bfloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t floatToBfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

}  // namespace kiln
