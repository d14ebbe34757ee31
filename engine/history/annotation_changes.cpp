#include "history/annotation_changes.h"

#include <algorithm>
#include <charconv>

#include "util/json.h"

namespace kiln {

std::string annotationsJson(const Annotations& a) {
  std::string out = "{";
  for (const auto& [k, v] : a) {
    if (out.size() > 1) out += ',';
    appendJsonQuoted(out, k);
    out += ':';
    appendJsonQuoted(out, v);
  }
  out += '}';
  return out;
}

Annotations parseAnnotations(std::string_view json) {
  JsonReader r(json);
  Annotations out;
  r.expect('{');
  if (!r.next('}')) {
    do {
      std::string key = r.readString();
      r.expect(':');
      out[std::move(key)] = r.readString();
    } while (r.next(','));
    r.expect('}');
  }
  r.skipWs();
  if (!r.atEnd()) r.fail("unexpected text after the annotations");
  return out;
}

namespace {

void appendSide(std::string& out, const std::string* v) {
  if (v)
    appendJsonQuoted(out, *v);
  else
    out += "null";
}

std::optional<std::string> readSide(JsonReader& r) {
  if (r.readNull()) return std::nullopt;
  return r.readString();
}

}  // namespace

bool appendAnnotationChanges(std::string& out, int64_t nodeId, const Annotations& before, const Annotations& after) {
  bool any = false;
  auto change = [&](const std::string& key, const std::string* was, const std::string* now) {
    if (!any) {
      if (out.size() > 1 && out.back() != '{') out += ',';
      char id[24];
      const auto end = std::to_chars(id, id + sizeof id, nodeId).ptr;
      out += '"';
      out.append(id, end);
      out += "\":{";
      any = true;
    } else {
      out += ',';
    }
    appendJsonQuoted(out, key);
    out += ":[";
    appendSide(out, was);
    out += ',';
    appendSide(out, now);
    out += ']';
  };
  // Both maps are sorted: one merge walk finds the keys added, removed and changed.
  auto b = before.begin(), a = after.begin();
  while (b != before.end() || a != after.end()) {
    if (a == after.end() || (b != before.end() && b->first < a->first)) {
      change(b->first, &b->second, nullptr);
      ++b;
    } else if (b == before.end() || a->first < b->first) {
      change(a->first, nullptr, &a->second);
      ++a;
    } else {
      if (a->second != b->second) change(a->first, &b->second, &a->second);
      ++a;
      ++b;
    }
  }
  if (any) out += '}';
  return any;
}

void AnnotationLog::add(int seq, std::string_view changesJson, const std::function<bool(int64_t)>& wanted) {
  JsonReader r(changesJson);
  r.expect('{');
  if (!r.next('}')) {
    do {
      const std::string id = r.readString();
      int64_t node = 0;
      const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), node);
      if (ec != std::errc() || end != id.data() + id.size() || node <= 0) r.fail("bad node id \"" + id + "\"");
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
        e.key = r.readString();
        r.expect(':');
        r.expect('[');
        e.before = readSide(r);
        r.expect(',');
        e.after = readSide(r);
        r.expect(']');
        edits_.push_back(std::move(e));
      } while (r.next(','));
      r.expect('}');
    } while (r.next(','));
    r.expect('}');
  }
  r.skipWs();
  if (!r.atEnd()) r.fail("unexpected text after the annotation changes");
}

void AnnotationLog::seal() {
  std::stable_sort(edits_.begin(), edits_.end(), [](const AnnotationEdit& x, const AnnotationEdit& y) {
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

void AnnotationLog::replay(NodeRow& row, int from, int to, bool backwards) const {
  auto [first, last] = editsOf(row.id);
  auto inRange = [&](const AnnotationEdit& e) { return e.seq > from && e.seq <= to; };
  if (std::none_of(first, last, inRange)) return;
  Annotations m;
  try {
    m = parseAnnotations(row.annotationsJson);
  } catch (const JsonError&) {
    return;  // a hand-edited cell: shown as it is rather than guessed at
  }
  const ptrdiff_t n = last - first;
  for (ptrdiff_t i = 0; i < n; ++i) {
    const AnnotationEdit& e = backwards ? first[n - 1 - i] : first[i];
    if (!inRange(e)) continue;
    const std::optional<std::string>& v = backwards ? e.before : e.after;
    if (v)
      m[e.key] = *v;
    else
      m.erase(e.key);
  }
  row.annotationsJson = annotationsJson(m);
}

std::vector<int64_t> AnnotationLog::nodesEditedIn(int a, int b) const {
  std::vector<int64_t> out;
  for (const AnnotationEdit& e : edits_)
    if (e.seq > a && e.seq <= b && (out.empty() || out.back() != e.node)) out.push_back(e.node);
  return out;
}

}  // namespace kiln
