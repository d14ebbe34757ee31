#include "io/onnx/tensor_proto_reader.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <sys/mman.h>
#include <unistd.h>

#include "ir/shape.h"

namespace kiln::onnxio {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw std::runtime_error(msg); }

std::string realPath(const std::string& p) {
  char buf[PATH_MAX];
  if (!::realpath(p.c_str(), buf)) return {};
  return buf;
}

// int32_data entries of the byte-sized types (float8 bit patterns, packed int4 pairs) must be bytes: a value that
// does not fit would silently become another one.
template <typename Src>
void checkBytePatterns(const Src& src, const std::string& what, std::string_view type) {
  for (int i = 0; i < src.size(); ++i)
    if (src.Get(i) < 0 || src.Get(i) > 255)
      fail(what + ": int32_data entry " + std::to_string(i) + " is " + std::to_string(src.Get(i)) +
           ", not a byte: it does not hold a " + std::string(type) + " bit pattern");
}

template <typename T, typename Src>
std::string packAs(const Src& src) {
  std::string bytes(static_cast<size_t>(src.size()) * sizeof(T), '\0');
  for (int i = 0; i < src.size(); ++i) {
    const T v = static_cast<T>(src.Get(i));
    std::memcpy(bytes.data() + static_cast<size_t>(i) * sizeof(T), &v, sizeof(T));
  }
  return bytes;
}

}  // namespace

std::shared_ptr<const Storage> ExternalDataResolver::map(const std::string& location, std::string* canonicalPath) {
  if (location.empty()) fail("external data has no location");
  if (location.front() == '/') fail("external data path '" + location + "' is absolute; refused");
  size_t start = 0;
  while (start <= location.size()) {
    size_t end = location.find_first_of("/\\", start);
    if (end == std::string::npos) end = location.size();
    if (location.compare(start, end - start, "..") == 0)
      fail("external data path '" + location + "' leaves the model's directory; refused");
    start = end + 1;
  }
  const std::string base = realPath(baseDir_.empty() ? "." : baseDir_);
  const std::string full = realPath((baseDir_.empty() ? std::string(".") : baseDir_) + "/" + location);
  if (full.empty()) fail("external data file '" + location + "' not found next to the model");
  if (base.empty() || full.compare(0, base.size() + 1, base + "/") != 0)
    fail("external data path '" + location + "' resolves outside the model's directory (symlink?); refused");
  if (canonicalPath) *canonicalPath = full;
  auto it = maps_.find(full);
  if (it != maps_.end()) return it->second;
  try {
    auto storage = std::make_shared<MappedFileStorage>(full);
    maps_.emplace(full, storage);
    return storage;
  } catch (const std::exception& e) {
    fail("external data file '" + location + "': " + e.what());
  }
}

namespace {
// A view into a read-only private mapping of a file at an offset: external data, or raw_data left in the model
// file. When the last tensor using it goes (a folded or converted weight replaced it), its whole pages leave the
// process: the mapping stays for the other slices, but the compile's resident memory no longer holds weights it
// replaced. Nothing is lost: a page a neighbouring slice shares is read back from the page cache if touched again.
class SliceStorage final : public Storage {
 public:
  SliceStorage(std::shared_ptr<const Storage> mapping, size_t offset, size_t size)
      : base_(std::move(mapping)), offset_(offset), size_(size) {}
  ~SliceStorage() override {
    static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = (reinterpret_cast<uintptr_t>(data()) + page - 1) / page * page;
    const auto end = (reinterpret_cast<uintptr_t>(data()) + size_) / page * page;
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }
  SliceStorage(const SliceStorage&) = delete;
  SliceStorage& operator=(const SliceStorage&) = delete;
  const uint8_t* data() const override { return base_->data() + offset_; }
  size_t size() const override { return size_; }

 private:
  std::shared_ptr<const Storage> base_;
  size_t offset_, size_;
};

uint64_t parseUnsigned(const std::string& s, const std::string& key) {
  if (s.empty() || s.size() > 19) fail("external data " + key + " '" + s + "' is not a valid number");
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') fail("external data " + key + " '" + s + "' is not a valid number");
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}
}  // namespace

