#pragma once
// Logical stream assignment, in GE's order of rules:
//   1. user label   — nodes carrying the string attribute "_user_stream_label" share one stream per label;
//   2. own engine   — AI CPU work runs on streams of its own, never interleaved with AI Core kernels;
//   3. dependency   — an AI Core node continues the stream of a producer of the same engine whose stream it would
//                     extend (the producer is still that stream's last node); otherwise it starts a new stream,
//                     so independent branches run in parallel; past the engine's stream limit it joins the
//                     stream that has been idle longest;
//   4. cube/vector  — in "cv" parallel mode cube and vector kernels count as two engines, each with its streams.
// Host nodes (shape bookkeeping, no device task) follow their first producer's stream and never open one.
// With single_stream everything is stream 0.
#include <map>
#include <string>
#include <vector>

#include "util/flat_ptr_map.h"

namespace kiln {

class Node;
class Options;

struct StreamPolicy {
  bool singleStream = false;
  bool splitCubeVector = false;
  // Most streams per engine class ("aicore", "aicpu", or "aicore.cube"/"aicore.vector" when split).
  std::map<std::string, int> maxStreams = {{"aicore", 8}, {"aicpu", 1}};
  int maxFor(const std::string& engineClass) const;

  // From enable_single_stream, multi_stream_parallel_mode ("cv", "LoadBalance:N") and stream_max_parallel_num.
  static StreamPolicy fromOptions(const Options& options);
};

struct StreamInfo {
  int id = 0;
  std::string engineClass;  // what runs on it; "label:NAME" for a user-labelled stream
  int nodes = 0;
};

struct StreamPlan {
  FlatPtrMap<const Node*, int> streamOf;
  FlatPtrMap<const Node*, std::string> reason;  // which rule decided (shown in the inspector)
  std::vector<StreamInfo> streams;
};

// `order` is the execution order of one graph's nodes (every producer before its consumers).
StreamPlan assignStreams(const std::vector<Node*>& order, const StreamPolicy& policy);

}  // namespace kiln
