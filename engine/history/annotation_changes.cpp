#include "history/annotation_changes.h"

#include <algorithm>
#include <charconv>

#include "util/json.h"

namespace kiln {

namespace {

// annotations_json text of key/value pairs already in key order (a map, or sorted views).
template <typename Pairs>
std::string annotationsText(const Pairs& pairs) {
  std::string out = "{";
  for (const auto& [k, v] : pairs) {
    if (out.size() > 1) out += ',';
    appendJsonQuoted(out, k);
    out += ':';
    appendJsonQuoted(out, v);
  }
  out += '}';
  return out;
}

}  // namespace

std::string annotationsJson(const Annotations& a) { return annotationsText(a); }

namespace {

// A string that may have escapes: a view into the text, or a decoded copy kept in `decoded`.
std::string_view readView(JsonReader& r, std::deque<std::string>& decoded) {
  if (auto plain = r.readPlainString()) return *plain;
  decoded.push_back(r.readString());
  return decoded.back();
}

}  // namespace

AnnotationViews parseAnnotationViews(std::string_view json, std::deque<std::string>& decoded) {
  JsonReader r(json);
  AnnotationViews out;
  r.expect('{');
  if (!r.next('}')) {
    do {
      const std::string_view key = readView(r, decoded);
      r.expect(':');
      out.emplace_back(key, readView(r, decoded));
    } while (r.next(','));
    r.expect('}');
  }
  r.skipWs();
  if (!r.atEnd()) r.fail("unexpected text after the annotations");
  return out;
}

AnnotationViews readableAnnotations(std::string_view json, std::deque<std::string>& decoded) {
  if (json.empty()) return {};
  try {
    return parseAnnotationViews(json, decoded);
  } catch (const JsonError&) {
  }
  AnnotationViews out;
  try {
    const Json j = Json::parse(std::string(json), 8);
    if (j.isObject())
      for (const auto& [k, v] : j.asObject())
        if (v.isString()) {
          decoded.push_back(k);
          const std::string_view key = decoded.back();
          decoded.push_back(v.asString());
          out.emplace_back(key, decoded.back());
        }
  } catch (const std::exception&) {
    out.clear();
  }
  return out;
}

Annotations parseAnnotations(std::string_view json) {
  std::deque<std::string> decoded;
  Annotations out;
  for (const auto& [k, v] : parseAnnotationViews(json, decoded)) out[std::string(k)] = std::string(v);
  return out;
}

namespace {

void appendSide(std::string& out, const std::string* v) {
  if (v)
    appendJsonQuoted(out, *v);
  else
    out += "null";
}

std::optional<std::string_view> readSide(JsonReader& r, std::deque<std::string>& decoded) {
  if (r.readNull()) return std::nullopt;
  return readView(r, decoded);
}

}  // namespace

std::string annotationChangesJson(const AnnotationJournal& edits, const std::function<bool(int64_t)>& skip,
                                  int64_t& nodes) {
  nodes = 0;
  // Per node and key, in the order made: a stable sort keeps each key's edits in sequence.
  std::vector<uint32_t> order;
  order.reserve(edits.size());
  for (size_t i = 0; i < edits.size(); ++i)
    if (!skip(edits[i].node)) order.push_back(static_cast<uint32_t>(i));
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const AnnotationJournalEntry &x = edits[a], &y = edits[b];
    return x.node != y.node ? x.node < y.node : x.key < y.key;
  });
  std::string out = "{";
  int64_t openNode = 0;  // the node whose entry is open in `out` (ids are > 0)
  for (size_t i = 0; i < order.size();) {
    const AnnotationJournalEntry& first = edits[order[i]];
    size_t j = i + 1;
    while (j < order.size() && edits[order[j]].node == first.node && edits[order[j]].key == first.key) ++j;
    const AnnotationJournalEntry& last = edits[order[j - 1]];
    i = j;
    if (first.before == last.after) continue;  // changed and changed back within the pass
    if (first.node != openNode) {
      if (openNode) out += "},";
      char id[24];
      const auto end = std::to_chars(id, id + sizeof id, first.node).ptr;
      out += '"';
      out.append(id, end);
      out += "\":{";
      openNode = first.node;
      ++nodes;
    } else {
      out += ',';
    }
    appendJsonQuoted(out, first.key);
    out += ":[";
    appendSide(out, first.before ? &*first.before : nullptr);
    out += ',';
    appendSide(out, last.after ? &*last.after : nullptr);
    out += ']';
  }
  if (openNode) out += '}';
  out += '}';
  return nodes ? out : std::string();
}

