#include "io/om/om_plan.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "ir/graph.h"
#include "ir/model.h"
#include "ir/opdefs/op_registry.h"
#include "schedule/sync_events.h"
#include "schedule/task_list.h"

namespace kiln::om {
namespace {

std::vector<int64_t> parseOffsets(const std::string& text) {
  std::vector<int64_t> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    int64_t v = -1;
    const auto [p, ec] = std::from_chars(text.data() + pos, text.data() + comma, v);
    out.push_back(ec == std::errc() && p == text.data() + comma ? v : -1);
    pos = comma + 1;
  }
  return out;
}

// Without a task list (a graph dump, an om JSON) the engine GE gave each op is in its attributes: the kernel library
// (_ge_attr_op_kernel_lib_name, else _lxfusion_engine_name / _lxfusion_op_kernel_lib_name). AI Core ops run on the
// cube or vector unit as the op registry knows them, AI CPU ops on the AI CPU; GE's local ops (Data, Const,
// NetOutput, Send/Recv...) are the host's and get no device task.
void engineFromAttributes(Graph& g) {
  for (Node* n : g.nodes()) {
    std::string lib;
    for (const char* key : {"_ge_attr_op_kernel_lib_name", "_lxfusion_op_kernel_lib_name", "_lxfusion_engine_name"})
      if (lib.empty()) lib = n->attrString(key, "");
    if (lib.empty() || !n->annotation("engine").empty()) continue;
    auto has = [&](const char* s) { return lib.find(s) != std::string::npos; };
    if (has("AIcore") || has("AiCore") || has("AICORE") || has("VectorCore")) {
      const bool cube = defaultComputeUnit(n->domain(), n->opType()) == ComputeUnit::Cube;
      n->setAnnotation("engine", "aicore");
      n->setAnnotation("unit", cube ? "cube" : "vector");
    } else if (has("AICPU") || has("aicpu") || has("AiCpu")) {
      n->setAnnotation("engine", "aicpu");
      n->setAnnotation("unit", "aicpu");
    } else {
      n->setAnnotation("engine", "host");
    }
  }
}

std::vector<std::string> splitNames(const std::string& text) {
  std::vector<std::string> out;
  for (size_t at = 0; at < text.size();) {
    const size_t comma = std::min(text.find(',', at), text.size());
    out.push_back(text.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

// Without a task list, GE's events are its Send and Recv ops (attribute event_id): a Send records after the op its
// control edge comes from, the ops a Recv's control edges go to wait for it — or, when such an op has no device
// task (a Const), the next op on its stream that has one.
void eventsFromSendRecv(Graph& g) {
  std::unordered_map<std::string, Node*> byName;
  for (Node* n : g.nodes()) byName.emplace(n->name(), n);
  std::unordered_map<Node*, std::set<int>> records, waits;
  std::unordered_map<std::string, int> recvEvent;  // Recv op name -> its event
  for (Node* n : g.nodes()) {
    const bool send = n->opType() == "Send", recv = n->opType() == "Recv";
    if (n->domain() != kGeDomain || (!send && !recv)) continue;
    const int64_t ev = n->attrInt("event_id", -1);
    if (ev < 0) continue;
    if (send)
      for (const std::string& src : splitNames(n->annotation("om.control_inputs")))
        if (auto it = byName.find(src); it != byName.end()) records[it->second].insert(int(ev));
    if (recv) recvEvent[n->name()] = int(ev);
  }
  auto device = [](const Node* n) { const std::string e = n->annotation("engine"); return e == "aicore" || e == "aicpu"; };
  const std::vector<Node*> order(g.nodes().begin(), g.nodes().end());
  for (size_t i = 0; i < order.size(); ++i) {
    for (const std::string& src : splitNames(order[i]->annotation("om.control_inputs"))) {
      auto ev = recvEvent.find(src);
      if (ev == recvEvent.end()) continue;
      Node* waiter = order[i];
      for (size_t k = i; k < order.size() && !device(waiter); ++k)
        if (order[k]->annotation("stream") == order[i]->annotation("stream") && device(order[k])) waiter = order[k];
      if (device(waiter)) waits[waiter].insert(ev->second);
    }
  }
  for (const auto& [n, ids] : records) n->setAnnotation("event.record", joinIds({ids.begin(), ids.end()}));
  for (const auto& [n, ids] : waits) n->setAnnotation("event.wait", joinIds({ids.begin(), ids.end()}));
}

}  // namespace

void annotateOmPlan(Model& m, const std::vector<OmTask>& tasks) {
  Graph& g = *m.graph;
  std::unordered_map<std::string, Node*> byName;
  for (Node* n : g.nodes()) {
    byName.emplace(n->name(), n);
    if (const std::string s = n->annotation("om.stream_id"); !s.empty()) n->setAnnotation("stream", s);
    const bool isConst = n->opType() == "Const" || n->opType() == "Constant";
    const bool isData = n->opType() == "Data";
    auto feedsNetOutput = [](const Value* v) {
      for (const Use& u : v->uses())
        if (u.node->opType() == "NetOutput") return true;
      return false;
    };
    const std::vector<int64_t> offsets = parseOffsets(n->annotation("om.output_offsets"));
    std::string mem;
    for (size_t i = 0; i < n->numOutputs(); ++i) {
      std::string item;
      if (!n->output(i)) item = "-";
      else if (isConst) item = "weight";
      else if (isData) item = "input";  // the caller's buffers (zero-copy), as lifetimes sees them
      else if (n->output(i)->isGraphOutput() || feedsNetOutput(n->output(i))) item = "output";
      else if (i < offsets.size() && offsets[i] >= 0) item = std::to_string(offsets[i]);
      else item = "-";
      mem += (i ? "," : "") + item;
    }
    if (n->numOutputs()) n->setAnnotation("mem.out", mem);
  }
  // Events: per stream, the kernel issued last before a record records it; the next kernel after a wait waits.
  std::map<uint32_t, Node*> lastOnStream;
  std::map<uint32_t, std::set<int>> pendingWaits;
  std::unordered_map<Node*, std::set<int>> records, waits;
  for (const OmTask& t : tasks) {
    const auto type = static_cast<TaskType>(t.type);
    if (type == TaskType::EventRecord) {
      if (Node* n = lastOnStream[t.streamId]) records[n].insert(int(t.eventId));
      continue;
    }
    if (type == TaskType::EventWait) {
      pendingWaits[t.streamId].insert(int(t.eventId));
      continue;
    }
    auto it = t.opName.empty() ? byName.end() : byName.find(t.opName);
    if (it == byName.end()) continue;
    Node* n = it->second;
    lastOnStream[t.streamId] = n;
    // The engine is what the compiler chose (a kernel task runs on AI Core, KERNEL_EX on AI CPU); the AI Core unit
    // is the op's usual one, by GE's op names for the ge domain.
    if (type == TaskType::Kernel) {
      const bool cube = defaultComputeUnit(n->domain(), n->opType()) == ComputeUnit::Cube;
      n->setAnnotation("engine", "aicore");
      n->setAnnotation("unit", cube ? "cube" : "vector");
    } else if (type == TaskType::KernelEx) {
      n->setAnnotation("engine", "aicpu");
      n->setAnnotation("unit", "aicpu");
    }
    if (auto& w = pendingWaits[t.streamId]; !w.empty()) {
      waits[n].insert(w.begin(), w.end());
      w.clear();
    }
  }
  for (const auto& [n, ids] : records) n->setAnnotation("event.record", joinIds({ids.begin(), ids.end()}));
  for (const auto& [n, ids] : waits) n->setAnnotation("event.wait", joinIds({ids.begin(), ids.end()}));
  if (tasks.empty()) {
    engineFromAttributes(g);
    eventsFromSendRecv(g);
  }
}

}  // namespace kiln::om
