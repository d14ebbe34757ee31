#include "io/om/om_reader.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <charconv>
#include <climits>
#include <unordered_set>
#include <map>
#include <unordered_map>

#include "io/om/ge_ir.pb.h"
#include "io/om/ge_model_builder.h"
#include "io/om/ge_types.h"
#include "io/om/om_plan.h"
#include "ir/model_metadata.h"
#include "io/om/task.pb.h"
#include "schedule/task_list.h"

namespace kiln::om {
namespace {

// MODEL_INOUT_INFO's gear records as ATC's option text ("1,2,4,8", "224,224;448,448"); "" for other records or
// bytes that do not hold a well-formed list (the file is untrusted: never read past the record).
std::string gearListText(const OmTlvRecord& r) {
  if (r.type < 2 || r.type > 4) return {};
  const std::string& b = r.value;
  size_t at = 0;
  auto u32 = [&](uint32_t& v) {
    if (at + 4 > b.size()) return false;
    std::memcpy(&v, b.data() + at, 4);
    at += 4;
    return true;
  };
  auto i64 = [&](int64_t& v) {
    if (at + 8 > b.size()) return false;
    std::memcpy(&v, b.data() + at, 8);
    at += 8;
    return true;
  };
  uint32_t count = 0;
  if (!u32(count) || count > 1000) return {};
  std::string text;
  if (r.type == 2) {
    for (uint32_t i = 0; i < count; ++i) {
      int64_t v = 0;
      if (!i64(v)) return {};
      text += (i ? "," : "") + std::to_string(v);
    }
    return at == b.size() ? text : std::string();
  }
  std::vector<uint32_t> lengths(count);
  for (uint32_t& l : lengths)
    if (!u32(l) || l > 1000) return {};
  for (uint32_t i = 0; i < count; ++i) {
    text += i ? ";" : "";
    for (uint32_t k = 0; k < lengths[i]; ++k) {
      int64_t v = 0;
      if (!i64(v)) return {};
      text += (k ? "," : "") + std::to_string(v);
    }
  }
  return at == b.size() ? text : std::string();
}


template <typename Message>
bool parseBounded(Message& msg, std::span<const uint8_t> bytes) {
  if (bytes.size() > INT_MAX) return false;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(static_cast<int>(bytes.size()));
  // A bad file is reported as a LoadError; libprotobuf's own log lines (invalid UTF-8 in a proto3 string...) would
  // only repeat it on stderr.
  google::protobuf::LogSilencer quiet;
  return msg.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}
// TBE_KERNELS / CUST_AICPU_KERNELS / SO_BINS: {u32 magic, u32 name_len, u32 bin_len, name, bin}*.
std::vector<OmKernelBinary> parseKernelBins(std::span<const uint8_t> b, std::vector<std::string>& warnings) {
  std::vector<OmKernelBinary> out;
  uint64_t pos = 0;
  auto u32 = [&](uint64_t at) {
    return static_cast<uint32_t>(b[at]) | static_cast<uint32_t>(b[at + 1]) << 8 | static_cast<uint32_t>(b[at + 2]) << 16 |
           static_cast<uint32_t>(b[at + 3]) << 24;
  };
  while (pos < b.size()) {
    if (b.size() - pos < 12 || u32(pos) != 0x5D776EFD) {
      warnings.push_back("TBE_KERNELS: malformed kernel record at offset " + std::to_string(pos) + "; the rest is ignored");
      break;
    }
    const uint64_t nameLen = u32(pos + 4), binLen = u32(pos + 8);
    if (nameLen + binLen > b.size() - pos - 12) {
      warnings.push_back("TBE_KERNELS: kernel record at offset " + std::to_string(pos) + " runs past the partition");
      break;
    }
    out.push_back({std::string(reinterpret_cast<const char*>(b.data() + pos + 12), nameLen), binLen});
    pos += 12 + nameLen + binLen;
  }
  return out;
}

}  // namespace

OmImport readOmBytes(std::shared_ptr<const Storage> storage, const std::string& displayName, size_t modelIndex) {
  if (!storage || storage->size() == 0) throw LoadError(displayName, "file is empty");
  const std::span<const uint8_t> file(storage->data(), storage->size());
  OmImport out;
  OmModelInfo& info = out.info;
  info.container = parseOmContainer(file, displayName);
  out.warnings = info.container.warnings;
  const size_t count = info.container.models.size();
  const std::string last = "#" + std::to_string(count - 1);
  if (modelIndex >= count)
    throw LoadError(displayName, "the file holds " + std::to_string(count) + (count == 1 ? " model" : " models") +
                                     " (#0.." + last + "): there is no model #" + std::to_string(modelIndex));
  const OmModelPartitions& root = info.container.models[modelIndex];
  if (count > 1)
    out.warnings.push_back("the file holds " + std::to_string(count) + " models; this is model #" +
                           std::to_string(modelIndex) + (modelIndex == 0 ? " (the root)" : "") +
                           ": add #0.." + last + " to the file's path to open another");

  const OmPartition* modelDef = root.find(PartitionType::ModelDef);
  if (!modelDef) throw LoadError(displayName, "no MODEL_DEF partition: the file holds no graph");
  google::protobuf::Arena arena;
  auto& md = *google::protobuf::Arena::CreateMessage<ge::proto::ModelDef>(&arena);
  if (!parseBounded(md, partitionBytes(file, *modelDef)))
    throw LoadError(displayName, "MODEL_DEF partition is not a valid ge.proto.ModelDef (protobuf parse failed)");

  auto& tasks = *google::protobuf::Arena::CreateMessage<domi::ModelTaskDef>(&arena);
  if (const OmPartition* ti = root.find(PartitionType::TaskInfo))
    if (!parseBounded(tasks, partitionBytes(file, *ti)))
      throw LoadError(displayName, "TASK_INFO partition is not a valid domi.ModelTaskDef (protobuf parse failed)");

  // The model's own MODEL_INOUT_INFO, else the first a model of the file carries (GE writes it once).
  const OmPartition* io = root.find(PartitionType::ModelInOutInfo);
  for (size_t k = 0; !io && k < count; ++k) io = info.container.models[k].find(PartitionType::ModelInOutInfo);
  if (io) info.inOut = parseInOutInfo(partitionBytes(file, *io), displayName);
  if (const OmPartition* k = root.find(PartitionType::TbeKernels))
    info.kernels = parseKernelBins(partitionBytes(file, *k), out.warnings);
  const OmPartition* weights = root.find(PartitionType::WeightsData);
  info.weightsBytes = weights ? weights->size : 0;

  out.model = std::make_unique<Model>();
  Model& m = *out.model;
  m.sourcePath = displayName;
  m.opsets = {{"", 17}, {kGeDomain, 1}};
  m.modelVersion = md.version();
  const OmHeader& h = info.container.header;
  m.metadata.emplace_back("om.header_version", h.isV1() ? "1" : "2");
  if (!h.name.empty()) m.metadata.emplace_back("om.name", h.name);
  if (!h.platformVersion.empty()) m.metadata.emplace_back("om.platform_version", h.platformVersion);
  m.metadata.emplace_back("om.model_type", std::to_string(h.modelType));
  if (count > 1) {
    m.metadata.emplace_back("om.model_count", std::to_string(count));
    m.metadata.emplace_back("om.model_index", std::to_string(modelIndex));
  }
  if (h.isUnknownModel) m.metadata.emplace_back("om.dynamic_shape", "true");
  for (const OmTlvRecord& r : info.inOut ? info.inOut->others : std::vector<OmTlvRecord>{})
    if (std::string gears = gearListText(r); !gears.empty())
      m.metadata.emplace_back(r.type == 2 ? "om.dynamic_batch" : r.type == 3 ? "om.dynamic_hw" : "om.dynamic_dims", gears);
  addGeModelMetadata(m, md);
  // The task list's own totals where the model attributes do not give them.
  auto fill = [&](const char* key, uint64_t v) {
    if (v && metadataValue(m, key).empty()) m.metadata.emplace_back(key, std::to_string(v));
  };
  fill("om.memory_size", tasks.memory_size());
  fill("om.weight_size", tasks.weight_size());
  fill("om.stream_num", tasks.stream_num());
  fill("om.event_num", tasks.event_num());
  fill("om.task_num", static_cast<uint64_t>(tasks.task_size()));
  info.memorySize = metadataU64(m, "om.memory_size");
  info.weightSize = metadataU64(m, "om.weight_size");
  info.streamNum = static_cast<uint32_t>(metadataU64(m, "om.stream_num"));
  info.eventNum = static_cast<uint32_t>(metadataU64(m, "om.event_num"));
  info.socVersion = metadataValue(m, "om.soc_version");
  if (const std::string atc = metadataValue(m, "om.atc_version"); !atc.empty()) {
    m.producerName = "ATC";
    m.producerVersion = atc;
  } else {
    m.producerName = "Ascend offline model";
  }

  try {
    GeWeights w;
    if (weights) w = {storage, weights->offset, weights->size};
    const GeModelIndex index = buildGeModel(m, md, displayName, weights ? &w : nullptr, nullptr, out.warnings);
    // Tasks, linked to their ops by KernelContext.op_index = OpDef.id.
    for (int i = 0; i < tasks.task_size(); ++i) {
      const auto& t = tasks.task(i);
      OmTask ot;
      ot.index = static_cast<size_t>(i);
      ot.id = t.id();
      ot.type = t.type();
      ot.streamId = t.stream_id();
      ot.eventId = t.event_id();
      ot.labelId = t.label_id();
      if (t.has_kernel()) {
        ot.kernelName = t.kernel().kernel_name();
        ot.stubFunc = t.kernel().stub_func();
        ot.blockDim = t.kernel().block_dim();
        if (t.kernel().has_context()) {
          ot.kernelType = t.kernel().context().kernel_type();
          ot.opIndex = t.kernel().context().op_index();
        }
      }
      if (ot.opIndex >= 0) {
        if (auto it = index.byId.find(ot.opIndex); it != index.byId.end()) {
          Node* n = it->second;
          ot.opName = n->name();
          const std::string prev = n->annotation("om.task");
          n->setAnnotation("om.task", prev.empty() ? taskTypeName(ot.type) + " #" + std::to_string(i)
                                                   : prev + ", " + taskTypeName(ot.type) + " #" + std::to_string(i));
          if (ot.blockDim) n->setAnnotation("om.block_dim", std::to_string(ot.blockDim));
          if (!ot.kernelName.empty()) n->setAnnotation("om.kernel_name", ot.kernelName);
        } else {
          out.warnings.push_back("task " + std::to_string(i) + " runs op index " + std::to_string(ot.opIndex) +
                                 ", which is not an op of the graph");
        }
      }
      info.tasks.push_back(std::move(ot));
    }
    for (const auto& k : info.kernels)
      if (auto it = index.byName.find(k.name); it != index.byName.end())
        it->second->setAnnotation("om.kernel_bin_bytes", std::to_string(k.size));
    annotateOmPlan(m, info.tasks);
    m.precompiled = true;
  } catch (const LoadError&) {
    throw;
  } catch (const std::exception& e) {
    throw LoadError(displayName, e.what());
  }
  return out;
}

size_t omModelCount(const std::string& path) {
  try {
    const MappedFileStorage storage(path);
    const OmContainer c = parseOmContainer(std::span<const uint8_t>(storage.data(), storage.size()), path);
    return std::max<size_t>(c.models.size(), 1);
  } catch (const std::exception&) {
    return 1;
  }
}

OmImport readOmFile(const std::string& path, size_t modelIndex, const std::string& displayName) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw LoadError(path, "cannot open: no such file");
  if (S_ISDIR(st.st_mode)) throw LoadError(path, "is a directory, not an .om file");
  if (st.st_size == 0) throw LoadError(path, "file is empty");
  std::shared_ptr<const Storage> storage;
  try {
    storage = std::make_shared<MappedFileStorage>(path);
  } catch (const std::exception& e) {
    throw LoadError(path, e.what());
  }
  return readOmBytes(std::move(storage), displayName.empty() ? path : displayName, modelIndex);
}

}  // namespace kiln::om
