#include "report/ge_files_report.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "io/atc/fusion_result.h"
#include "io/gedump/dump_files.h"
#include "util/units.h"

namespace kiln {
namespace {

std::string layoutText(const std::string& layout) {
  if (layout == "concatenated") return "concatenated (objects written back to back, as older CANN releases do)";
  if (layout == "array") return "array (one object per graph, with session_and_graph_id)";
  if (layout == "keyed") return "keyed (one object keyed session_and_graph_id_<s>_<g>, CANN 8 and later)";
  if (layout == "single") return "single (one graph's object)";
  return layout;
}

std::vector<std::string> graphsOf(const atc::FusionResult& r) {
  std::vector<std::string> graphs;
  for (const auto& p : r.passes)
    if (graphs.empty() || std::find(graphs.begin(), graphs.end(), p.graph) == graphs.end()) graphs.push_back(p.graph);
  return graphs;
}

Json stringArray(const std::vector<std::string>& items) {
  Json a = Json::array();
  for (const std::string& s : items) a.push(s);
  return a;
}

}  // namespace

Json fusionResultJson(const atc::FusionResult& r, const std::string& file) {
  Json j = Json::object();
  j.set("file", file);
  j.set("layout", r.layout);
  j.set("graphs", stringArray(graphsOf(r)));
  Json passes = Json::array();
  for (const auto& p : r.passes) {
    Json e = Json::object();
    e.set("graph", p.graph);
    e.set("kind", p.kind);
    e.set("pass", p.pass);
    e.set("match", p.match);
    e.set("effect", p.effect);
    passes.push(std::move(e));
  }
  j.set("fusion_passes", std::move(passes));
  j.set("warnings", stringArray(r.warnings));
  return j;
}

std::string fusionResultText(const atc::FusionResult& r, const std::string& file) {
  std::ostringstream os;
  int64_t effective = 0, graphPasses = 0, ubPasses = 0;
  size_t width = 4;
  for (const auto& p : r.passes) {
    effective += p.effect > 0;
    (p.kind == "graph" ? graphPasses : ubPasses) += 1;
    width = std::max(width, displayWidth(p.pass));
  }
  const std::vector<std::string> graphs = graphsOf(r);
  os << "File      " << file << "\n"
     << "Content   ATC's fusion_result.json: which of GE's fusion passes matched and took effect\n"
     << "Layout    " << layoutText(r.layout) << "\n"
     << "Graphs    " << graphs.size() << "\n"
     << "Passes    " << graphPasses << " graph fusion, " << ubPasses << " UB fusion; " << effective
     << " took effect at least once\n";
  for (const std::string& g : graphs) {
    os << "\n" << (g.empty() ? std::string("graph (no id in the file)") : "graph " + g) << "\n";
    os << "  " << padRight("kind", 6) << padRight("pass", width + 2) << padLeft("matched", 9) << padLeft("took effect", 13)
       << "\n";
    for (const auto& p : r.passes)
      if (p.graph == g)
        os << "  " << padRight(p.kind, 6) << padRight(p.pass, width + 2) << padLeft(withThousands(p.match), 9)
           << padLeft(withThousands(p.effect), 13) << "\n";
  }
  if (!r.warnings.empty()) {
    os << "\nWarnings: " << r.warnings.size() << "\n";
    for (const std::string& w : r.warnings) os << "  - " << w << "\n";
  }
  return os.str();
}

Json dumpListingJson(const gedump::DumpListing& l, const std::string& path) {
  Json j = Json::object();
  j.set("folder", path);
  Json groups = Json::array();
  for (const auto& g : l.groups) {
    Json e = Json::object();
    e.set("graph", g.label);
    e.set("folder", g.folder);
    Json stages = Json::array();
    for (const auto& f : g.files) {
      Json s = Json::object();
      s.set("index", f.index);
      s.set("stage", f.stage);
      s.set("file", f.path);
      s.set("format", f.kind == gedump::DumpKind::GeProto ? "ge_proto" : "ge_onnx");
      stages.push(std::move(s));
    }
    e.set("stages", std::move(stages));
    groups.push(std::move(e));
  }
  j.set("compilations", std::move(groups));
  j.set("skipped", stringArray(l.skipped));
  j.set("other_files", int64_t(l.others.size()));
  return j;
}

std::string dumpListingText(const gedump::DumpListing& l, const std::string& path) {
  std::ostringstream os;
  size_t stages = 0;
  for (const auto& g : l.groups) stages += g.files.size();
  os << "Folder    " << path << "\n"
     << "Content   GE graph dumps: " << l.groups.size() << (l.groups.size() == 1 ? " compilation, " : " compilations, ")
     << stages << (stages == 1 ? " stage" : " stages") << " (kiln history import DB " << path
     << " makes them runs)\n";
  for (const auto& g : l.groups) {
    os << "\n" << g.label << "  (" << g.folder << ")\n";
    for (const auto& f : g.files)
      os << "  " << padLeft(std::to_string(f.index), 8) << "  " << padRight(f.stage, 40) << "  "
         << std::filesystem::path(f.path).filename().string() << "\n";
  }
  if (!l.skipped.empty()) {
    os << "\nSkipped: " << l.skipped.size() << "\n";
    for (const std::string& s : l.skipped) os << "  - " << s << "\n";
  }
  if (!l.others.empty()) os << "\nOther files: " << l.others.size() << " (not dumps)\n";
  return os.str();
}

}  // namespace kiln
