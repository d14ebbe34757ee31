#pragma once
// Annotation changes as they happen, for an observer that asked for them. Scheduling passes annotate every node of
// the graph (engine, stream, events, memory offsets, tasks) and change nothing else about them; finding those
// changes afterwards meant comparing each annotated node's map with a copy kept from the last pass, about a
// microsecond per node on a large graph. With a journal attached to the model's IdSource, Node::setAnnotation and
// Node::eraseAnnotation log each real change with its old value instead, while the node is in cache anyway; the
// history recorder (history/history_recorder.h) hands the log to its writer thread, which packs it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

struct AnnotationJournalEntry {
  int64_t node = 0;  // NodeId
  std::string key;
  std::optional<std::string> before, after;  // empty: the key was absent on that side
};

using AnnotationJournal = std::vector<AnnotationJournalEntry>;

}  // namespace kiln
