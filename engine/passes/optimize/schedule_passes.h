#pragma once
// Stage 2 passes that decide where and in which order nodes run, one per file, in pipeline order: engine placement,
// partition into engine subgraphs, topological order, logical streams, the events between streams and the removal
// of events other events imply. Their decisions are node annotations ("engine", "unit", "partition", "stream",
// "event.record", "event.wait"), so the history records them and the inspector shows them.
#include <memory>

#include "passes/pass.h"

namespace kiln {

std::unique_ptr<Pass> makeEnginePlacementPass();        // engine + unit of every node (new fused nodes included)
std::unique_ptr<Pass> makeEnginePartitionPass();        // maximal acyclic same-engine subgraphs
std::unique_ptr<Pass> makeTopologicalSortPass();        // topo_sorting_mode: BFS, DFS, RDFS, StableRDFS
std::unique_ptr<Pass> makeStreamAssignmentPass();       // logical streams (schedule/stream_assigner.h)
std::unique_ptr<Pass> makeEventInsertionPass();         // an event on every cross-stream edge
std::unique_ptr<Pass> makeRedundantEventRemovalPass();  // drops events implied by others

}  // namespace kiln