void AnnotationLog::add(int seq, std::string changesJson, const std::function<bool(int64_t)>& wanted) {
  texts_.push_back(std::move(changesJson));
  JsonReader r(texts_.back());
  r.expect('{');
  if (!r.next('}')) {
    do {
      const std::string_view id = readView(r, texts_);
      int64_t node = 0;
      const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), node);
      if (ec != std::errc() || end != id.data() + id.size() || node <= 0)
        r.fail("bad node id \"" + std::string(id) + "\"");
      r.expect(':');
      if (wanted && !wanted(node)) {
        r.skipValue();
        continue;
      }
      r.expect('{');
      if (r.next('}')) continue;
      do {
        AnnotationEdit e;
        e.node = node;
        e.seq = seq;
        e.key = readView(r, texts_);
        r.expect(':');
        r.expect('[');
        e.before = readSide(r, texts_);
        r.expect(',');
        e.after = readSide(r, texts_);
        r.expect(']');
        edits_.push_back(e);
      } while (r.next(','));
      r.expect('}');
    } while (r.next(','));
    r.expect('}');
  }
  r.skipWs();
  if (!r.atEnd()) r.fail("unexpected text after the annotation changes");
}

void AnnotationLog::seal() {
  // Edits are sorted by (node, seq): one pass never edits a key of a node twice, so no further order is needed.
  std::sort(edits_.begin(), edits_.end(), [](const AnnotationEdit& x, const AnnotationEdit& y) {
    return x.node != y.node ? x.node < y.node : x.seq < y.seq;
  });
}

std::pair<const AnnotationEdit*, const AnnotationEdit*> AnnotationLog::editsOf(int64_t node) const {
  auto lo = std::lower_bound(edits_.begin(), edits_.end(), node,
                             [](const AnnotationEdit& e, int64_t n) { return e.node < n; });
  auto hi = lo;
  while (hi != edits_.end() && hi->node == node) ++hi;
  return {edits_.data() + (lo - edits_.begin()), edits_.data() + (hi - edits_.begin())};
}

void AnnotationLog::applyForward(NodeRow& row, int pass) const { replay(row, row.span.firstPass, pass, false); }

void AnnotationLog::rewind(NodeRow& row, int a, int b) const { replay(row, a, b, true); }

