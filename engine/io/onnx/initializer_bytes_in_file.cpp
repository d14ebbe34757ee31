#include "io/onnx/initializer_bytes_in_file.h"

#include <cstdint>

namespace kiln::onnxio {

namespace {

// Field numbers in onnx.proto.
constexpr uint32_t kModelGraph = 7;        // ModelProto.graph
constexpr uint32_t kGraphInitializer = 5;  // GraphProto.initializer
constexpr uint32_t kTensorRawData = 9;     // TensorProto.raw_data
constexpr uint32_t kLengthDelimited = 2;   // wire type of messages and bytes

struct Field {
  uint32_t number = 0, wireType = 0;
  size_t begin = 0;    // the tag's first byte
  size_t payload = 0;  // the value (after its length, for length-delimited fields)
  size_t end = 0;      // one past the value
};

// One message's fields in order. Stops (ok() false) at anything malformed or at groups, which ONNX never uses.
class FieldReader {
 public:
  explicit FieldReader(std::string_view bytes) : b_(bytes) {}
  bool ok() const { return ok_; }
  bool next(Field& f) {
    if (!ok_ || pos_ >= b_.size()) return false;
    f.begin = pos_;
    uint64_t tag = 0;
    if (!varint(tag) || tag >> 32 || (tag >> 3) == 0) return fail();
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wireType = static_cast<uint32_t>(tag & 7);
    uint64_t len = 0;
    switch (f.wireType) {
      case 0:
        if (!varint(len)) return fail();
        f.payload = f.begin;
        break;
      case 1:
      case 5:
        len = f.wireType == 1 ? 8 : 4;
        if (b_.size() - pos_ < len) return fail();
        f.payload = pos_;
        pos_ += len;
        break;
      case kLengthDelimited:
        if (!varint(len) || len > b_.size() - pos_) return fail();
        f.payload = pos_;
        pos_ += static_cast<size_t>(len);
        break;
      default:
        return fail();
    }
    f.end = pos_;
    return true;
  }

 private:
  bool fail() {
    ok_ = false;
    return false;
  }
  bool varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= b_.size()) return false;
      const auto byte = static_cast<uint8_t>(b_[pos_++]);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return true;
    }
    return false;
  }
  std::string_view b_;
  size_t pos_ = 0;
  bool ok_ = true;
};

void appendVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void appendMessage(std::string& out, uint32_t number, const std::string& body) {
  appendVarint(out, (uint64_t{number} << 3) | kLengthDelimited);
  appendVarint(out, body.size());
  out += body;
}

// `at`: where `tensor` starts in the file.
bool rewriteTensor(std::string_view tensor, size_t at, size_t minBytes, std::string& out,
                   std::optional<InitializerBytes>& left) {
  FieldReader r(tensor);
  Field f;
  bool rawSeen = false;
  while (r.next(f)) {
    if (f.number == kTensorRawData && f.wireType == kLengthDelimited) {
      if (rawSeen) return false;  // protobuf keeps the last one; leave such a file to protobuf
      rawSeen = true;
      const size_t size = f.end - f.payload;
      if (size >= minBytes) {
        appendVarint(out, (uint64_t{kTensorRawData} << 3) | kLengthDelimited);
        appendVarint(out, 0);
        left = InitializerBytes{at + f.payload, size};
        continue;
      }
    }
    out.append(tensor.substr(f.begin, f.end - f.begin));
  }
  return r.ok();
}

bool rewriteGraph(std::string_view graph, size_t at, size_t minBytes, std::string& out,
                  ModelWithoutInitializerBytes& result) {
  FieldReader r(graph);
  Field f;
  std::string tensor;
  while (r.next(f)) {
    if (f.number != kGraphInitializer || f.wireType != kLengthDelimited) {
      out.append(graph.substr(f.begin, f.end - f.begin));
      continue;
    }
    tensor.clear();
    std::optional<InitializerBytes> left;
    if (!rewriteTensor(graph.substr(f.payload, f.end - f.payload), at + f.payload, minBytes, tensor, left))
      return false;
    appendMessage(out, kGraphInitializer, tensor);
    if (left) result.bytesLeftInFile += left->size;
    result.initializers.push_back(left);
  }
  return r.ok();
}

}  // namespace

std::optional<ModelWithoutInitializerBytes> leaveInitializerBytesInFile(std::string_view model, size_t minBytes) {
  ModelWithoutInitializerBytes result;
  FieldReader r(model);
  Field f;
  bool graphSeen = false;
  while (r.next(f)) {
    if (f.number != kModelGraph || f.wireType != kLengthDelimited) {
      result.proto.append(model.substr(f.begin, f.end - f.begin));
      continue;
    }
    if (graphSeen) return std::nullopt;  // protobuf would merge the two; leave that to it
    graphSeen = true;
    std::string graph;
    if (!rewriteGraph(model.substr(f.payload, f.end - f.payload), f.payload, minBytes, graph, result))
      return std::nullopt;
    appendMessage(result.proto, kModelGraph, graph);
  }
  if (!r.ok() || result.bytesLeftInFile == 0) return std::nullopt;
  return result;
}

}  // namespace kiln::onnxio
