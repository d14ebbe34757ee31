#include "report/graph_svg.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/graph.h"
#include "layout/dot_layout.h"
#include "layout/scope_tree.h"
#include "layout/view_graph.h"
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

}  // namespace

std::string compiledGraphSvg(const Graph& g, size_t openAllUpTo) {
  std::vector<layout::ScopeTree::NodeName> names;
  std::unordered_map<int64_t, const Node*> byId;
  for (const Node* n : g.nodes()) {
    std::vector<int64_t> producers;
    for (const Value* v : n->inputs())
      if (v && v->producer()) producers.push_back(v->producer()->id());
      else if (v && !v->constant()) producers.push_back(-1);  // a graph input: data, not a constant
    names.push_back({n->id(), n->name(), n->qualifiedType(), std::move(producers)});
    byId[n->id()] = n;
  }
  std::vector<layout::NodeEdge> edges;
  for (const Node* n : g.nodes())
    for (const Value* v : n->inputs())
      if (v && v->producer() && byId.count(v->producer()->id()))
        edges.push_back({v->producer()->id(), n->id(), v->id()});
  const layout::ScopeTree tree = layout::ScopeTree::build(names);
  std::set<int> open;
  if (g.numNodes() <= openAllUpTo)
    for (size_t i = 1; i < tree.groups().size(); ++i) open.insert(static_cast<int>(i));
  const layout::ViewGraph vg = layout::buildViewGraph(tree, edges, open);

  std::vector<layout::ItemSize> sizes;
  std::vector<std::string> labels, fills, tooltips;
  for (const layout::ViewItem& item : vg.items) {
    if (item.kind == layout::ViewItem::Kind::Node) {
      const Node& n = *byId.at(item.id);
      labels.push_back(labelFor(n));
      fills.push_back(fillFor(n));
      tooltips.push_back(tooltipFor(n));
    } else {
      const layout::ScopeGroup& grp = tree.group(static_cast<int>(item.id));
      labels.push_back(grp.label + " (" + std::to_string(grp.totalNodes) + ")");
      fills.push_back("#f3f3f3");
      tooltips.push_back(grp.path + ": " + std::to_string(grp.totalNodes) + " nodes");
    }
    sizes.push_back({std::max(60.0, 6.5 * double(labels.back().size()) + 16), 26});
  }
  const layout::Layout l = layout::layoutWithDot(vg, sizes);

  const double pad = 8;
  SvgCanvas svg(l.width + 2 * pad, l.height + 2 * pad);
  svg.raw("<defs><marker id=\"arrow\" viewBox=\"0 0 8 8\" refX=\"8\" refY=\"4\" markerWidth=\"6\" markerHeight=\"6\" "
          "orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#777\"/></marker></defs>");
  svg.raw("<g transform=\"translate(" + svgNum(pad) + "," + svgNum(pad) + ")\">");
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
    svg.text(r.x + r.width / 2, r.y + r.height / 2 + 4, labels[i], "middle", 11, " pointer-events=\"none\"");
  }
  svg.raw("</g>");
  return svg.str();
}

}  // namespace kiln
