#pragma once
// Synchronisation between streams. Wherever a producer and its consumer run on different streams, the producer's
// stream records an event after the producer and the consumer's stream waits for it before the consumer. Many of
// those waits are implied by others (the consumer's stream already waited for a later task of the same stream,
// directly or through a third stream); removing them saves a device round trip each.
//
// On the nodes: "event.record" = ids recorded after the node, "event.wait" = ids waited for before it (comma
// separated), so the history and the inspector show every event where it happens.
#include <string>
#include <vector>

#include "util/flat_ptr_map.h"

namespace kiln {

class Graph;
class Node;

struct SyncEvent {
  int id = 0;
  Node* producer = nullptr;  // records the event after it runs
  Node* consumer = nullptr;  // waits for it before it runs
};

// One event per (producer, consumer) pair on different streams, numbered from `firstId`, in execution order.
std::vector<SyncEvent> crossStreamEvents(const std::vector<Node*>& order,
                                         const FlatPtrMap<const Node*, int>& streamOf, int firstId = 0);

// The events that are not implied by the others (vector clocks over the streams, in execution order).
std::vector<SyncEvent> withoutRedundantEvents(const std::vector<Node*>& order,
                                              const FlatPtrMap<const Node*, int>& streamOf,
                                              const std::vector<SyncEvent>& events);

// Reading and writing the node annotations.
FlatPtrMap<const Node*, int> streamsFromAnnotations(const std::vector<Node*>& order);
std::vector<SyncEvent> eventsFromAnnotations(const std::vector<Node*>& order);
// The form of the "stream" / "event.record" / "event.wait" annotations: "3,7".
std::string joinIds(const std::vector<int>& ids);
// Replaces every node's event annotations by `events`; returns how many nodes changed.
int writeEventAnnotations(const std::vector<Node*>& order, const std::vector<SyncEvent>& events);

}  // namespace kiln