namespace {

// Applies edits to a row's annotations (their `after` sides in the order given, or their `before` sides).
void applyEdits(NodeRow& row, const std::vector<const AnnotationEdit*>& edits, bool before) {
  std::deque<std::string> decoded;
  AnnotationViews m;
  try {
    m = parseAnnotationViews(row.annotationsJson, decoded);
  } catch (const JsonError&) {
    return;  // a hand-edited cell: shown as it is rather than guessed at
  }
  for (const AnnotationEdit* e : edits) {
    const std::optional<std::string_view>& v = before ? e->before : e->after;
    auto it = std::find_if(m.begin(), m.end(), [&](const auto& kv) { return kv.first == e->key; });
    if (!v) {
      if (it != m.end()) m.erase(it);
    } else if (it != m.end()) {
      it->second = *v;
    } else {
      m.emplace_back(e->key, *v);
    }
  }
  // annotations_json keeps keys sorted (std::map order: bytewise, as string_view compares).
  std::sort(m.begin(), m.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  row.annotationsJson = annotationsText(m);
}

}  // namespace

void AnnotationLog::replay(NodeRow& row, int from, int to, bool backwards) const {
  auto [first, last] = editsOf(row.id);
  std::vector<const AnnotationEdit*> edits;
  for (const AnnotationEdit* e = first; e != last; ++e)
    if (e->seq > from && e->seq <= to) edits.push_back(e);
  if (edits.empty()) return;
  if (backwards) std::reverse(edits.begin(), edits.end());
  applyEdits(row, edits, backwards);
}

void AnnotationLog::applyForward(std::vector<NodeRow>& rows, int pass) const {
  if (edits_.empty() || rows.empty()) return;
  // Edits are in the order the passes were added (ascending seq, as graphAt loads them): bucketed by row (a
  // counting sort over row indexes, not a sort of the ~350k edits of a 44k-node run), each row's in pass order.
  // Ids are dense (one counter per model), so a table by id finds a row; sparse ids fall back to a search.
  const int64_t maxId = rows.back().id;
  const bool dense = maxId >= 0 && static_cast<uint64_t>(maxId) <= 4 * rows.size() + 1024;
  std::vector<int32_t> rowOfId(dense ? static_cast<size_t>(maxId) + 1 : 0, -1);
  for (size_t i = 0; dense && i < rows.size(); ++i)
    if (rows[i].id >= 0) rowOfId[static_cast<size_t>(rows[i].id)] = static_cast<int32_t>(i);
  auto rowOf = [&](int64_t id) -> int32_t {
    if (dense) return id >= 0 && id <= maxId ? rowOfId[static_cast<size_t>(id)] : -1;
    auto it = std::lower_bound(rows.begin(), rows.end(), id, [](const NodeRow& r, int64_t x) { return r.id < x; });
    return it != rows.end() && it->id == id ? static_cast<int32_t>(it - rows.begin()) : -1;
  };
  std::vector<int32_t> target(edits_.size(), -1);
  std::vector<uint32_t> start(rows.size() + 1, 0);
  for (size_t k = 0; k < edits_.size(); ++k) {
    const AnnotationEdit& e = edits_[k];
    const int32_t r = rowOf(e.node);
    if (r < 0 || e.seq <= rows[static_cast<size_t>(r)].span.firstPass || e.seq > pass) continue;
    target[k] = r;
    ++start[static_cast<size_t>(r) + 1];
  }
  for (size_t i = 0; i < rows.size(); ++i) start[i + 1] += start[i];
  std::vector<const AnnotationEdit*> ordered(start.back());
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  for (size_t k = 0; k < edits_.size(); ++k)
    if (target[k] >= 0) ordered[fill[static_cast<size_t>(target[k])]++] = &edits_[k];
  std::vector<const AnnotationEdit*> one;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (start[i] == start[i + 1]) continue;
    one.assign(ordered.begin() + start[i], ordered.begin() + start[i + 1]);
    applyEdits(rows[i], one, false);
  }
}

std::vector<std::string> AnnotationLog::changedKeys(int64_t node, int a, int b) const {
  auto [first, last] = editsOf(node);
  // Per key: its value before the first edit in (a, b] and after the last one.
  std::map<std::string_view, std::pair<std::optional<std::string_view>, std::optional<std::string_view>>> net;
  for (const AnnotationEdit* e = first; e != last; ++e) {
    if (e->seq <= a || e->seq > b) continue;
    auto [it, fresh] = net.try_emplace(e->key, e->before, e->after);
    if (!fresh) it->second.second = e->after;
  }
  std::vector<std::string> out;
  for (const auto& [key, sides] : net)
    if (sides.first != sides.second) out.emplace_back(key);
  return out;
}

std::vector<int64_t> AnnotationLog::nodesEditedIn(int a, int b) const {
  std::vector<int64_t> out;
  for (const AnnotationEdit& e : edits_)
    if (e.seq > a && e.seq <= b && (out.empty() || out.back() != e.node)) out.push_back(e.node);
  return out;
}

}  // namespace kiln
