#include "report/graph_svg.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/graph.h"
#include "layout/dot_layout.h"
#include "layout/node_overlay.h"
#include "layout/scope_tree.h"
#include "layout/view_graph.h"
#include "report/model_structure.h"
#include "report/svg_canvas.h"

namespace kiln {

namespace {

std::string fillFor(const Node& n) {
  if (!n.annotation("fusion.rule").empty()) return "#f6b26b";  // fused: what the report is mostly about
  const std::string op = n.opType();
  if (op.find("TransData") != std::string::npos) return "#b4a7d6";
  const std::string unit = n.annotation("unit");
  if (unit == "cube") return "#9fc5e8";
  if (unit == "vector") return "#b6d7a8";
  if (unit == "aicpu") return "#ffe599";
  return "#e0e0e0";
}

std::string labelFor(const Node& n) {
  std::string op = n.opType();
  if (op.size() > 28) op = op.substr(0, 27) + "…";
  return op;
}

std::string tooltipFor(const Node& n) {
  std::string t = (n.name().empty() ? "#" + std::to_string(n.id()) : n.name()) + "\n" + n.qualifiedType();
  if (const std::string rule = n.annotation("fusion.rule"); !rule.empty()) {
    const std::string replaced = n.annotation("fusion.replaced");
    const auto count = replaced.empty() ? 0 : std::count(replaced.begin(), replaced.end(), ',') + 1;
    t += "\nfused by " + rule + " (" + std::to_string(count) + " original nodes)";
  }
  for (const char* key : {"unit", "stream", "format", "precision"})
    if (const std::string v = n.annotation(key); !v.empty()) t += std::string("\n") + key + ": " + v;
  return t;
}

// White text on the dark end of the overlay's ramp.
bool darkFill(const std::string& hex) {
  const auto c = layout::Rgb::parse(hex);
  return c && 0.299 * c->r + 0.587 * c->g + 0.114 * c->b < 110;
}

// "colour: simulated time" and the scale: five swatches with their values, or the categories.
void drawLegend(SvgCanvas& svg, const layout::Overlay& o, double x, double y) {
  svg.text(x, y, "colour: " + o.metric + (o.logScale ? " (log scale)" : ""), "start", 11, " font-weight=\"bold\"");
  double cx = x + 8 + 7.0 * double(o.metric.size() + 20);
  if (o.categorical) {
    for (size_t i = 0; i < o.categoryOrder.size() && i < 10; ++i) {
      svg.rect(cx, y - 10, 12, 12, layout::Overlay::categoryColour(i).hex());
      svg.text(cx + 16, y, o.categoryOrder[i]);
      cx += 24 + 7.0 * double(o.categoryOrder[i].size());
    }
    return;
  }
  if (o.values.empty()) {
    svg.text(cx, y, "no node has a value");
    return;
  }
  for (int i = 0; i <= 4; ++i) {
    const double t = i / 4.0;
    svg.rect(cx, y - 10, 12, 12, layout::Overlay::ramp(t).hex());
    const std::string v = o.valueAt(t);
    svg.text(cx + 16, y, v);
    cx += 24 + 7.0 * double(v.size());
  }
  svg.text(cx + 8, y, "(groups: sum of their nodes, on their own scale)", "start", 10, " fill=\"#666\"");
}

}  // namespace

std::string compiledGraphSvg(const Graph& g, size_t openAllUpTo, const layout::Overlay* overlay) {
  // The nodes drawn: the main graph's and those of control-flow bodies (structureNames says which).
  const std::vector<layout::ScopeTree::NodeName> names = structureNames(g);
  std::unordered_set<int64_t> drawn;
  for (const auto& n : names) drawn.insert(n.id);
  std::unordered_map<int64_t, const Node*> byId;
  g.forEachGraph([&](const Graph& sub) {
    for (const Node* n : sub.nodes())
      if (drawn.count(n->id())) byId[n->id()] = n;
  });
  std::vector<layout::NodeEdge> edges;
  for (const auto& [id, n] : byId)
    for (const Value* v : n->inputs())
      if (v && v->producer() && byId.count(v->producer()->id())) edges.push_back({v->producer()->id(), id, v->id()});
  std::sort(edges.begin(), edges.end(), [](const auto& a, const auto& b) {
    return std::tie(a.to, a.from, a.valueId) < std::tie(b.to, b.from, b.valueId);
  });
  const layout::ScopeTree tree = layout::ScopeTree::build(names);
  std::set<int> open;
  if (byId.size() <= openAllUpTo)
    for (size_t i = 1; i < tree.groups().size(); ++i) open.insert(static_cast<int>(i));
  const layout::ViewGraph vg = layout::buildViewGraph(tree, edges, open);
  // With an overlay, a closed group is coloured by the sum of its nodes' values (time and bytes add up), on its own
  // scale across the groups drawn; categorical overlays colour a group by its most common category.
  std::unordered_map<int, double> groupSum;
  std::unordered_map<int, std::string> groupCategory;
  double groupMax = 0;
  if (overlay)
    for (const layout::ViewItem& item : vg.items) {
      if (item.kind != layout::ViewItem::Kind::Group) continue;
      const int gi = int(item.id);
      std::map<std::string, int> votes;
      double sum = 0;
      bool any = false;
      for (const auto& [id, n] : byId) {
        if (!tree.within(tree.groupOf(id), gi)) continue;
        if (auto v = overlay->values.find(id); v != overlay->values.end()) sum += v->second, any = true;
        if (auto c = overlay->categories.find(id); c != overlay->categories.end()) ++votes[c->second];
      }
      if (any) groupSum[gi] = sum, groupMax = std::max(groupMax, sum);
      if (!votes.empty())
        groupCategory[gi] = std::max_element(votes.begin(), votes.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
    }

  std::vector<layout::ItemSize> sizes;
  std::vector<std::string> labels, fills, tooltips;
  for (const layout::ViewItem& item : vg.items) {
    if (item.kind == layout::ViewItem::Kind::Node) {
      const Node& n = *byId.at(item.id);
      labels.push_back(labelFor(n));
      const auto colour = overlay ? overlay->colourOf(n.id()) : std::nullopt;
      fills.push_back(colour ? colour->hex() : overlay ? "#ffffff" : fillFor(n));
      tooltips.push_back(tooltipFor(n));
      if (auto v = overlay ? overlay->values.find(n.id()) : decltype(overlay->values.end()){}; overlay && v != overlay->values.end())
        tooltips.back() += "\n" + overlay->metric + ": " + overlay->format(v->second);
    } else {
      const int gi = static_cast<int>(item.id);
      const layout::ScopeGroup& grp = tree.group(gi);
      labels.push_back(grp.label + " (" + std::to_string(grp.totalNodes) + ")");
      tooltips.push_back(grp.path + ": " + std::to_string(grp.totalNodes) + " nodes");
      std::string fill = "#f3f3f3";
      if (auto c = groupCategory.find(gi); overlay && overlay->categorical && c != groupCategory.end()) {
        const auto at = std::find(overlay->categoryOrder.begin(), overlay->categoryOrder.end(), c->second);
        fill = layout::Overlay::categoryColour(size_t(at - overlay->categoryOrder.begin())).hex();
      } else if (auto sum = groupSum.find(gi); overlay && sum != groupSum.end()) {
        fill = layout::Overlay::ramp(groupMax > 0 ? sum->second / groupMax : 0.5).hex();
        tooltips.back() += "\n" + overlay->metric + " (sum of its nodes): " + overlay->format(sum->second);
      }
      fills.push_back(fill);
    }
    sizes.push_back({std::max(60.0, 6.5 * double(labels.back().size()) + 16), 26});
  }
  const layout::Layout l = layout::layoutWithDot(vg, sizes);

  const double pad = 8, legend = overlay ? 26 : 0;
  SvgCanvas svg(std::max(l.width, overlay ? 520.0 : 0.0) + 2 * pad, l.height + 2 * pad + legend);
  svg.raw("<defs><marker id=\"arrow\" viewBox=\"0 0 8 8\" refX=\"8\" refY=\"4\" markerWidth=\"6\" markerHeight=\"6\" "
          "orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#777\"/></marker></defs>");
  if (overlay) drawLegend(svg, *overlay, pad, pad + 14);
  svg.raw("<g transform=\"translate(" + svgNum(pad) + "," + svgNum(pad + legend) + ")\">");
  for (size_t c = 0; c < l.clusters.size() && c < vg.clusters.size(); ++c) {
    const layout::Rect& r = l.clusters[c];
    svg.rect(r.x, r.y, r.width, r.height, "#fafafa", tree.group(vg.clusters[c]).path, " stroke=\"#ccc\" rx=\"4\"");
    svg.text(r.x + 4, r.y + 12, tree.group(vg.clusters[c]).label, "start", 10, " fill=\"#888\"");
  }
  for (const std::vector<layout::Point>& pts : l.edges) {
    if (pts.size() < 4) continue;
    std::string d = "M" + svgNum(pts[0].x) + "," + svgNum(pts[0].y) + " C";
    for (size_t i = 1; i < pts.size(); ++i) d += " " + svgNum(pts[i].x) + "," + svgNum(pts[i].y);
    svg.path(d, "#777", "none", " marker-end=\"url(#arrow)\"");
  }
  for (size_t i = 0; i < vg.items.size(); ++i) {
    const layout::Rect& r = l.items[i];
    svg.rect(r.x, r.y, r.width, r.height, fills[i], tooltips[i], " stroke=\"#555\" rx=\"3\"");
    svg.text(r.x + r.width / 2, r.y + r.height / 2 + 4, labels[i], "middle", 11,
             std::string(" pointer-events=\"none\"") + (darkFill(fills[i]) ? " fill=\"#fff\"" : ""));
  }
  svg.raw("</g>");
  return svg.str();
}

}  // namespace kiln
