#include "io/gedump/dump_files.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "util/load_error.h"
#include "util/text_encoding.h"

namespace kiln::gedump {
namespace {

namespace fs = std::filesystem;

constexpr uintmax_t kMaxScanBytes = uintmax_t{512} << 20;

struct Walk {
  size_t seen = 0;
  std::string root;
  std::vector<std::pair<std::string, DumpFile>> dumps;  // (folder, file)
  std::vector<std::string> others;
};

void collect(const fs::path& dir, int depth, Walk& w) {
  std::error_code ec;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (++w.seen > kMaxDumpFiles)
      throw LoadError(w.root, "more than " + std::to_string(kMaxDumpFiles) + " entries: not a dump folder Kiln reads");
    entries.push_back(it->path());
  }
  if (ec) throw LoadError(dir.string(), "cannot list: " + ec.message());
  std::sort(entries.begin(), entries.end());
  for (const fs::path& p : entries) {
    std::error_code e2;
    const auto st = fs::symlink_status(p, e2);
    if (fs::is_directory(st)) {  // symlinked folders are not followed: no cycles
      if (depth < kDumpFolderDepth) collect(p, depth + 1, w);
      continue;
    }
    if (!fs::is_regular_file(fs::status(p, e2))) continue;
    if (auto f = parseDumpName(p.string())) w.dumps.emplace_back(dir.string(), std::move(*f));
    else w.others.push_back(p.string());
  }
}

// Scans protobuf text for the `name` field of the first top-level `graph { }`.
std::string graphNameIn(std::string_view s) {
  int depth = 0;
  bool inGraph = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"' || c == '\'') {
      for (++i; i < s.size() && s[i] != c && s[i] != '\n'; ++i)
        if (s[i] == '\\') ++i;
      continue;
    }
    if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (c == '{') {
      if (depth == 0) {
        size_t b = i;
        while (b > 0 && (s[b - 1] == ' ' || s[b - 1] == ':' || s[b - 1] == '\t')) --b;
        inGraph = b >= 5 && s.substr(b - 5, 5) == "graph" && (b == 5 || s[b - 6] == '\n' || s[b - 6] == ' ');
      }
      ++depth;
      continue;
    }
    if (c == '}') {
      if (--depth <= 0) {
        if (inGraph) return {};
        depth = 0;
      }
      continue;
    }
    if (depth == 1 && inGraph && c == 'n' && s.substr(i, 4) == "name" && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\n')) {
      size_t j = i + 4;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
      if (j >= s.size() || s[j] != ':') continue;
      ++j;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
      if (j >= s.size() || s[j] != '"') continue;
      const size_t e = s.find('"', j + 1);
      if (e == std::string_view::npos) return {};
      return displayableUtf8(s.substr(j + 1, e - j - 1));
    }
  }
  return {};
}


}  // namespace

std::optional<DumpFile> parseDumpName(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  DumpFile f;
  f.path = path;
  std::string_view rest;
  if (name.starts_with("ge_proto_") && name.ends_with(".txt")) {
    f.kind = DumpKind::GeProto;
    rest = std::string_view(name).substr(9, name.size() - 9 - 4);
  } else if (name.starts_with("ge_onnx_") && name.ends_with(".pbtxt")) {
    f.kind = DumpKind::GeOnnx;
    rest = std::string_view(name).substr(8, name.size() - 8 - 6);
  } else {
    return std::nullopt;
  }
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  if (digits == 0 || digits > 18 || digits + 1 >= rest.size() || rest[digits] != '_') return std::nullopt;
  std::from_chars(rest.data(), rest.data() + digits, f.index);
  std::string_view suffix = rest.substr(digits + 1);
  if (suffix.starts_with("graph_")) {
    const std::string_view after = suffix.substr(6);
    size_t us = after.find('_');
    const std::string_view id = after.substr(0, us);
    if (!id.empty() && us != std::string_view::npos && us + 1 < after.size()) {
      f.graphId = std::string(id);
      suffix = after.substr(us + 1);
    } else if (!id.empty() && us == std::string_view::npos) {
      f.graphId = std::string(id);  // "graph_3" alone: the stage is unnamed
      suffix = {};
    }
  }
  f.stage = suffix.empty() ? "dump " + std::to_string(f.index) : displayableUtf8(suffix);
  return f;
}

