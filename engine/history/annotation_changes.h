#pragma once
// A pass's annotation-only changes, packed into one row per pass. Scheduling passes (engines, streams, events,
// memory offsets, tasks) annotate most nodes and change nothing else about them; a new node row per annotated node
// made such a pass cost as much to record as the import, and its diff as much to read. So a node's row is
// re-versioned only when its op, name, attributes or place change; annotation changes on a node whose row stays go
// into annotation_changes.changes_json of the pass:
//
//   {"<node id>": {"<key>": ["<old>" | null, "<new>" | null], ...}, ...}   null: absent on that side
//
// The node's annotations after pass k are its row's annotations_json with the changes of passes (first_pass, k]
// applied in order; old values let a diff between passes a < b undo the changes of (a, b] from the later graph
// alone. Both directions live in AnnotationLog, which every reader of the graph tables goes through.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "history/history_rows.h"
#include "ir/annotation_journal.h"

namespace kiln {

using Annotations = std::map<std::string, std::string>;

// annotations_json text of a map, as the nodes table stores it: {"key":"value",...}, keys sorted.
std::string annotationsJson(const Annotations& a);
// Reads annotations_json text. Throws JsonError when it is not an object whose values are strings.
Annotations parseAnnotations(std::string_view json);
// The same as views into `json` (decoded copies in `decoded` for strings with escapes), in the text's order.
using AnnotationViews = std::vector<std::pair<std::string_view, std::string_view>>;
AnnotationViews parseAnnotationViews(std::string_view json, std::deque<std::string>& decoded);
// What a viewer can read of a row's annotations_json written by any tool: parseAnnotationViews, or, when the text
// is not Kiln's strings-only object, the string values of whatever object it holds (others skipped); nothing for
// text that is not a JSON object. Never throws on bad text.
AnnotationViews readableAnnotations(std::string_view json, std::deque<std::string>& decoded);

// changes_json of one pass from the annotation journal of that pass (ir/annotation_journal.h), edits in the order
// they were made: per node and key the value before the first edit and after the last. Keys that ended as they
// began are left out, and so are the nodes `skip` names. "" when nothing is left; `nodes` counts the nodes written.
std::string annotationChangesJson(const AnnotationJournal& edits, const std::function<bool(int64_t)>& skip,
                                  int64_t& nodes);

struct AnnotationEdit {
  int64_t node = 0;
  int seq = 0;
  std::string_view key;
  std::optional<std::string_view> before, after;  // empty: the key was absent on that side
};

// The annotation changes of some passes of one run, indexed by node. Edits are views into the texts the log keeps
// (a 50k-node run holds hundreds of thousands of them).
class AnnotationLog {
 public:
  // Adds pass `seq`'s changes_json (passes in any order), only the nodes `wanted` accepts when it is given (the
  // others are skipped unread). Throws JsonError when the text is malformed.
  void add(int seq, std::string changesJson, const std::function<bool(int64_t)>& wanted = {});
  // Indexes what was added; call once after the adds, before the queries.
  void seal();
  bool empty() const { return edits_.empty(); }
  size_t size() const { return edits_.size(); }

  // The row as it was at `pass` (valid then): its annotations_json with the edits of (firstPass, pass] applied.
  // A row whose own annotations cannot be read is left as it is.
  void applyForward(NodeRow& row, int pass) const;
  // applyForward for every row valid at `pass`, sorted by id, without seal(): the edits must have been added in
  // ascending pass order.
  void applyForward(std::vector<NodeRow>& rows, int pass) const;
  // `row` holds the annotations at pass b; rewinds them to pass a < b by undoing the edits of (a, b].
  void rewind(NodeRow& row, int a, int b) const;
  // Ids of the nodes with an edit in passes (a, b], ascending.
  std::vector<int64_t> nodesEditedIn(int a, int b) const;
  // The keys of `node` whose value at pass a differs from that at pass b (a < b), sorted: what its edits in (a, b]
  // changed net of changes undone in between.
  std::vector<std::string> changedKeys(int64_t node, int a, int b) const;

 private:
  std::pair<const AnnotationEdit*, const AnnotationEdit*> editsOf(int64_t node) const;
  // Applies the edits of passes (from, to] to the row's annotations, in pass order or undoing them in reverse.
  void replay(NodeRow& row, int from, int to, bool backwards) const;

  std::deque<std::string> texts_;      // the changes_json added, and decoded strings; deque: views stay valid
  std::vector<AnnotationEdit> edits_;  // by (node, seq) once sealed
};

}  // namespace kiln