Tensor tensorFromProto(onnx::TensorProto& proto, ExternalDataResolver* resolver, const std::string& what,
                       const RawDataInFile* rawInFile) {
  auto dtype = dtypeFromOnnx(proto.data_type());
  if (!dtype) fail(what + " has unknown data type " + std::to_string(proto.data_type()));
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  for (int64_t d : dims)
    if (d < 0) fail(what + " has negative dimension " + std::to_string(d));
  auto numel = checkedProduct(dims);
  if (!numel) fail(what + " has dimensions whose product overflows");
  if (*dtype == DType::String) {
    if (proto.string_data_size() != *numel)
      fail(what + " declares " + std::to_string(*numel) + " strings but holds " +
           std::to_string(proto.string_data_size()));
    std::vector<std::string> strs(proto.string_data().begin(), proto.string_data().end());
    return Tensor(std::move(dims), std::move(strs));
  }
  const int64_t nbytes = storageBytes(*dtype, *numel);  // int4/uint4/float4: two elements per byte
  if (nbytes < 0) fail(what + " is too large (byte size overflows)");
  const size_t expected = static_cast<size_t>(nbytes);

  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!resolver) fail(what + " refers to external data, which is not available here");
    std::string location;
    uint64_t offset = 0;
    std::optional<uint64_t> length;
    for (const auto& kv : proto.external_data()) {
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = parseUnsigned(kv.value(), "offset");
      else if (kv.key() == "length") length = parseUnsigned(kv.value(), "length");
    }
    if (length && *length != expected)
      fail(what + " external length " + std::to_string(*length) + " does not match its shape (" +
           std::to_string(expected) + " bytes)");
    auto storage = resolver->map(location, nullptr);
    if (offset > storage->size() || expected > storage->size() - offset)
      fail(what + " external data [" + std::to_string(offset) + ", +" + std::to_string(expected) +
           ") runs past the end of '" + location + "' (" + std::to_string(storage->size()) + " bytes)");
    auto slice = std::make_shared<SliceStorage>(std::move(storage), static_cast<size_t>(offset), expected);
    return Tensor(*dtype, std::move(dims), std::move(slice), 0);
  }

  if (proto.has_raw_data() && rawInFile) {
    if (rawInFile->size != expected)
      fail(what + " has " + std::to_string(rawInFile->size) + " bytes of data but its shape needs " +
           std::to_string(expected));
    auto slice = std::make_shared<SliceStorage>(rawInFile->file, rawInFile->offset, rawInFile->size);
    return Tensor(*dtype, std::move(dims), std::move(slice), 0);
  }
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != expected)
      fail(what + " has " + std::to_string(proto.raw_data().size()) + " bytes of data but its shape needs " +
           std::to_string(expected));
    std::string bytes;
    bytes.swap(*proto.mutable_raw_data());
    return Tensor::fromBytes(*dtype, std::move(dims), std::move(bytes));
  }

  auto checkCount = [&](int64_t have, int64_t per = 1) {
    if (have != *numel * per)
      fail(what + " declares " + std::to_string(*numel) + " elements but holds " + std::to_string(have / per));
  };
  std::string bytes;
  switch (*dtype) {
    case DType::Float:
      checkCount(proto.float_data_size());
      bytes = packAs<float>(proto.float_data());
      break;
    case DType::Complex64:
      checkCount(proto.float_data_size(), 2);
      bytes = packAs<float>(proto.float_data());
      break;
    case DType::Double:
      checkCount(proto.double_data_size());
      bytes = packAs<double>(proto.double_data());
      break;
    case DType::Complex128:
      checkCount(proto.double_data_size(), 2);
      bytes = packAs<double>(proto.double_data());
      break;
    case DType::Int64:
      checkCount(proto.int64_data_size());
      bytes = packAs<int64_t>(proto.int64_data());
      break;
    case DType::UInt32:
      checkCount(proto.uint64_data_size());
      bytes = packAs<uint32_t>(proto.uint64_data());
      break;
    case DType::UInt64:
      checkCount(proto.uint64_data_size());
      bytes = packAs<uint64_t>(proto.uint64_data());
      break;
    case DType::Int32:
      checkCount(proto.int32_data_size());
      bytes = packAs<int32_t>(proto.int32_data());
      break;
    case DType::Int16:
      checkCount(proto.int32_data_size());
      bytes = packAs<int16_t>(proto.int32_data());
      break;
    case DType::UInt16:
    case DType::Float16:
    case DType::BFloat16:  // stored as their 16-bit patterns in int32_data
      checkCount(proto.int32_data_size());
      bytes = packAs<uint16_t>(proto.int32_data());
      break;
    case DType::Int8:
      checkCount(proto.int32_data_size());
      bytes = packAs<int8_t>(proto.int32_data());
      break;
    case DType::UInt8:
    case DType::Bool:
    case DType::Float8E4M3FN:  // the eight-bit floats: one bit pattern per int32_data entry
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ:
    case DType::Float8E8M0:
      checkCount(proto.int32_data_size());
      checkBytePatterns(proto.int32_data(), what, dtypeName(*dtype));
      bytes = packAs<uint8_t>(proto.int32_data());
      break;
    case DType::UInt4:  // two (four-bit) or four (two-bit) elements per int32_data entry, the first lowest
    case DType::Int4:
    case DType::Float4E2M1:
    case DType::UInt2:
    case DType::Int2:
      if (proto.int32_data_size() != static_cast<int64_t>(nbytes))
        fail(what + " declares " + std::to_string(*numel) + " " + std::string(dtypeName(*dtype)) +
             " elements, which pack into " + std::to_string(nbytes) + " int32_data entries, but it holds " +
             std::to_string(proto.int32_data_size()));
      checkBytePatterns(proto.int32_data(), what, dtypeName(*dtype));
      bytes = packAs<uint8_t>(proto.int32_data());
      break;
    default:
      fail(what + " has data type " + std::string(dtypeName(*dtype)) + " which cannot hold typed data");
  }
  return Tensor::fromBytes(*dtype, std::move(dims), std::move(bytes));
}

