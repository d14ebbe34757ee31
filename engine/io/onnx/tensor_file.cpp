#include "io/tensor_file.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>

#include <climits>
#include <fstream>

#include "util/load_error.h"
#include "io/onnx/tensor_proto_reader.h"

namespace kiln {

NamedTensor readTensorBytes(std::string bytes, const std::string& displayName) {
  if (bytes.size() > INT_MAX) throw LoadError(displayName, "tensor file exceeds 2 GiB");
  onnx::TensorProto proto;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  if (!proto.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    throw LoadError(displayName, "not a valid ONNX TensorProto (protobuf parse failed)");
  try {
    NamedTensor out;
    out.name = proto.name();
    out.tensor = onnxio::tensorFromProto(proto, nullptr, "tensor '" + proto.name() + "'");
    return out;
  } catch (const std::exception& e) {
    throw LoadError(displayName, e.what());
  }
}

NamedTensor readTensorFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw LoadError(path, "cannot open: no such file");
  if (!S_ISREG(st.st_mode)) throw LoadError(path, "not a regular file");
  if (st.st_size > INT_MAX) throw LoadError(path, "tensor file exceeds 2 GiB");
  std::ifstream f(path, std::ios::binary);
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  f.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f && static_cast<size_t>(f.gcount()) != bytes.size()) throw LoadError(path, "short read");
  return readTensorBytes(std::move(bytes), path);
}

}  // namespace kiln
