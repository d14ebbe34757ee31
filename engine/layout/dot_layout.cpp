#include "layout/dot_layout.h"

#include <graphviz/gvc.h>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace kiln::layout {

namespace {

// Graphviz 2.42 takes `char*` for names it only reads (and copies): hand it a mutable copy that lives for the call.
class CStr {
 public:
  explicit CStr(std::string s) : s_(std::move(s)) {}
  operator char*() { return s_.data(); }

 private:
  std::string s_;
};

std::string inches(double points) { return std::to_string(points / 72.0); }

std::mutex& graphvizLock() {
  static std::mutex m;
  return m;
}

GVC_t* context() {
  // One context for the process: creating it loads the plugin configuration, which is slow.
  static GVC_t* gvc = gvContext();
  return gvc;
}

}  // namespace

Layout layoutWithDot(const ViewGraph& vg, const std::vector<ItemSize>& sizes) {
  if (sizes.size() != vg.items.size()) throw std::invalid_argument("layoutWithDot: one size per item expected");
  std::lock_guard lock(graphvizLock());
  const auto t0 = std::chrono::steady_clock::now();
  GVC_t* gvc = context();
  Agraph_t* g = agopen(CStr("kiln"), Agdirected, nullptr);
  if (!g) throw std::runtime_error("Graphviz could not create a graph");
  agattr(g, AGRAPH, CStr("rankdir"), CStr("TB"));
  agattr(g, AGRAPH, CStr("nodesep"), CStr("0.25"));
  agattr(g, AGRAPH, CStr("ranksep"), CStr("0.35"));
  agattr(g, AGRAPH, CStr("label"), CStr(""));
  // Our cluster titles are drawn by the view; a blank label of one line reserves their room at the top.
  agattr(g, AGRAPH, CStr("labeljust"), CStr("l"));
  agattr(g, AGNODE, CStr("shape"), CStr("box"));
  agattr(g, AGNODE, CStr("fixedsize"), CStr("true"));
  agattr(g, AGNODE, CStr("label"), CStr(""));
  Agsym_t* wSym = agattr(g, AGNODE, CStr("width"), CStr("1"));
  Agsym_t* hSym = agattr(g, AGNODE, CStr("height"), CStr("0.5"));

  std::unordered_map<int, Agraph_t*> graphOf{{0, g}};  // open group -> its (sub)graph
  std::vector<Agraph_t*> clusters;
  for (size_t i = 0; i < vg.clusters.size(); ++i) {
    Agraph_t* parent = graphOf.at(vg.clusterParent[i]);  // parents come first
    Agraph_t* sub = agsubg(parent, CStr("cluster_" + std::to_string(vg.clusters[i])), 1);
    agsafeset(sub, CStr("label"), CStr(" "), CStr(""));
    agsafeset(sub, CStr("margin"), CStr("12"), CStr(""));
    graphOf[vg.clusters[i]] = sub;
    clusters.push_back(sub);
  }
  std::vector<Agnode_t*> nodes(vg.items.size());
  for (size_t i = 0; i < vg.items.size(); ++i) {
    Agnode_t* n = agnode(graphOf.at(vg.items[i].cluster), CStr(vg.items[i].key()), 1);
    agxset(n, wSym, CStr(inches(sizes[i].width)));
    agxset(n, hSym, CStr(inches(sizes[i].height)));
    nodes[i] = n;
  }
  std::vector<Agedge_t*> edges(vg.edges.size());
  for (size_t i = 0; i < vg.edges.size(); ++i)
    edges[i] = agedge(g, nodes[vg.edges[i].from], nodes[vg.edges[i].to], nullptr, 1);

  if (gvLayout(gvc, g, "dot") != 0) {
    agclose(g);
    throw std::runtime_error("Graphviz dot layout failed (is its plugin configuration written? "
                             "run libgvc6-config-update -c)");
  }
  Layout out;
  const boxf bb = GD_bb(g);
  const double top = bb.UR.y;
  auto flip = [&](pointf p) { return Point{p.x - bb.LL.x, top - p.y}; };
  out.width = bb.UR.x - bb.LL.x;
  out.height = bb.UR.y - bb.LL.y;
  out.items.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Point c = flip(ND_coord(nodes[i]));
    const double w = ND_width(nodes[i]) * 72.0, h = ND_height(nodes[i]) * 72.0;
    out.items[i] = Rect{c.x - w / 2, c.y - h / 2, w, h};
  }
  out.edges.resize(edges.size());
  for (size_t i = 0; i < edges.size(); ++i) {
    // Parallel edges were merged before, so agedge returned a fresh edge each time; a lost one has no spline.
    const splines* spl = edges[i] ? ED_spl(edges[i]) : nullptr;
    if (!spl || spl->size < 1) continue;
    const bezier& bz = spl->list[0];
    for (int k = 0; k < bz.size; ++k) out.edges[i].push_back(flip(bz.list[k]));
    if (bz.eflag) out.edges[i].push_back(flip(bz.ep));  // the arrow tip lies beyond the last control point
  }
  for (Agraph_t* sub : clusters) {
    const boxf b = GD_bb(sub);
    const Point tl = flip(pointf{b.LL.x, b.UR.y});
    out.clusters.push_back(Rect{tl.x, tl.y, b.UR.x - b.LL.x, b.UR.y - b.LL.y});
  }
  gvFreeLayout(gvc, g);
  agclose(g);
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace kiln::layout
