// MemoryAssignment: GE's "assign memory" build step. Lifetimes of every tensor of the scheduled main graph
// (memory/lifetimes.h), then one offset per arena block from the planner the options name (`memory.planner`;
// `disable_reuse_memory` forces "none"), offsets aligned to 512 bytes.
// no_reuse_bytes is the arena of planner "none" over the same aligned blocks, so the two compare like for like.
// Annotations, one entry per input/output slot (as GE's input_i / output_i): "mem.in", "mem.out" = the arena
// offset, or where the tensor lives instead ("input", "output", "weight"; "unsized" for symbolic shapes, "-" for
// an omitted optional slot). Counters: memory_size (the arena), lower_bound, no_reuse_bytes, weight_bytes,
// io_bytes, blocks, unsized, and planner_<name>.
#include <string>

#include "ir/graph.h"
#include "ir/model.h"
#include "memory/lifetimes.h"
#include "memory/memory_plan.h"
#include "passes/compile/compile_passes.h"
#include "passes/options.h"

namespace kiln {
namespace {

class MemoryAssignment final : public Pass {
 public:
  std::string name() const override { return "MemoryAssignment"; }

  PassResult run(PassContext& ctx) override {
    Graph& g = *ctx.model.graph;
    const memory::Lifetimes life = memory::computeLifetimes(g);
    std::string planner = ctx.options.getString("memory.planner");
    if (planner == "auto") planner.clear();
    if (ctx.options.getBool("disable_reuse_memory")) planner = "none";
    // Offsets are 512-aligned, so a block really occupies its size rounded up to 512: planning with those sizes
    // lets a plan reach its lower bound (and the default planner stop there instead of searching on).
    const std::vector<memory::Buffer> blocks = memory::alignedBlocks(life);
    const memory::Plan plan = memory::planMemory(blocks, planner, memory::kArenaAlignment);

    auto where = [&](const Value* v) -> std::string {
      if (!v) return "-";
      const memory::TensorLifetime* t = life.find(v);
      if (!t) return "-";
      if (t->kind == memory::TensorKind::Arena) return std::to_string(plan.offset[size_t(t->block)]);
      return std::string(memory::tensorKindName(t->kind));
    };
    auto list = [&](const std::vector<Value*>& values) {
      std::string s;
      for (const Value* v : values) s += (s.empty() ? "" : ",") + where(v);
      return s;
    };
    PassResult r;
    for (Node* n : g.nodes()) {
      const std::string in = list(n->inputs()), out = list(n->outputs());
      if (n->annotation("mem.in") != in || n->annotation("mem.out") != out) {
        n->setAnnotation("mem.in", in);
        n->setAnnotation("mem.out", out);
        r.changed = true;
      }
    }
    r.counters["memory_size"] = plan.arenaBytes;
    r.counters["lower_bound"] = plan.lowerBound;
    // Without reuse every block sits at its own aligned offset: the same sizes the planner saw, end to end.
    int64_t noReuse = 0;
    for (const memory::Buffer& b : blocks) noReuse += b.size;
    r.counters["no_reuse_bytes"] = noReuse;
    r.counters["weight_bytes"] = life.weightBytes;
    r.counters["io_bytes"] = life.ioBytes;
    r.counters["blocks"] = int64_t(life.blocks.size());
    if (life.unsized > 0) r.counters["unsized"] = life.unsized;
    r.counters["planner_" + plan.planner] = 1;
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeMemoryAssignmentPass() { return std::make_unique<MemoryAssignment>(); }

}  // namespace kiln
