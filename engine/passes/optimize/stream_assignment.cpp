// StreamAssignment: gives every node of the main graph a logical stream (schedule/stream_assigner.h has the rules)
// and records it as the "stream" annotation with the rule that decided it ("stream.reason"). Nodes inside
// control-flow bodies run within their owner's task and get none. Counters: streams, and streams per engine.
#include <vector>

#include "ir/graph.h"
#include "ir/model.h"
#include "passes/optimize/schedule_passes.h"
#include "options/options.h"
#include "schedule/stream_assigner.h"

namespace kiln {
namespace {

class StreamAssignment final : public Pass {
 public:
  std::string name() const override { return "StreamAssignment"; }

  PassResult run(PassContext& ctx) override {
    Graph& g = *ctx.model.graph;
    const std::vector<Node*> order(g.nodes().begin(), g.nodes().end());
    const StreamPlan plan = assignStreams(order, StreamPolicy::fromOptions(ctx.options));
    PassResult r;
    for (Node* n : order) {
      const std::string stream = std::to_string(plan.streamOf.at(n));
      if (n->annotation("stream") != stream || n->annotation("stream.reason") != plan.reason.at(n)) {
        n->setAnnotation("stream", stream);
        n->setAnnotation("stream.reason", plan.reason.at(n));
        r.changed = true;
      }
    }
    r.counters["streams"] = static_cast<int64_t>(plan.streams.size());
    for (const StreamInfo& s : plan.streams) r.add("streams_" + s.engineClass);
    return r;
  }
};

}  // namespace

std::unique_ptr<Pass> makeStreamAssignmentPass() { return std::make_unique<StreamAssignment>(); }

}  // namespace kiln
