#pragma once
#include "util/flat_ptr_map.h"
// Logical stream assignment, in GE's order of rules:
#include "util/flat_ptr_map.h"
//   1. user label   — nodes carrying the string attribute "_user_stream_label" share one stream per label;
#include "util/flat_ptr_map.h"
//   2. own engine   — AI CPU work runs on streams of its own, never interleaved with AI Core kernels;
#include "util/flat_ptr_map.h"
//   3. dependency   — an AI Core node continues the stream of a producer of the same engine whose stream it would
#include "util/flat_ptr_map.h"
//                     extend (the producer is still that stream's last node); otherwise it starts a new stream,
#include "util/flat_ptr_map.h"
//                     so independent branches run in parallel; past the engine's stream limit it joins the
#include "util/flat_ptr_map.h"
//                     stream that has been idle longest;
#include "util/flat_ptr_map.h"
//   4. cube/vector  — in "cv" parallel mode cube and vector kernels count as two engines, each with its streams.
#include "util/flat_ptr_map.h"
// Host nodes (shape bookkeeping, no device task) follow their first producer's stream and never open one.
#include "util/flat_ptr_map.h"
// With single_stream everything is stream 0.
#include "util/flat_ptr_map.h"
#include <map>
#include "util/flat_ptr_map.h"
#include <string>
#include "util/flat_ptr_map.h"
#include "util/flat_ptr_map.h"
#include <vector>
#include "util/flat_ptr_map.h"

#include "util/flat_ptr_map.h"
namespace kiln {
#include "util/flat_ptr_map.h"

#include "util/flat_ptr_map.h"
class Node;
#include "util/flat_ptr_map.h"
class Options;
#include "util/flat_ptr_map.h"

#include "util/flat_ptr_map.h"
struct StreamPolicy {
#include "util/flat_ptr_map.h"
  bool singleStream = false;
#include "util/flat_ptr_map.h"
  bool splitCubeVector = false;
#include "util/flat_ptr_map.h"
  // Most streams per engine class ("aicore", "aicpu", or "aicore.cube"/"aicore.vector" when split).
#include "util/flat_ptr_map.h"
  std::map<std::string, int> maxStreams = {{"aicore", 8}, {"aicpu", 1}};
#include "util/flat_ptr_map.h"
  int maxFor(const std::string& engineClass) const;
#include "util/flat_ptr_map.h"

#include "util/flat_ptr_map.h"
  // From enable_single_stream, multi_stream_parallel_mode ("cv", "LoadBalance:N") and stream_max_parallel_num.
#include "util/flat_ptr_map.h"
  static StreamPolicy fromOptions(const Options& options);
#include "util/flat_ptr_map.h"
};
#include "util/flat_ptr_map.h"

#include "util/flat_ptr_map.h"
struct StreamInfo {
#include "util/flat_ptr_map.h"
  int id = 0;
#include "util/flat_ptr_map.h"
  std::string engineClass;  // what runs on it; "label:NAME" for a user-labelled stream
#include "util/flat_ptr_map.h"
  int nodes = 0;
#include "util/flat_ptr_map.h"
};
#include "util/flat_ptr_map.h"

#include "util/flat_ptr_map.h"
struct StreamPlan {
#include "util/flat_ptr_map.h"
  FlatPtrMap<const Node*, int> streamOf;
#include "util/flat_ptr_map.h"
  FlatPtrMap<const Node*, std::string> reason;  // which rule decided (shown in the inspector)
#include "util/flat_ptr_map.h"
  std::vector<StreamInfo> streams;
#include "util/flat_ptr_map.h"
};
#include "util/flat_ptr_map.h"

#include "util/flat_ptr_map.h"
// `order` is the execution order of one graph's nodes (every producer before its consumers).
#include "util/flat_ptr_map.h"
StreamPlan assignStreams(const std::vector<Node*>& order, const StreamPolicy& policy);
#include "util/flat_ptr_map.h"

#include "util/flat_ptr_map.h"
}  // namespace kiln
#include "util/flat_ptr_map.h"
