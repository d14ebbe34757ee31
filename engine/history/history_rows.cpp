#include "history/history_rows.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "history/annotation_changes.h"
#include "ir/graph.h"
#include "util/json.h"

namespace kiln {

namespace {

// A float as the shortest decimal that reads back as the same float (0.1f -> 0.1, not 0.100000001490116). JSON has
// no NaN/Inf, and the writer would turn them into null, so they become strings to stay visible in diffs.
Json floatJson(float f) {
  if (std::isnan(f)) return Json("nan");
  if (std::isinf(f)) return Json(f > 0 ? "inf" : "-inf");
  char buf[32];
  for (int precision = 6; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, static_cast<double>(f));
    if (std::strtof(buf, nullptr) == f) break;
  }
  return Json(std::strtod(buf, nullptr));
}

// FNV-1a, 64 bit: enough to tell two weights apart in a diff without storing them.
struct Fnv1a64 {
  uint64_t h = 0xcbf29ce484222325ull;
  void add(const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      h ^= p[i];
      h *= 0x100000001b3ull;
    }
  }
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
  }
};

Json tensorJson(const Tensor& t) {
  Json j = Json::object();
  j.set("dtype", std::string(dtypeName(t.dtype())));
  Json dims = Json::array();
  for (int64_t d : t.dims()) dims.push(d);
  j.set("dims", std::move(dims));
  Fnv1a64 hash;
  if (t.dtype() == DType::String) {
    // Length-prefixed so that {"ab","c"} and {"a","bc"} differ.
    for (const std::string& s : t.strings()) {
      const uint64_t len = s.size();
      hash.add(reinterpret_cast<const uint8_t*>(&len), sizeof len);
      hash.add(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    }
  } else if (t.data()) {
    hash.add(t.data(), t.byteSize());
  }
  j.set("fnv1a64", hash.hex());
  return j;
}

Json graphJson(const Attribute::GraphPtr& g) { return Json("<graph " + (g ? g->name() : std::string()) + ">"); }

Json attributeToJson(const Attribute& a) {
  switch (a.kind()) {
    case Attribute::Kind::Float: return floatJson(*a.get<float>());
    case Attribute::Kind::Int: return Json(*a.get<int64_t>());
    case Attribute::Kind::String: return Json(*a.get<std::string>());
    case Attribute::Kind::Tensor: return tensorJson(*a.get<Tensor>());
    case Attribute::Kind::Graph: return graphJson(*a.get<Attribute::GraphPtr>());
    case Attribute::Kind::Type: return Json(a.get<ValueType>()->toString());
    case Attribute::Kind::Floats: {
      Json arr = Json::array();
      for (float f : *a.get<std::vector<float>>()) arr.push(floatJson(f));
      return arr;
    }
    case Attribute::Kind::Ints: {
      Json arr = Json::array();
      for (int64_t v : *a.get<std::vector<int64_t>>()) arr.push(v);
      return arr;
    }
    case Attribute::Kind::Strings: {
      Json arr = Json::array();
      for (const auto& s : *a.get<std::vector<std::string>>()) arr.push(s);
      return arr;
    }
    case Attribute::Kind::Tensors: {
      Json arr = Json::array();
      for (const auto& t : *a.get<std::vector<Tensor>>()) arr.push(tensorJson(t));
      return arr;
    }
    case Attribute::Kind::Graphs: {
      Json arr = Json::array();
      for (const auto& g : *a.get<std::vector<Attribute::GraphPtr>>()) arr.push(graphJson(g));
      return arr;
    }
    case Attribute::Kind::Types: {
      Json arr = Json::array();
      for (const auto& t : *a.get<std::vector<ValueType>>()) arr.push(t.toString());
      return arr;
    }
  }
  return Json();
}

// Where a graph sits: the owning node's id and the attribute holding it ("body", or "branches[1]" for a list).
void locateGraph(const Graph* g, int64_t& owner, std::string& attr) {
  owner = 0;
  attr.clear();
  const Node* n = g ? g->owner() : nullptr;
  if (!n) return;
  owner = n->id();
  for (const NamedAttribute& a : n->attributes()) {
    if (auto one = a.value.get<Attribute::GraphPtr>(); one && one->get() == g) {
      attr = a.name;
      return;
    }
    if (auto many = a.value.get<std::vector<Attribute::GraphPtr>>()) {
      for (size_t i = 0; i < many->size(); ++i)
        if ((*many)[i].get() == g) {
          attr = a.name + "[" + std::to_string(i) + "]";
          return;
        }
    }
  }
}

}  // namespace

