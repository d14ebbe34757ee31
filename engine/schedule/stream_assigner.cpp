#include "schedule/stream_assigner.h"

#include "ir/graph.h"
#include "options/options.h"
#include "options/stream_max_parallel_num.h"

namespace kiln {

int StreamPolicy::maxFor(const std::string& engineClass) const {
  auto it = maxStreams.find(engineClass);
  if (it != maxStreams.end()) return it->second;
  // The split cube/vector classes share AI Core's limit unless given their own.
  if (engineClass.rfind("aicore.", 0) == 0) return maxFor("aicore");
  return 1;
}

StreamPolicy StreamPolicy::fromOptions(const Options& options) {
  StreamPolicy p;
  p.singleStream = options.getBool("enable_single_stream");
  const std::string& mode = options.getString("multi_stream_parallel_mode");
  p.splitCubeVector = mode == "cv";
  if (mode.rfind("LoadBalance:", 0) == 0) p.maxStreams["aicore"] = std::stoi(mode.substr(12));
  for (const auto& [k, v] : parseStreamMaxParallelNum(options.getString("stream_max_parallel_num")))
    p.maxStreams[k] = v;
  return p;
}

namespace {

class Assigner {
 public:
  explicit Assigner(const StreamPolicy& policy) : policy_(policy) {}

  StreamPlan run(const std::vector<Node*>& order) {
    for (size_t i = 0; i < order.size(); ++i) place(*order[i], static_cast<int>(i));
    return std::move(plan_);
  }

 private:
  struct Lane {
    const Node* tail = nullptr;
    int lastUsed = -1;  // order index of the tail
  };

  std::string engineClass(const Node& n) const {
    const std::string engine = n.annotation("engine");
    if (engine != "aicore") return engine.empty() ? "aicore" : engine;
    if (!policy_.splitCubeVector) return "aicore";
    return n.annotation("unit") == "cube" ? "aicore.cube" : "aicore.vector";
  }

  int open(const std::string& cls) {
    const int id = static_cast<int>(plan_.streams.size());
    plan_.streams.push_back({id, cls, 0});
    byClass_[cls].push_back(id);
    lanes_.emplace_back();
    return id;
  }

  void put(const Node& n, int stream, int pos, std::string why) {
    plan_.streamOf[&n] = stream;
    plan_.reason[&n] = std::move(why);
    ++plan_.streams[static_cast<size_t>(stream)].nodes;
    lanes_[static_cast<size_t>(stream)] = {&n, pos};
  }

  void place(const Node& n, int pos) {
    if (policy_.singleStream) {
      if (plan_.streams.empty()) open("all");
      return put(n, 0, pos, "single stream");
    }
    if (const Attribute* a = n.attr("_user_stream_label"); a && a->get<std::string>()) {
      const std::string& label = *a->get<std::string>();
      const std::string cls = "label:" + label;
      auto it = byClass_.find(cls);
      return put(n, it == byClass_.end() ? open(cls) : it->second.front(), pos, "user label " + label);
    }
    const std::vector<Node*> producers = n.graph()->predecessorsOf(n);
    const std::string cls = engineClass(n);
    if (cls == "host") {  // no device task: ride along with the data it describes
      if (!producers.empty()) return put(n, plan_.streamOf.at(producers.front()), pos, "host op, producer's stream");
      if (plan_.streams.empty()) open("aicore");
      return put(n, 0, pos, "host op");
    }
    // Continue a producer's stream when this node would be its next task.
    for (const Node* p : producers) {
      const int s = plan_.streamOf.at(p);
      if (plan_.streams[static_cast<size_t>(s)].engineClass == cls && lanes_[static_cast<size_t>(s)].tail == p)
        return put(n, s, pos, "continues its producer's stream");
    }
    std::vector<int>& mine = byClass_[cls];
    if (static_cast<int>(mine.size()) < policy_.maxFor(cls))
      return put(n, open(cls), pos, mine.size() == 1 ? "first " + cls + " node" : "independent branch: new stream");
    int idlest = mine.front();
    for (int s : mine)
      if (lanes_[static_cast<size_t>(s)].lastUsed < lanes_[static_cast<size_t>(idlest)].lastUsed) idlest = s;
    return put(n, idlest, pos, "stream limit reached: joins the longest idle stream");
  }

  const StreamPolicy& policy_;
  StreamPlan plan_;
  std::map<std::string, std::vector<int>> byClass_;
  std::vector<Lane> lanes_;
};

}  // namespace

StreamPlan assignStreams(const std::vector<Node*>& order, const StreamPolicy& policy) {
  return Assigner(policy).run(order);
}

}  // namespace kiln
