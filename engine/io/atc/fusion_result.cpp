#include "io/atc/fusion_result.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>

#include "util/json.h"
#include "util/load_error.h"
#include "util/text_encoding.h"

namespace kiln::atc {
namespace {

bool count(const Json& v, int64_t& out) {
  if (v.isInt()) {
    out = v.asInt();
    return out >= 0;
  }
  if (!v.isString()) return false;
  const std::string& s = v.asString();
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= 0;
}

std::string idText(const Json* v) {
  if (!v) return {};
  if (v->isString()) return displayableUtf8(v->asString());
  if (v->isInt()) return std::to_string(v->asInt());
  return {};
}

class Reader {
 public:
  explicit Reader(FusionResult& out) : out_(out) {}

  // One graph's record: the two maps, and its ids where the record holds them.
  void record(const Json& obj, std::string graph, const std::string& where) {
    if (!obj.isObject()) throw std::runtime_error(where + " is " + obj.typeName() + ", not an object");
    if (graph.empty()) {
      if (const std::string sg = idText(obj.find("session_and_graph_id")); !sg.empty()) {
        graph = sg;
      } else {
        const std::string g = idText(obj.find("graphId")), s = idText(obj.find("sessionId"));
        graph = !g.empty() && !s.empty() ? s + "_" + g : g;
      }
    }
    for (const auto& [key, value] : obj.asObject()) {
      if (key == "graph_fusion" || key == "ub_fusion") {
        passes(value, graph, key == "graph_fusion" ? "graph" : "ub", where + "." + key);
      } else if (key != "graphId" && key != "sessionId" && key != "session_and_graph_id" && unknown_.insert(key).second) {
        out_.warnings.push_back("key '" + displayableUtf8(key) + "' (" + where + ") is not one Kiln reads; left out");
      }
    }
  }

 private:
  void passes(const Json& map, const std::string& graph, const std::string& kind, const std::string& where) {
    if (!map.isObject()) {
      out_.warnings.push_back(where + " is " + std::string(map.typeName()) + ", not a map of passes; left out");
      return;
    }
    for (const auto& [name, v] : map.asObject()) {
      FusionPassCount p{graph, kind, displayableUtf8(name), 0, 0};
      const Json* m = v.isObject() ? v.find("match_times") : nullptr;
      const Json* e = v.isObject() ? v.find("effect_times") : nullptr;
      if (!m || !e || !count(*m, p.match) || !count(*e, p.effect)) {
        out_.warnings.push_back(where + "." + p.pass + ": match_times/effect_times are not counts; skipped");
        continue;
      }
      out_.passes.push_back(std::move(p));
    }
  }

  FusionResult& out_;
  std::set<std::string> unknown_;
};

}  // namespace

bool looksLikeFusionResult(std::string_view head) {
  for (const char* key : {"\"graph_fusion\"", "\"ub_fusion\"", "\"session_and_graph_id"})
    if (head.find(key) != std::string_view::npos) return true;
  return false;
}

FusionResult parseFusionResult(std::string_view text, const std::string& displayName) {
  FusionResult out;
  std::vector<Json> docs;
  try {
    JsonReader r(text, 64);
    r.skipWs();
    while (!r.atEnd()) {
      docs.push_back(r.readValue());
      r.skipWs();
    }
  } catch (const JsonError& e) {
    throw LoadError(displayName, std::string("not ATC's fusion_result.json: ") + e.what());
  }
  if (docs.empty()) throw LoadError(displayName, "is empty: no fusion results");
  Reader reader(out);
  try {
    if (docs.size() > 1) {
      out.layout = "concatenated";
      for (size_t i = 0; i < docs.size(); ++i) reader.record(docs[i], "", "object " + std::to_string(i + 1));
    } else if (docs[0].isArray()) {
      out.layout = "array";
      const auto& a = docs[0].asArray();
      for (size_t i = 0; i < a.size(); ++i) reader.record(a[i], "", "element " + std::to_string(i + 1));
    } else if (docs[0].isObject()) {
      bool keyed = false;
      for (const auto& [k, v] : docs[0].asObject()) keyed = keyed || k.starts_with("session_and_graph_id_");
      if (keyed) {
        out.layout = "keyed";
        for (const auto& [k, v] : docs[0].asObject()) {
          if (!k.starts_with("session_and_graph_id_")) {
            out.warnings.push_back("key '" + displayableUtf8(k) + "' is not a session_and_graph_id_<s>_<g>; left out");
            continue;
          }
          reader.record(v, displayableUtf8(k.substr(21)), k);
        }
      } else {
        out.layout = "single";
        reader.record(docs[0], "", "the object");
      }
    } else {
      throw std::runtime_error(std::string("the document is ") + docs[0].typeName() + ", not an object or array");
    }
  } catch (const std::runtime_error& e) {
    throw LoadError(displayName, std::string("not ATC's fusion_result.json: ") + e.what());
  }
  return out;
}

FusionResult readFusionResult(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw LoadError(path, "cannot read: " + ec.message());
  if (size > kMaxFusionResultBytes)
    throw LoadError(path, std::to_string(size) + " bytes: larger than any fusion_result.json Kiln reads (64 MiB)");
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), std::streamsize(size))) throw LoadError(path, "cannot read");
  return parseFusionResult(text, path);
}

}  // namespace kiln::atc