Tensor denseFromSparse(onnx::SparseTensorProto& proto, ExternalDataResolver* resolver, const std::string& what,
                       uint64_t maxDenseBytes) {
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  for (int64_t d : dims)
    if (d < 0) fail(what + " has negative dimension " + std::to_string(d));
  auto numel = checkedProduct(dims);
  if (!numel) fail(what + " has dimensions whose product overflows");
  Tensor values = tensorFromProto(*proto.mutable_values(), resolver, what + " values");
  Tensor indices = tensorFromProto(*proto.mutable_indices(), resolver, what + " indices");
  if (values.dtype() == DType::String) fail(what + ": sparse string tensors are not supported");
  if (isPacked(values.dtype())) fail(what + ": sparse tensors of packed sub-byte types are not supported");
  const int esize = dtypeSize(values.dtype());
  auto bytes = checkedMul(*numel, esize);
  if (!bytes || static_cast<uint64_t>(*bytes) > maxDenseBytes)
    fail(what + " would be " + (bytes ? std::to_string(*bytes) : std::string("too many")) +
         " bytes when made dense, above the limit");
  const int64_t nnz = values.numel();
  if (values.dims().size() != 1) fail(what + " values must be 1-D");
  if (indices.dtype() != DType::Int64) fail(what + " indices must be int64");
  const auto idx = indices.toInt64();
  const bool linear = indices.dims().size() == 1;
  if (linear ? indices.numel() != nnz
             : (indices.dims().size() != 2 || indices.dims()[0] != nnz ||
                indices.dims()[1] != static_cast<int64_t>(dims.size())))
    fail(what + " indices do not match its values and rank");
  std::string dense(static_cast<size_t>(*bytes), '\0');
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t flat = 0;
    if (linear) {
      flat = idx[static_cast<size_t>(k)];
    } else {
      for (size_t r = 0; r < dims.size(); ++r) {
        const int64_t i = idx[static_cast<size_t>(k) * dims.size() + r];
        if (i < 0 || i >= dims[r]) fail(what + " has an index out of range");
        flat = flat * dims[r] + i;
      }
    }
    if (flat < 0 || flat >= *numel) fail(what + " has an index out of range");
    std::memcpy(dense.data() + flat * esize, values.data() + k * esize, static_cast<size_t>(esize));
  }
  return Tensor::fromBytes(values.dtype(), std::move(dims), std::move(dense));
}

}  // namespace kiln::onnxio
