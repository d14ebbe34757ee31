#include "emulator/arena_executor.h"

#include "emulator/stored_layout.h"
#include "kernels/transdata.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <unordered_map>

namespace kiln {

namespace {

// The arena as tensor storage: inputs are views at their offsets (no copy), valid while the arena lives.
class ArenaStorage final : public Storage {
 public:
  ArenaStorage(uint8_t* data, size_t size) : data_(data), size_(size) {}
  const uint8_t* data() const override { return data_; }
  size_t size() const override { return size_; }

 private:
  uint8_t* data_;
  size_t size_;
};

constexpr int64_t kAside = -1;

std::string label(const Node& n) { return "Op '" + (n.name().empty() ? n.qualifiedType() : n.name()) + "'"; }

// Offsets per output slot from "mem.out" ("1024,output,-"); kAside for everything not in the arena.
std::vector<int64_t> plannedOffsets(const Node& n) {
  std::vector<int64_t> offsets;
  const std::string text = n.annotation("mem.out");
  size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int64_t offset = kAside;
    if (!item.empty() && item.find_first_not_of("0123456789") == std::string::npos && item.size() < 19)
      offset = std::stoll(item);
    offsets.push_back(offset);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return offsets;
}

Tensor ownedCopy(const Tensor& t) {
  if (t.dtype() == DType::String) return t;
  return Tensor::fromBytes(t.dtype(), t.dims(), std::string(reinterpret_cast<const char*>(t.data()), t.byteSize()));
}

struct Placement {
  int64_t offset;
  int64_t bytes;
  std::vector<int64_t> dims;
};

}  // namespace

ArenaRunResult runInArena(const Graph& g, const std::vector<Tensor>& inputs, const ExecutionOptions& options) {
  ArenaRunResult result;
  // Before the first node, as the device's runtime does when it loads a model (and as the reference run plans
  // before its clock): where every value lives, the arena, the convolutions' workspace (GE plans each op's
  // workspace in the model's memory) and the weights in the form the kernels read.
  const auto prepareStart = std::chrono::steady_clock::now();
  // Where every placed value lives, from the plan the compiler recorded.
  std::unordered_map<const Value*, Placement> placed;
  bool planned = false;
  for (const Node* n : g.nodes()) {
    if (n->annotations().count("mem.out")) planned = true;
    const std::vector<int64_t> offsets = plannedOffsets(*n);
    for (size_t i = 0; i < offsets.size() && i < n->numOutputs(); ++i) {
      const Value* v = n->output(i);
      if (!v || offsets[i] == kAside) continue;
      const auto extents = v->type().shape.staticExtents();
      const auto bytes = v->type().byteSize();
      if (!extents || !bytes) throw std::runtime_error(label(*n) + ": placed output '" + v->name() + "' has no static size");
      if (offsets[i] > options.maxArenaBytes - *bytes)
        throw std::runtime_error(label(*n) + ": planned offset " + std::to_string(offsets[i]) + " + " +
                                 std::to_string(*bytes) + " bytes exceeds the arena limit of " +
                                 std::to_string(options.maxArenaBytes) + " bytes (emulator.max_arena_bytes)");
      placed[v] = {offsets[i], *bytes, *extents};
      result.arenaBytes = std::max(result.arenaBytes, offsets[i] + *bytes);
    }
  }
  if (!planned && g.numNodes() > 0)
    throw std::runtime_error("the graph has no memory plan: compile it through Stage 3 (MemoryAssignment) first");
  std::vector<uint8_t> arena(static_cast<size_t>(result.arenaBytes));
  auto storage = std::make_shared<ArenaStorage>(arena.data(), arena.size());

  std::unordered_map<const Value*, Tensor> aside;
  for (const Value* v : g.values())
    if (v->constant()) aside.emplace(v, *v->constant());
  if (inputs.size() != g.inputs().size())
    throw std::runtime_error("the graph takes " + std::to_string(g.inputs().size()) + " inputs, got " +
                             std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) aside.insert_or_assign(g.inputs()[i], inputs[i]);

  const ReferenceExecutor bodies(options);  // function bodies and the like run as one step
  KernelLimits limits = options.kernel;
  if (limits.opset == 0) limits.opset = options.opset;
  // Blocked weights in the logical form their kernels compute on, converted once before the nodes run (a weight
  // read by several nodes, or by every step of a loop, is not converted again) and dropped after its last reader.
  LogicalByValue prepared;
  std::unordered_map<const Value*, int> readersLeft;
  for (const Node* n : g.nodes()) {
    if (n->hasSubgraphs() || definingBody(*n) || readsPhysicalLayout(*n)) continue;
    for (const Value* v : n->inputs())
      if (v && v->constant() && isBlockedFormat(v->type().format) && !placed.count(v)) {
        if (!prepared.count(v)) prepared.emplace(v, logicalTensor(*v->constant(), v->type(), limits.maxOutputBytes));
        ++readersLeft[v];
      }
  }
  int64_t workspaceFloats = 0;
  for (const Node* n : g.nodes()) workspaceFloats = std::max(workspaceFloats, blockedConvWorkspace(*n));
  if (workspaceFloats > limits.maxOutputBytes / int64_t(sizeof(float))) workspaceFloats = 0;  // the kernel decides
  std::vector<float> workspace(static_cast<size_t>(workspaceFloats));
  result.prepareMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - prepareStart).count();
  // The planned block of an fp32 output, for kernels that can write their result there.
  const auto blockOf = [&](const Value* v) -> std::span<float> {
    auto p = v ? placed.find(v) : placed.end();
    if (p == placed.end() || v->type().dtype != DType::Float || p->second.offset % alignof(float) != 0) return {};
    return {reinterpret_cast<float*>(arena.data() + p->second.offset), static_cast<size_t>(p->second.bytes) / sizeof(float)};
  };
  const auto bytesOf = [&](const Value* v) -> std::span<uint8_t> {
    auto p = v ? placed.find(v) : placed.end();
    if (p == placed.end()) return {};
    return {arena.data() + p->second.offset, static_cast<size_t>(p->second.bytes)};
  };
  // Convolutions, per-channel ops and global pools computed on the NC1HWC0 blocks as stored, into their planned block
  // if they can.
  const auto onStoredBlocks = [&](const Node& n, const std::vector<const Tensor*>& in) -> std::optional<Tensor> {
    if (n.numOutputs() != 1) return std::nullopt;
    std::optional<Tensor> y = convolveOnStoredBlocks(n, in, limits, &prepared, blockOf(n.output(0)), workspace);
    if (!y) y = channelOpOnStoredBlocks(n, in, limits, &prepared, blockOf(n.output(0)));
    return y ? y : poolOnStoredBlocks(n, in, limits);
  };
  std::vector<Tensor> views;  // keeps this step's arena views alive
  for (const Node* n : g.nodes()) {
    views.clear();
    views.reserve(n->numInputs());
    std::vector<const Tensor*> in;
    for (const Value* v : n->inputs()) {
      if (!v) {
        in.push_back(nullptr);
        continue;
      }
      if (auto p = placed.find(v); p != placed.end()) {
        views.emplace_back(v->type().dtype, p->second.dims, storage, static_cast<size_t>(p->second.offset));
        in.push_back(&views.back());
      } else if (auto a = aside.find(v); a != aside.end()) {
        in.push_back(&a->second);
      } else {
        throw std::runtime_error(label(*n) + ": input '" + v->name() + "' has no value (not produced before it runs)");
      }
    }
    const Graph* body = definingBody(*n);
    std::vector<Tensor> out;
    if (n->hasSubgraphs() && !body) {
      // Control flow (If, Loop, Scan) is one step: its bodies run on buffers of their own, reading what they
      // capture from the arena as laid out, and its outputs land in their planned blocks like any node's.
      std::deque<Tensor> capturedViews;
      out = bodies.runNode(*n, in, [&](const Value* v) -> const Tensor* {
        if (auto p = placed.find(v); p != placed.end())
          return &capturedViews.emplace_back(v->type().dtype, p->second.dims, storage,
                                             static_cast<size_t>(p->second.offset));
        if (auto a = aside.find(v); a != aside.end()) return &a->second;
        return nullptr;
      });
    } else if (std::optional<Tensor> chained = body ? channelChainOnStoredBlocks(*n, in, limits, &prepared,
                                                                                 blockOf(n->output(0)))
                                                    : std::nullopt) {
      // A body of per-channel ops on blocks: one pass, into its planned block when that overlaps no input.
      const Value* y = n->output(0);
      out.push_back(chained->valid() ? std::move(*chained)
                                     : Tensor(y->type().dtype, placed.at(y).dims, storage, size_t(placed.at(y).offset)));
    } else if (body) {
      // The op's own body (a fused chain) runs as this one step, on the tensors as laid out: its values record
      // the same layouts, and each of its nodes converts for itself.
      std::vector<Tensor> args;
      for (const Tensor* t : in) args.push_back(t ? *t : Tensor());
      out = bodies.run(*body, args);
    } else if (n->numOutputs() == 1 && in.size() == 1 && in[0] && kernels::transDataNodeInto(*n, *in[0], bytesOf(n->output(0)))) {
      // A layout conversion written straight into its planned block.
      const Value* y = n->output(0);
      out.push_back(Tensor(y->type().dtype, placed.at(y).dims, storage, size_t(placed.at(y).offset)));
    } else if (std::optional<Tensor> blocked = onStoredBlocks(*n, in)) {
      // Computed in its planned block when that overlaps none of its inputs: the output is then that block.
      const Value* y = n->output(0);
      out.push_back(blocked->valid() ? std::move(*blocked)
                                     : Tensor(y->type().dtype, placed.at(y).dims, storage, size_t(placed.at(y).offset)));
      for (const Value* v : n->inputs())
        if (auto r = readersLeft.find(v); v && r != readersLeft.end() && --r->second == 0) prepared.erase(v);
    } else {
      const KernelOperands operands(*n, in, limits.maxOutputBytes, &prepared);
      out = evaluateNode(*n, operands.inputs(), limits);
      if (out.empty()) {
        // No kernel: its function body, built for the logical operands, runs as this one step.
        std::shared_ptr<Graph> function = options.functions ? options.functions(*n, operands.inputs()) : nullptr;
        if (!function) throw NotEmulatable(n->qualifiedType());
        std::vector<Tensor> args;
        for (const Tensor* t : operands.inputs()) args.push_back(t ? *t : Tensor());
        out = bodies.run(*function, args);
      }
      operands.storeOutputs(out);
      for (const Value* v : n->inputs())
        if (auto r = readersLeft.find(v); v && r != readersLeft.end() && --r->second == 0) prepared.erase(v);
    }
    ++result.kernelsRun;
    for (size_t i = 0; i < n->numOutputs(); ++i) {
      const Value* v = n->output(i);
      if (!v) continue;
      if (i >= out.size()) throw std::runtime_error(label(*n) + ": output " + std::to_string(i) + " was not computed");
      if (auto p = placed.find(v); p != placed.end()) {
        if (static_cast<int64_t>(out[i].byteSize()) != p->second.bytes || out[i].dtype() != v->type().dtype)
          throw std::runtime_error(label(*n) + ": output '" + v->name() + "' is " + std::to_string(out[i].byteSize()) +
                                   " bytes of " + std::string(dtypeName(out[i].dtype())) + ", its planned block " +
                                   std::to_string(p->second.bytes) + " bytes of " +
                                   std::string(dtypeName(v->type().dtype)));
        // memmove: an in-place op's output may be a view of its own input block (or the block itself).
        if (out[i].data() != arena.data() + p->second.offset)
          std::memmove(arena.data() + p->second.offset, out[i].data(), out[i].byteSize());
        ++result.placedTensors;
      } else {
        // A kernel's own result is kept as it is; one that views the arena (a Reshape of a placed tensor) is
        // copied out, since its block is reused once the value dies.
        const auto at = reinterpret_cast<uintptr_t>(out[i].data()), base = reinterpret_cast<uintptr_t>(arena.data());
        const bool viewsArena = out[i].data() && at >= base && at < base + arena.size();
        aside.insert_or_assign(v, viewsArena ? ownedCopy(out[i]) : std::move(out[i]));
        if (!v->isGraphOutput()) ++result.asideTensors;
      }
    }
  }
  for (const Value* v : g.outputs()) {
    if (auto p = placed.find(v); p != placed.end()) {
      result.outputs.push_back(ownedCopy(Tensor(v->type().dtype, p->second.dims, storage, size_t(p->second.offset))));
    } else if (auto a = aside.find(v); a != aside.end()) {
      result.outputs.push_back(a->second);
    } else {
      throw std::runtime_error("graph output '" + v->name() + "' has no value");
    }
  }
  return result;
}

}  // namespace kiln