std::string rootGraphName(const std::string& path, DumpKind) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec || size > kMaxScanBytes) return {};
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), std::streamsize(size))) return {};
  return graphNameIn(text);
}

DumpListing listDumps(const std::vector<std::string>& paths) {
  Walk w;
  for (const std::string& p : paths) {
    std::error_code ec;
    w.root = p;
    const auto st = fs::status(p, ec);
    if (ec || !fs::exists(st)) throw LoadError(p, "cannot open: no such file or folder");
    if (fs::is_directory(st)) {
      collect(p, 0, w);
    } else if (auto f = parseDumpName(p)) {
      w.dumps.emplace_back(fs::path(p).parent_path().string(), std::move(*f));
    } else {
      w.others.push_back(p);
    }
  }
  DumpListing out;
  out.others = w.others;
  if (w.dumps.empty()) {
    const std::string where = paths.size() == 1 ? paths[0] : paths.empty() ? std::string("(no path)") : paths[0] + " ...";
    throw LoadError(where, std::string(paths.size() == 1 && fs::is_directory(paths[0]) ? "is a directory with" : "holds") +
                               " no GE graph dump (ge_proto_<index>_<stage>.txt or ge_onnx_<index>_<stage>.pbtxt)");
  }
  // Graph ids the ge_onnx files give their stages, for ge_proto files of the same folder, index and stage.
  std::map<std::tuple<std::string, int64_t, std::string>, std::string> idOfStage;
  for (const auto& [folder, f] : w.dumps)
    if (!f.graphId.empty()) idOfStage.emplace(std::make_tuple(folder, f.index, f.stage), f.graphId);
  // (folder, graph key) -> files; ge_proto and ge_onnx of one stage meet in one slot.
  std::map<std::pair<std::string, std::string>, std::vector<DumpFile>> byGraph;
  for (auto& [folder, f] : w.dumps) {
    std::string key;
    if (f.graphId.empty())
      if (auto it = idOfStage.find({folder, f.index, f.stage}); it != idOfStage.end()) f.graphId = it->second;
    if (!f.graphId.empty()) {
      key = "graph " + f.graphId;
    } else {
      const std::string root = rootGraphName(f.path, f.kind);
      key = root.empty() ? "graph (unnamed)" : "graph '" + root + "'";
    }
    byGraph[{folder, key}].push_back(f);
  }
  std::set<std::string> folders;
  for (const auto& [k, files] : byGraph) folders.insert(k.first);
  for (auto& [k, files] : byGraph) {
    std::stable_sort(files.begin(), files.end(), [](const DumpFile& a, const DumpFile& b) {
      if (a.index != b.index) return a.index < b.index;
      if (a.stage != b.stage) return a.stage < b.stage;
      return a.kind < b.kind;  // ge_proto first
    });
    DumpGroup g;
    g.folder = k.first;
    g.label = k.second + (folders.size() > 1 ? " in " + fs::path(k.first).filename().string() : "");
    for (const DumpFile& f : files) {
      if (!g.files.empty() && g.files.back().index == f.index && g.files.back().stage == f.stage) {
        out.skipped.push_back(f.path + ": the same stage as " + fs::path(g.files.back().path).filename().string() +
                              ", which is imported instead");
        continue;
      }
      if (!g.files.empty() && g.files.back().index == f.index)
        out.skipped.push_back(f.path + ": has the same index as " + fs::path(g.files.back().path).filename().string() +
                              " (a stage of another process?); both are imported, in name order");
      g.files.push_back(f);
    }
    out.groups.push_back(std::move(g));
  }
  std::stable_sort(out.groups.begin(), out.groups.end(), [](const DumpGroup& a, const DumpGroup& b) {
    if (a.folder != b.folder) return a.folder < b.folder;
    return a.files.front().index < b.files.front().index;
  });
  return out;
}

}  // namespace kiln::gedump