std::string attributeJson(const Attribute& a) { return attributeToJson(a).dump(); }

namespace {

// The attributes column: sorted by name, so a pass that removes and re-adds an attribute (moving it to the end)
// changes nothing.
//
// Written straight into the text for the common kinds (ints, strings and their lists), as Json::dump writes them:
// every node row written serialises its attributes, and building a Json tree for them was an eighth of what
// recording costs the compile's thread. Other kinds, and duplicate names (which Json::set merges), go through Json.
void appendAttributeJson(std::string& out, const Attribute& a) {
  auto appendInt = [&out](int64_t v) {
    char buf[24];
    out.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
  };
  auto appendList = [&out](const auto& items, auto appendOne) {
    out += '[';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += ',';
      appendOne(items[i]);
    }
    out += ']';
  };
  switch (a.kind()) {
    case Attribute::Kind::Int: appendInt(*a.get<int64_t>()); return;
    case Attribute::Kind::String: appendJsonQuoted(out, *a.get<std::string>()); return;
    case Attribute::Kind::Ints: return appendList(*a.get<std::vector<int64_t>>(), appendInt);
    case Attribute::Kind::Strings:
      return appendList(*a.get<std::vector<std::string>>(), [&out](const std::string& v) { appendJsonQuoted(out, v); });
    default: out += attributeToJson(a).dump();
  }
}

std::string attributesJson(const Node& n) {
  std::vector<const NamedAttribute*> attrs;
  attrs.reserve(n.attributes().size());
  for (const NamedAttribute& a : n.attributes()) attrs.push_back(&a);
  std::sort(attrs.begin(), attrs.end(), [](const auto* x, const auto* y) { return x->name < y->name; });
  const bool duplicates = std::adjacent_find(attrs.begin(), attrs.end(), [](const auto* x, const auto* y) {
                            return x->name == y->name;
                          }) != attrs.end();
  if (duplicates) {
    Json aj = Json::object();
    for (const NamedAttribute* a : attrs) aj.set(a->name, attributeToJson(a->value));
    return aj.dump();
  }
  std::string out = "{";
  for (const NamedAttribute* a : attrs) {
    if (out.size() > 1) out += ',';
    appendJsonQuoted(out, a->name);
    out += ':';
    appendAttributeJson(out, a->value);
  }
  out += '}';
  return out;
}

}  // namespace

bool sameStructure(const NodeRow& row, const Node& n, bool attrsUnchanged) {
  if (row.opType != n.opType() || row.domain != n.domain() || row.name != n.name()) return false;
  const Graph* g = n.graph();
  if (g && g->owner()) {
    int64_t owner = 0;
    std::string attr;
    locateGraph(g, owner, attr);
    if (owner != row.graphOwner || attr != row.graphAttr) return false;
  } else if (row.graphOwner != 0 || !row.graphAttr.empty()) {
    return false;
  }
  return attrsUnchanged || attributesJson(n) == row.attrsJson;
}

NodeRow nodeRowOf(const Node& n, const std::string* knownAttrsJson, bool withAnnotations) {
  NodeRow r;
  r.id = n.id();
  locateGraph(n.graph(), r.graphOwner, r.graphAttr);
  r.opType = n.opType();
  r.domain = n.domain();
  r.name = n.name();
  r.attrsJson = knownAttrsJson ? *knownAttrsJson : attributesJson(n);
  if (withAnnotations) r.annotationsJson = annotationsJson(n.annotations());
  return r;
}

ValueRow valueRowOf(const Value& v) {
  ValueRow r;
  r.id = v.id();
  locateGraph(v.graph(), r.graphOwner, r.graphAttr);
  r.name = v.name();
  const ValueType& t = v.type();
  if (t.kind == ValueType::Kind::Tensor || t.kind == ValueType::Kind::SparseTensor) {
    r.dtype = std::string(dtypeName(t.dtype));
    if (t.kind == ValueType::Kind::SparseTensor) r.dtype = "sparse " + r.dtype;
    if (t.shape.rankKnown()) r.shape = t.shape.toString();
  } else if (t.known()) {
    r.dtype = t.toString();
  }
  r.format = std::string(formatName(t.format));
  r.bytes = t.byteSize();
  if (v.producer()) {
    r.producerNode = v.producer()->id();
    r.producerIndex = static_cast<int64_t>(v.producerIndex());
  }
  r.isInput = v.isGraphInput();
  r.isOutput = v.isGraphOutput();
  r.isConstant = v.constant() != nullptr;
  return r;
}

}  // namespace kiln
