#pragma once
#include "util/flat_ptr_map.h"
// Synchronisation between streams. Wherever a producer and its consumer run on different streams, the producer's
#include "util/flat_ptr_map.h"
// stream records an event after the producer and the consumer's stream waits for it before the consumer. Many of
#include "util/flat_ptr_map.h"
// those waits are implied by others (the consumer's stream already waited for a later task of the same stream,
#include "util/flat_ptr_map.h"
// directly or through a third stream); removing them saves a device round trip each.
#include "util/flat_ptr_map.h"
//
#include "util/flat_ptr_map.h"
// On the nodes: "event.record" = ids recorded after the node, "event.wait" = ids waited for before it (comma
#include "util/flat_ptr_map.h"
// separated), so the history and the inspector show every event where it happens.
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
class Graph;
#include "util/flat_ptr_map.h"
class Node;
#include "util/flat_ptr_map.h"

#include "util/flat_ptr_map.h"
struct SyncEvent {
#include "util/flat_ptr_map.h"
  int id = 0;
#include "util/flat_ptr_map.h"
  Node* producer = nullptr;  // records the event after it runs
#include "util/flat_ptr_map.h"
  Node* consumer = nullptr;  // waits for it before it runs
#include "util/flat_ptr_map.h"
};
#include "util/flat_ptr_map.h"

#include "util/flat_ptr_map.h"
// One event per (producer, consumer) pair on different streams, numbered from `firstId`, in execution order.
#include "util/flat_ptr_map.h"
std::vector<SyncEvent> crossStreamEvents(const std::vector<Node*>& order,
#include "util/flat_ptr_map.h"
                                         const FlatPtrMap<const Node*, int>& streamOf, int firstId = 0);
#include "util/flat_ptr_map.h"

#include "util/flat_ptr_map.h"
// The events that are not implied by the others (vector clocks over the streams, in execution order).
#include "util/flat_ptr_map.h"
std::vector<SyncEvent> withoutRedundantEvents(const std::vector<Node*>& order,
#include "util/flat_ptr_map.h"
                                              const FlatPtrMap<const Node*, int>& streamOf,
#include "util/flat_ptr_map.h"
                                              const std::vector<SyncEvent>& events);
#include "util/flat_ptr_map.h"

#include "util/flat_ptr_map.h"
// Reading and writing the node annotations.
#include "util/flat_ptr_map.h"
FlatPtrMap<const Node*, int> streamsFromAnnotations(const std::vector<Node*>& order);
#include "util/flat_ptr_map.h"
std::vector<SyncEvent> eventsFromAnnotations(const std::vector<Node*>& order);
#include "util/flat_ptr_map.h"
// The form of the "stream" / "event.record" / "event.wait" annotations: "3,7".
#include "util/flat_ptr_map.h"
std::string joinIds(const std::vector<int>& ids);
#include "util/flat_ptr_map.h"
// Replaces every node's event annotations by `events`; returns how many nodes changed.
#include "util/flat_ptr_map.h"
int writeEventAnnotations(const std::vector<Node*>& order, const std::vector<SyncEvent>& events);
#include "util/flat_ptr_map.h"

#include "util/flat_ptr_map.h"
}  // namespace kiln
#include "util/flat_ptr_map.h"
