#include "layout/node_overlay.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>

#include "history/annotation_changes.h"
#include "util/units.h"

namespace kiln::layout {
namespace {

constexpr const char* kTime = "simulated time";
constexpr const char* kBytesMoved = "bytes moved";
constexpr const char* kOutputBytes = "output bytes";
constexpr const char* kArenaOffset = "arena offset";
constexpr const char* kUnit = "compute unit";
constexpr const char* kAnnotation = "annotation:";

std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(v)) return std::nullopt;
  return v;  // "1024,2048" (mem.out of a node with two outputs) reads as its first number
}

std::map<std::string, std::string> annotationsOf(const NodeRow& row) {
  std::deque<std::string> decoded;
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : readableAnnotations(row.annotationsJson, decoded)) out[std::string(k)] = std::string(v);
  return out;
}

}  // namespace

std::string Rgb::hex() const {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
  return buf;
}

std::optional<Rgb> Rgb::parse(const std::string& hex) {
  if (hex.size() != 7 || hex[0] != '#') return std::nullopt;
  unsigned v = 0;
  for (size_t i = 1; i < 7; ++i) {
    const char c = hex[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return std::nullopt;
    v = v * 16 + unsigned(d);
  }
  return Rgb{uint8_t(v >> 16), uint8_t((v >> 8) & 255), uint8_t(v & 255)};
}

Rgb Overlay::ramp(double t) {
  // Viridis at five stops: dark blue (low) through green to yellow (high), readable for colour-blind users.
  static const Rgb stops[] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(t, 0.0, 1.0) * 4;
  const size_t i = std::min<size_t>(3, size_t(t));
  const double f = t - double(i);
  auto mix = [&](uint8_t a, uint8_t b) { return uint8_t(std::lround(a + (b - a) * f)); };
  return {mix(stops[i].r, stops[i + 1].r), mix(stops[i].g, stops[i + 1].g), mix(stops[i].b, stops[i + 1].b)};
}

Rgb Overlay::categoryColour(size_t index) {
  static const Rgb palette[] = {{78, 121, 167}, {242, 142, 43}, {225, 87, 89},  {118, 183, 178}, {89, 161, 79},
                                {237, 201, 72}, {176, 122, 161}, {255, 157, 167}, {156, 117, 95}, {186, 176, 172}};
  return palette[index % 10];
}

std::optional<Rgb> Overlay::colourOf(int64_t node) const {
  if (categorical) {
    auto it = categories.find(node);
    if (it == categories.end()) return std::nullopt;
    const auto at = std::find(categoryOrder.begin(), categoryOrder.end(), it->second);
    return categoryColour(size_t(at - categoryOrder.begin()));
  }
  auto it = values.find(node);
  if (it == values.end()) return std::nullopt;
  double t = 0.5;
  if (hi > lo) {
    t = logScale ? (std::log(std::max(it->second, lo)) - std::log(lo)) / (std::log(hi) - std::log(lo))
                 : (it->second - lo) / (hi - lo);
  }
  return ramp(t);
}

std::string Overlay::valueAt(double t) const {
  return format(hi <= lo ? lo : logScale ? std::exp(std::log(lo) + t * (std::log(hi) - std::log(lo))) : lo + t * (hi - lo));
}

std::string Overlay::format(double v) const {
  if (unit == "µs") return formatDuration(v / 1e6);
  if (unit == "bytes") return formatBytes(v);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::vector<std::string> overlayMetrics(const PassView& view, const std::unordered_map<int64_t, NodeTiming>& timing) {
  std::vector<std::string> out;
  if (!timing.empty()) {
    out.push_back(kTime);
    out.push_back(kBytesMoved);
  }
  out.push_back(kOutputBytes);
  const AnnotationKeys keys = view.annotationKeys ? *view.annotationKeys : findAnnotationKeys(view);
  if (keys.planned) out.push_back(kArenaOffset);
  if (keys.units) out.push_back(kUnit);
  for (const std::string& k : keys.numeric) out.push_back(kAnnotation + k);
  return out;
}

void AnnotationKeyFinder::add(std::string_view k, std::string_view v) {
  if (k == "mem.out") {
    planned_ = planned_ || number(std::string(v)).has_value();
  } else if (k == "unit") {
    units_ = true;
  } else if (v.find_first_not_of("0123456789.-e+") == std::string_view::npos && numeric_.find(k) == numeric_.end() &&
             number(std::string(v))) {
    numeric_.emplace(k);
  }
}

AnnotationKeys AnnotationKeyFinder::keys() const {
  AnnotationKeys keys;
  keys.planned = planned_;
  keys.units = units_;
  keys.numeric.assign(numeric_.begin(), numeric_.end());
  return keys;
}

AnnotationKeys findAnnotationKeys(const PassView& view) {
  AnnotationKeyFinder finder;
  std::deque<std::string> decoded;
  for (const NodeRow& row : view.after.nodes) {
    for (const auto& [k, v] : readableAnnotations(row.annotationsJson, decoded)) finder.add(k, v);
    decoded.clear();
  }
  return finder.keys();
}

std::string overlayMetricName(const std::string& typed) {
  if (typed.rfind(kAnnotation, 0) == 0) return typed.size() > std::string(kAnnotation).size() ? typed : "";
  std::string t;
  for (char c : typed) t += c == '-' || c == '_' ? ' ' : char(std::tolower(static_cast<unsigned char>(c)));
  for (const char* m : {kTime, kBytesMoved, kOutputBytes, kArenaOffset, kUnit})
    if (t == m) return m;
  return "";
}

std::string overlayMetricHelp() {
  return std::string(kTime) + ", " + kBytesMoved + ", " + kOutputBytes + ", " + kArenaOffset + ", " + kUnit +
         " or annotation:KEY";
}

Overlay computeOverlay(const PassView& view, const std::unordered_map<int64_t, NodeTiming>& timing,
                       const std::string& metric) {
  const std::vector<std::string> offered = overlayMetrics(view, timing);
  if (std::find(offered.begin(), offered.end(), metric) == offered.end())
    throw std::invalid_argument("no overlay '" + metric + "' for this graph");
  Overlay o;
  o.metric = metric;
  if (metric == kTime || metric == kBytesMoved) {
    o.unit = metric == kTime ? "µs" : "bytes";
    for (const PassViewNode& n : view.nodes)
      if (auto it = timing.find(n.id); it != timing.end()) o.values[n.id] = metric == kTime ? it->second.us : it->second.bytes;
  } else if (metric == kOutputBytes) {
    o.unit = "bytes";
    for (const ValueRow& v : view.after.values)
      if (v.producerNode && v.bytes) o.values[*v.producerNode] += double(*v.bytes);
  } else {
    const std::string key = metric == kArenaOffset ? "mem.out" : metric == kUnit ? "unit" : metric.substr(std::string(kAnnotation).size());
    if (metric == kArenaOffset) o.unit = "bytes";
    o.categorical = metric == kUnit;
    std::set<std::string> seen;
    for (const NodeRow& row : view.after.nodes) {
        const auto a = annotationsOf(row);
      auto it = a.find(key);
      if (it == a.end()) continue;
      if (o.categorical) {
        o.categories[row.id] = it->second;
        if (seen.insert(it->second).second) o.categoryOrder.push_back(it->second);
      } else if (auto v = number(it->second)) {
        o.values[row.id] = *v;
      }
    }
  }
  if (!o.values.empty()) {
    o.lo = o.hi = o.values.begin()->second;
    for (const auto& [id, v] : o.values) o.lo = std::min(o.lo, v), o.hi = std::max(o.hi, v);
    if (o.lo > 0 && o.hi / o.lo > 100) o.logScale = true;
  }
  return o;
}

std::string HighlightRule::text() const {
  char buf[64];
  switch (kind) {
    case Kind::OpType: return "op " + pattern;
    case Kind::NameRegex: return "name /" + pattern + "/";
    case Kind::AttributeRange:
      std::snprintf(buf, sizeof buf, " in [%g, %g]", lo, hi);
      return "attr " + attribute + buf;
  }
  return pattern;
}

std::string ruleProblem(const HighlightRule& rule) {
  switch (rule.kind) {
    case HighlightRule::Kind::OpType:
      return rule.pattern.empty() ? "an op type rule needs the op type" : "";
    case HighlightRule::Kind::NameRegex:
      if (rule.pattern.empty()) return "a name rule needs a pattern";
      try {
        std::regex(rule.pattern, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        return "'" + rule.pattern + "' is not a regular expression (" + e.what() + ")";
      }
      return "";
    case HighlightRule::Kind::AttributeRange:
      if (rule.attribute.empty()) return "an attribute rule needs the attribute's name";
      return rule.lo <= rule.hi ? "" : "the range's low end is above its high end";
  }
  return "";
}

struct HighlightMatcher::Compiled {
  std::regex re;
};

HighlightMatcher::HighlightMatcher(std::vector<HighlightRule> rules) {
  for (HighlightRule& r : rules) {
    if (!ruleProblem(r).empty()) continue;
    regexes_.push_back(r.kind == HighlightRule::Kind::NameRegex
                           ? std::make_unique<Compiled>(Compiled{std::regex(r.pattern, std::regex::ECMAScript)})
                           : nullptr);
    rules_.push_back(std::move(r));
  }
}
HighlightMatcher::~HighlightMatcher() = default;
HighlightMatcher::HighlightMatcher(HighlightMatcher&&) noexcept = default;
HighlightMatcher& HighlightMatcher::operator=(HighlightMatcher&&) noexcept = default;

std::optional<Rgb> HighlightMatcher::match(const PassViewNode& node, const NodeRow* row) const {
  if (node.kind != PassViewNode::Kind::Op) return std::nullopt;
  for (size_t i = 0; i < rules_.size(); ++i) {
    const HighlightRule& r = rules_[i];
    switch (r.kind) {
      case HighlightRule::Kind::OpType: {
        const std::string qualified = node.domain.empty() || node.domain == "ai.onnx" ? node.opType : node.domain + ":" + node.opType;
        if (r.pattern == node.opType || r.pattern == qualified) return r.colour;
        break;
      }
      case HighlightRule::Kind::NameRegex:
        // Bounded input: a node name, not a file. std::regex backtracks, so names past 4 KiB are not searched.
        if (node.name.size() <= 4096 && std::regex_search(node.name, regexes_[i]->re))
          return r.colour;
        break;
      case HighlightRule::Kind::AttributeRange: {
        if (!row) break;
        try {
          const Json attrs = Json::parse(row->attrsJson, 8);
          const Json* a = attrs.isObject() ? attrs.find(r.attribute) : nullptr;
          if (!a) break;
          auto in = [&](const Json& v) { return v.isNumber() && v.asDouble() >= r.lo && v.asDouble() <= r.hi; };
          if (in(*a)) return r.colour;
          if (a->isArray())
            for (const Json& v : a->asArray())
              if (in(v)) return r.colour;
        } catch (const std::exception&) {
        }
        break;
      }
    }
  }
  return std::nullopt;
}

Json rulesToJson(const std::vector<HighlightRule>& rules) {
  Json a = Json::array();
  for (const HighlightRule& r : rules) {
    Json j = Json::object();
    j.set("kind", r.kind == HighlightRule::Kind::OpType ? "op" : r.kind == HighlightRule::Kind::NameRegex ? "name" : "attr");
    j.set("pattern", r.pattern);
    j.set("attribute", r.attribute);
    j.set("lo", r.lo);
    j.set("hi", r.hi);
    j.set("colour", r.colour.hex());
    a.push(std::move(j));
  }
  return a;
}

std::vector<HighlightRule> rulesFromJson(const Json& j) {
  std::vector<HighlightRule> out;
  if (!j.isArray()) return out;
  for (const Json& e : j.asArray()) {
    if (!e.isObject()) continue;
    HighlightRule r;
    const Json* kind = e.find("kind");
    if (!kind || !kind->isString()) continue;
    if (kind->asString() == "op") r.kind = HighlightRule::Kind::OpType;
    else if (kind->asString() == "name") r.kind = HighlightRule::Kind::NameRegex;
    else if (kind->asString() == "attr") r.kind = HighlightRule::Kind::AttributeRange;
    else continue;
    if (const Json* p = e.find("pattern"); p && p->isString()) r.pattern = p->asString();
    if (const Json* p = e.find("attribute"); p && p->isString()) r.attribute = p->asString();
    if (const Json* p = e.find("lo"); p && p->isNumber()) r.lo = p->asDouble();
    if (const Json* p = e.find("hi"); p && p->isNumber()) r.hi = p->asDouble();
    if (const Json* p = e.find("colour"); p && p->isString())
      if (auto c = Rgb::parse(p->asString())) r.colour = *c;
    if (ruleProblem(r).empty() && out.size() < 64) out.push_back(std::move(r));
  }
  return out;
}

}  // namespace kiln::layout
