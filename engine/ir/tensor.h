#pragma once
// Constant tensor data (initializers, Constant attributes). Bytes live in a shared, immutable Storage so copies of a
// Tensor, of a Graph, or a pass that moves a weight never copy the bytes. Storage may be an owned buffer (moved out
// of the parsed protobuf, not copied) or a read-only memory map of an external-data file.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace kiln {

class Storage {
 public:
  virtual ~Storage() = default;
  virtual const uint8_t* data() const = 0;
  virtual size_t size() const = 0;
};

// Owns bytes in a std::string so protobuf's raw_data can be swapped in without a copy.
class OwnedStorage final : public Storage {
 public:
  explicit OwnedStorage(std::string bytes) : bytes_(std::move(bytes)) {}
  const uint8_t* data() const override { return reinterpret_cast<const uint8_t*>(bytes_.data()); }
  size_t size() const override { return bytes_.size(); }

 private:
  std::string bytes_;
};

// A read-only mapping of a whole file; tensors refer to slices of it.
class MappedFileStorage final : public Storage {
 public:
  // Throws std::runtime_error with the reason when the file cannot be mapped.
  explicit MappedFileStorage(const std::string& path);
  ~MappedFileStorage() override;
  MappedFileStorage(const MappedFileStorage&) = delete;
  MappedFileStorage& operator=(const MappedFileStorage&) = delete;
  const uint8_t* data() const override { return static_cast<const uint8_t*>(addr_); }
  size_t size() const override { return size_; }

 private:
  void* addr_ = nullptr;
  size_t size_ = 0;
};

// Bytes on the heap, written by whoever made them until handed to a Tensor (kernel outputs, converted, folded and
// re-laid-out weights). Zeroed ones come from calloc: fresh pages come cleared by the kernel, but memory the heap
// reuses (the weights an earlier pass freed) is zeroed first, a second pass over every byte that a writer setting
// them all (an fp16 conversion, a scaled weight, a re-layout without padding) does not need: it asks for them unset.
class HeapStorage final : public Storage {
 public:
  enum class Start { Zeroed, Unset };
  HeapStorage(size_t size, Start start);  // throws std::bad_alloc
  ~HeapStorage() override;
  HeapStorage(const HeapStorage&) = delete;
  HeapStorage& operator=(const HeapStorage&) = delete;
  const uint8_t* data() const override { return data_; }
  uint8_t* data() { return data_; }
  size_t size() const override { return size_; }

 private:
  uint8_t* data_;
  size_t size_;
};

class Tensor {
 public:
  Tensor() = default;
  // dims must be non-negative with a product that fits; bytes.size() must equal numel * dtypeSize (checked by
  // the importer before construction; asserted here).
  Tensor(DType dtype, std::vector<int64_t> dims, std::shared_ptr<const Storage> storage, size_t offset = 0);
  // String tensors keep their elements separately.
  Tensor(std::vector<int64_t> dims, std::vector<std::string> strings);

  static Tensor fromBytes(DType dtype, std::vector<int64_t> dims, std::string bytes);
  template <typename T>
  static Tensor fromVector(DType dtype, std::vector<int64_t> dims, const std::vector<T>& values) {
    std::string bytes(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
    return fromBytes(dtype, std::move(dims), std::move(bytes));
  }

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t numel() const { return numel_; }
  size_t byteSize() const { return nbytes_; }
  const uint8_t* data() const { return storage_ ? storage_->data() + offset_ : nullptr; }
  std::span<const uint8_t> bytes() const { return {data(), nbytes_}; }
  const std::vector<std::string>& strings() const { return strings_; }
  bool sharesStorageWith(const Tensor& other) const { return storage_ && storage_ == other.storage_; }
  bool valid() const { return dtype_ != DType::Undefined; }
  // Same dtype, dims and element bytes (strings by value).
  bool operator==(const Tensor& o) const;

  // Values widened to int64 / double for the integral and floating types (for shape arithmetic, display).
  std::vector<int64_t> toInt64() const;
  std::vector<double> toDouble() const;

 private:
  DType dtype_ = DType::Undefined;
  std::vector<int64_t> dims_;
  int64_t numel_ = 0;
  std::shared_ptr<const Storage> storage_;
  size_t offset_ = 0;
  size_t nbytes_ = 0;
  std::vector<std::string> strings_;
};

// fp16 / bf16 conversions (round to nearest even) used when reading, printing and generating tensors.
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
// floatToHalf over an array, bit for bit the same (NaNs included); with the CPU's F16C instructions when it has
// them (checked at run time): converting a model's weights runs at memory speed.
void floatsToHalves(const float* in, uint16_t* out, size_t n);
// halfToFloat over an array, bit for bit the same (NaNs included), with F16C when the CPU has it: the fp16 operands
// of a compiled run's kernels are widened at memory speed.
void halvesToFloats(const uint16_t* in, float* out, size_t n);
// out[i] = float(double(in[i]) * scale): each product rounded once, as a scalar loop rounds it; four at a time with
// AVX when the CPU has it (checked at run time). `in` may sit at any byte offset (a weight in a mapped file).
void scaleFloats(const float* in, float* out, size_t n, double scale);
float bfloat16ToFloat(uint16_t b);
uint16_t floatToBfloat16(float f);

}  // namespace kiln
