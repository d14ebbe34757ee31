#pragma once
// Node overlays for the canvas (and the batch report's graph): nodes coloured by a number or a category instead of
// their compute unit — simulated time, bytes moved (the run's simulated timeline), output bytes, arena offset, the
// compute unit, or any numeric annotation a pass left — with the scale for a legend; and highlight rules a user
// keeps (op type, attribute value range, name regex → colour). Pure data: the view paints what this computes.
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "layout/pass_view.h"
#include "util/json.h"

namespace kiln::layout {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
  std::string hex() const;  // "#rrggbb"
  static std::optional<Rgb> parse(const std::string& hex);
};

// What the simulated timeline says of a node: its kernels' time and the bytes they move.
struct NodeTiming {
  double us = 0, bytes = 0;  // simulated: on the cores, and bytes moved
  double dispatchUs = 0;     // simulated: the stream's dispatch before its kernels
  double measuredUs = 0;     // measured on an NPU: every task of the node summed (0: none)
  int measuredTasks = 0;
};

struct Overlay {
  std::string metric;  // one of overlayMetrics()
  std::string unit;    // "µs", "bytes", "" (categorical or plain numbers)
  bool categorical = false;
  bool logScale = false;  // numbers spanning more than 100x are coloured by their logarithm
  std::unordered_map<int64_t, double> values;
  std::unordered_map<int64_t, std::string> categories;
  std::vector<std::string> categoryOrder;  // legend order
  double lo = 0, hi = 0;
  // A node's colour, or nothing for a node the metric says nothing about (it keeps its own look).
  std::optional<Rgb> colourOf(int64_t node) const;
  // Legend: the ramp's colour at t in [0, 1]; the value at t as text; a category's colour.
  static Rgb ramp(double t);
  std::string valueAt(double t) const;
  std::string format(double v) const;  // a value in the overlay's unit ("12.5 µs", "3.0 MiB")
  static Rgb categoryColour(size_t index);
};

// Which annotations the nodes after the pass carry (PassView::annotationKeys keeps it with the view).
AnnotationKeys findAnnotationKeys(const PassView& view);
// The same, fed one annotation at a time: buildPassView collects the keys while it reads the annotations anyway.
class AnnotationKeyFinder {
 public:
  void add(std::string_view key, std::string_view value);
  AnnotationKeys keys() const;

 private:
  bool planned_ = false, units_ = false;
  std::set<std::string, std::less<>> numeric_;
};
// The metrics this view has data for: "simulated time" and "bytes moved" when `timing` is given, "output bytes",
// "arena offset" once planned, "compute unit", and "annotation:KEY" for every annotation with numeric values.
std::vector<std::string> overlayMetrics(const PassView& view, const std::unordered_map<int64_t, NodeTiming>& timing);
// A metric as a user types it ("simulated-time", "Output_Bytes", "annotation:mem.size") in its canonical name, or ""
// when it names none; overlayMetricHelp() lists them.
std::string overlayMetricName(const std::string& typed);
std::string overlayMetricHelp();
// Throws std::invalid_argument for a metric overlayMetrics() does not offer.
Overlay computeOverlay(const PassView& view, const std::unordered_map<int64_t, NodeTiming>& timing,
                       const std::string& metric);

struct HighlightRule {
  enum class Kind { OpType, NameRegex, AttributeRange } kind = Kind::OpType;
  std::string pattern;          // OpType: the op type (qualified or not); NameRegex: an ECMAScript regex
  std::string attribute;        // AttributeRange: the attribute's name
  double lo = 0, hi = 0;        // AttributeRange: inclusive; every number of a list attribute is tried
  Rgb colour{255, 0, 255};
  std::string text() const;     // "op Softmax", "name /attn/", "attr group in [2, 1e9]"
};
// Checks a rule (a bad regex, an empty pattern, lo > hi): the message, or "" when it is usable.
std::string ruleProblem(const HighlightRule& rule);
// The rules ready to apply (regexes compiled once, unusable rules dropped).
class HighlightMatcher {
 public:
  explicit HighlightMatcher(std::vector<HighlightRule> rules);
  ~HighlightMatcher();
  HighlightMatcher(HighlightMatcher&&) noexcept;
  HighlightMatcher& operator=(HighlightMatcher&&) noexcept;
  bool empty() const { return rules_.empty(); }
  // The first rule that matches the node (its row gives the attributes), or nothing.
  std::optional<Rgb> match(const PassViewNode& node, const NodeRow* row) const;

 private:
  struct Compiled;
  std::vector<HighlightRule> rules_;
  std::vector<std::unique_ptr<Compiled>> regexes_;  // one per rule (null unless a name rule)
};
Json rulesToJson(const std::vector<HighlightRule>& rules);
// Tolerant: malformed entries (settings are the user's file) are skipped.
std::vector<HighlightRule> rulesFromJson(const Json& j);

}  // namespace kiln::layout
