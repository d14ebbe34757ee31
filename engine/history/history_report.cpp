#include "history/history_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "ir/shape_binding.h"
#include "passes/pass_manager.h"
#include "util/units.h"

namespace kiln {

namespace {

// Stored JSON columns come back as JSON values, not strings inside JSON; a damaged cell stays a string.
Json parsedOr(const std::string& text) {
  try {
    return Json::parse(text);
  } catch (const JsonError&) {
    return Json(text);
  }
}

template <typename T>
Json optJson(const std::optional<T>& v) {
  return v ? Json(*v) : Json();
}

Json spanJson(Json j, const RowSpan& s) {
  j.set("first_pass", s.firstPass);
  j.set("last_pass", s.lastPass ? Json(*s.lastPass) : Json());
  return j;
}

std::string msText(double ms) { return formatDuration(ms / 1000.0); }

std::string shorten(std::string s, size_t max = 60) {
  if (displayWidth(s) <= max) return s;
  s.resize(max - 3);
  // Do not cut a UTF-8 sequence in half.
  while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();
  if (!s.empty() && static_cast<unsigned char>(s.back()) >= 0xC0) s.pop_back();
  return s + "...";
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string nodeLabel(const NodeRow& n) {
  std::string op = n.domain.empty() ? n.opType : n.domain + ":" + n.opType;
  std::string s = "#" + std::to_string(n.id) + " " + op;
  if (!n.name.empty()) s += " " + quoted(n.name);
  if (n.graphOwner) s += " (in #" + std::to_string(n.graphOwner) + " " + n.graphAttr + ")";
  return s;
}

std::string valueType(const ValueRow& v) {
  std::string t = v.dtype.empty() ? "?" : v.dtype;
  if (v.shape) t += "[" + *v.shape + "]";
  if (v.format != "ND" && !v.format.empty()) t += " " + v.format;
  return t;
}

std::string valueLabel(const ValueRow& v) {
  std::string s = "v" + std::to_string(v.id) + " " + quoted(v.name) + " " + valueType(v);
  if (v.isInput) s += " input";
  if (v.isOutput) s += " output";
  if (v.isConstant) s += " constant";
  return s;
}

std::string edgeLabel(const EdgeRow& e) {
  return "v" + std::to_string(e.valueId) + " -> #" + std::to_string(e.consumerNode) + ":" +
         std::to_string(e.consumerIndex);
}

// A table whose columns are padded to their widest cell; `right` marks right-aligned (numeric) columns.
std::string table(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right) {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) {
      if (width.size() <= c) width.resize(c + 1, 0);
      width[c] = std::max(width[c], displayWidth(r[c]));
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      if (c) line += "  ";
      const bool last = c + 1 == r.size();
      if (c < right.size() && right[c])
        line += padLeft(r[c], width[c]);
      else
        line += last ? r[c] : padRight(r[c], width[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string optText(const std::optional<int64_t>& v) { return v ? withThousands(*v) : "?"; }

// Appends at most maxRows lines of a section, then how many were left out.
template <typename T, typename Fn>
void section(std::string& out, const char* title, const std::vector<T>& items, size_t maxRows, Fn line) {
  if (items.empty()) return;
  out += std::string(title) + " (" + std::to_string(items.size()) + ")\n";
  for (size_t i = 0; i < items.size() && i < maxRows; ++i) out += line(items[i]);
  if (items.size() > maxRows) out += "  ... and " + std::to_string(items.size() - maxRows) + " more\n";
}

std::string jsonCell(const Json* v) { return v ? shorten(v->dump()) : std::string("(absent)"); }

}  // namespace

// ---------------------------------------------------------------- JSON

Json runToJson(const RunInfo& r) {
  Json j = Json::object();
  j.set("id", r.id);
  j.set("status", r.status);
  j.set("model", r.modelPath);
  j.set("model_name", r.modelName);
  j.set("model_bytes", optJson(r.modelBytes));
  j.set("started_at", r.startedAt);
  j.set("finished_at", r.finishedAt.empty() ? Json() : Json(r.finishedAt));
  j.set("total_ms", optJson(r.totalMs));
  j.set("nodes_before", optJson(r.nodesBefore));
  j.set("nodes_after", optJson(r.nodesAfter));
  j.set("passes", r.passCount);
  j.set("last_pass", r.lastPass);
  j.set("error", r.error.empty() ? Json() : Json(r.error));
  j.set("kiln_version", r.kilnVersion);
  j.set("options_summary", r.optionsSummary);
  j.set("options", parsedOr(r.optionsJson));
  j.set("shape_binding", r.shapeBindingJson.empty() ? Json() : parsedOr(r.shapeBindingJson));
  j.set("writer_pid", r.writerPid);
  j.set("writer_host", r.writerHost);
  return j;
}

Json runsToJson(const std::vector<RunInfo>& runs) {
  Json a = Json::array();
  for (const auto& r : runs) a.push(runToJson(r));
  return a;
}

Json passToJson(const PassInfo& p) {
  Json j = Json::object();
  j.set("seq", p.seq);
  j.set("stage", p.stage);
  j.set("name", p.name);
  j.set("ms", p.ms);
  j.set("changed", p.changed);
  j.set("counters", countersToJson(p.counters));
  j.set("nodes_before", optJson(p.nodesBefore));
  j.set("nodes_after", optJson(p.nodesAfter));
  j.set("node_rows_started", p.nodeRowsStarted);
  j.set("node_rows_ended", p.nodeRowsEnded);
  j.set("nodes_annotated", p.nodesAnnotated);
  j.set("error", p.error.empty() ? Json() : Json(p.error));
  return j;
}

Json passesToJson(const std::vector<PassInfo>& passes) {
  Json a = Json::array();
  for (const auto& p : passes) a.push(passToJson(p));
  return a;
}

Json runDetailsToJson(const RunInfo& run, const std::vector<PassInfo>& passes) {
  Json j = runToJson(run);
  j.set("passes", passesToJson(passes));
  return j;
}

Json nodeRowToJson(const NodeRow& n) {
  Json j = Json::object();
  j.set("id", n.id);
  j.set("op_type", n.opType);
  j.set("domain", n.domain);
  j.set("name", n.name);
  j.set("graph_owner", n.graphOwner);
  j.set("graph_attr", n.graphAttr);
  j.set("attrs", parsedOr(n.attrsJson));
  j.set("annotations", parsedOr(n.annotationsJson));
  return spanJson(std::move(j), n.span);
}

Json valueRowToJson(const ValueRow& v) {
  Json j = Json::object();
  j.set("id", v.id);
  j.set("name", v.name);
  j.set("dtype", v.dtype);
  j.set("shape", optJson(v.shape));
  j.set("format", v.format);
  j.set("bytes", optJson(v.bytes));
  j.set("producer_node", optJson(v.producerNode));
  j.set("producer_index", optJson(v.producerIndex));
  j.set("is_input", v.isInput);
  j.set("is_output", v.isOutput);
  j.set("is_constant", v.isConstant);
  j.set("graph_owner", v.graphOwner);
  j.set("graph_attr", v.graphAttr);
  return spanJson(std::move(j), v.span);
}

Json edgeRowToJson(const EdgeRow& e) {
  Json j = Json::object();
  j.set("value", e.valueId);
  j.set("consumer_node", e.consumerNode);
  j.set("consumer_index", e.consumerIndex);
  return spanJson(std::move(j), e.span);
}

Json snapshotToJson(const GraphSnapshot& g) {
  Json j = Json::object();
  j.set("run", g.runId);
  j.set("pass", g.pass);
  Json nodes = Json::array(), values = Json::array(), edges = Json::array();
  for (const auto& n : g.nodes) nodes.push(nodeRowToJson(n));
  for (const auto& v : g.values) values.push(valueRowToJson(v));
  for (const auto& e : g.edges) edges.push(edgeRowToJson(e));
  j.set("nodes", std::move(nodes));
  j.set("values", std::move(values));
  j.set("edges", std::move(edges));
  return j;
}

Json diffToJson(const GraphDiff& d) {
  Json j = Json::object();
  j.set("run", d.runId);
  j.set("from_pass", d.fromPass);
  j.set("to_pass", d.toPass);
  auto rows = [](const auto& list, auto fn) {
    Json a = Json::array();
    for (const auto& x : list) a.push(fn(x));
    return a;
  };
  auto strings = [](const std::vector<std::string>& v) {
    Json a = Json::array();
    for (const auto& s : v) a.push(s);
    return a;
  };
  j.set("added_nodes", rows(d.addedNodes, nodeRowToJson));
  j.set("removed_nodes", rows(d.removedNodes, nodeRowToJson));
  // A node or value change: its id, which fields changed, and the rows before and after.
  auto change = [&](const auto& c, auto rowToJson) {
    Json o = Json::object();
    o.set("id", c.after.id);
    o.set("fields", strings(c.fields()));
    o.set("before", rowToJson(c.before));
    o.set("after", rowToJson(c.after));
    return o;
  };
  j.set("changed_nodes", rows(d.changedNodes, [&](const NodeChange& c) { return change(c, nodeRowToJson); }));
  j.set("added_values", rows(d.addedValues, valueRowToJson));
  j.set("removed_values", rows(d.removedValues, valueRowToJson));
  j.set("changed_values", rows(d.changedValues, [&](const ValueChange& c) { return change(c, valueRowToJson); }));
  j.set("added_edges", rows(d.addedEdges, edgeRowToJson));
  j.set("removed_edges", rows(d.removedEdges, edgeRowToJson));
  return j;
}

// ---------------------------------------------------------------- text

std::string shapeBindingText(const RunInfo& r) {
  if (r.shapeBindingJson.empty()) return {};
  try {
    return ShapeBinding::fromJson(Json::parse(r.shapeBindingJson, 16)).text();
  } catch (const std::exception&) {
    return "(unreadable)";  // the file is untrusted: a bad cell is shown as such, never trusted
  }
}

std::string formatRuns(const std::vector<RunInfo>& runs) {
  if (runs.empty()) return "no runs recorded\n";
  std::vector<std::vector<std::string>> rows = {
      {"RUN", "STATUS", "STARTED (UTC)", "MODEL", "NODES", "TIME", "PASSES", "OPTIONS"}};
  for (const RunInfo& r : runs) {
    std::string started = r.startedAt.substr(0, 19);
    std::replace(started.begin(), started.end(), 'T', ' ');
    rows.push_back({std::to_string(r.id), r.status, started, r.modelName.empty() ? r.modelPath : r.modelName,
                    optText(r.nodesBefore) + " -> " + optText(r.nodesAfter), r.totalMs ? msText(*r.totalMs) : "-",
                    std::to_string(std::max(0, r.passCount - 1)), r.optionsSummary});
  }
  return table(rows, {true, false, false, false, true, true, true, false});
}

std::string formatRunDetails(const RunInfo& r, const std::vector<PassInfo>& passes) {
  std::string out = "run " + std::to_string(r.id) + ": " + r.status + "\n";
  out += "model:    " + r.modelPath + (r.modelBytes ? " (" + formatBytes(static_cast<double>(*r.modelBytes)) + ")" : "") +
         "\n";
  out += "started:  " + r.startedAt + (r.finishedAt.empty() ? "" : "   finished: " + r.finishedAt) + "\n";
  out += "nodes:    " + optText(r.nodesBefore) + " -> " + optText(r.nodesAfter) +
         (r.totalMs ? "   total " + msText(*r.totalMs) : "") + "\n";
  out += "options:  " + (r.optionsSummary.empty() ? std::string("(defaults)") : r.optionsSummary) + "\n";
  if (const std::string shapes = shapeBindingText(r); !shapes.empty()) out += "shapes:   " + shapes + "\n";
  out += "writer:   kiln " + r.kilnVersion + ", pid " + std::to_string(r.writerPid) + " on " + r.writerHost + "\n";
  if (!r.error.empty()) out += "error:    " + r.error + "\n";
  out += "\n";
  std::vector<std::vector<std::string>> rows = {{"#", "STAGE", "PASS", "TIME", "NODES", "ROWS +/-", "ANNOTATED", "COUNTERS"}};
  for (const PassInfo& p : passes) {
    std::string counters;
    for (const auto& [k, v] : p.counters) counters += (counters.empty() ? "" : " ") + k + "=" + withThousands(v);
    if (!p.error.empty()) counters = "FAILED: " + p.error;
    rows.push_back({std::to_string(p.seq), p.stage, p.name, msText(p.ms),
                    p.seq == 0 ? optText(p.nodesAfter) : optText(p.nodesBefore) + " -> " + optText(p.nodesAfter),
                    "+" + std::to_string(p.nodeRowsStarted) + " -" + std::to_string(p.nodeRowsEnded),
                    p.nodesAnnotated ? withThousands(p.nodesAnnotated) : std::string("-"), counters});
  }
  return out + table(rows, {true, false, false, true, true, true, true, false});
}

std::string formatSnapshot(const GraphSnapshot& g, size_t maxRows) {
  std::string out = "run " + std::to_string(g.runId) + " after pass " + std::to_string(g.pass) + ": " +
                    withThousands(static_cast<int64_t>(g.nodes.size())) + " nodes, " +
                    withThousands(static_cast<int64_t>(g.values.size())) + " values, " +
                    withThousands(static_cast<int64_t>(g.edges.size())) + " edges\n";
  std::map<std::string, int64_t> ops;
  for (const auto& n : g.nodes) ++ops[n.domain.empty() ? n.opType : n.domain + ":" + n.opType];
  std::vector<std::pair<std::string, int64_t>> sorted(ops.begin(), ops.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string opLine;
  for (const auto& [op, n] : sorted) opLine += (opLine.empty() ? "" : ", ") + op + " " + withThousands(n);
  out += "ops: " + opLine + "\n\n";

  // Inputs per consumer from the edge list (sorted by consumer, index); outputs from the values' producers.
  std::map<int64_t, std::vector<std::string>> inputs, outputs;
  for (const auto& e : g.edges) inputs[e.consumerNode].push_back("v" + std::to_string(e.valueId));
  for (const auto& v : g.values)
    if (v.producerNode) outputs[*v.producerNode].push_back("v" + std::to_string(v.id) + " " + valueType(v));
  std::vector<std::vector<std::string>> rows = {{"NODE", "INPUTS", "OUTPUTS"}};
  for (size_t i = 0; i < g.nodes.size() && i < maxRows; ++i) {
    const NodeRow& n = g.nodes[i];
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
      return s;
    };
    rows.push_back({nodeLabel(n), join(inputs[n.id]), join(outputs[n.id])});
  }
  out += table(rows, {});
  if (g.nodes.size() > maxRows) out += "... and " + std::to_string(g.nodes.size() - maxRows) + " more nodes\n";
  return out;
}

std::string formatDiff(const GraphDiff& d, size_t maxRows) {
  std::string out = "run " + std::to_string(d.runId) + ", pass " +
                    (d.fromPass < 0 ? std::string("(none)") : std::to_string(d.fromPass)) + " -> " +
                    std::to_string(d.toPass) + ": ";
  if (d.empty()) return out + "no change\n";
  out += "nodes +" + std::to_string(d.addedNodes.size()) + " -" + std::to_string(d.removedNodes.size()) + " ~" +
         std::to_string(d.changedNodes.size()) + ", edges +" + std::to_string(d.addedEdges.size()) + " -" +
         std::to_string(d.removedEdges.size()) + ", values +" + std::to_string(d.addedValues.size()) + " -" +
         std::to_string(d.removedValues.size()) + " ~" + std::to_string(d.changedValues.size()) + "\n";

  section(out, "nodes added", d.addedNodes, maxRows, [](const NodeRow& n) { return "  + " + nodeLabel(n) + "\n"; });
  section(out, "nodes removed", d.removedNodes, maxRows,
          [](const NodeRow& n) { return "  - " + nodeLabel(n) + "\n"; });
  section(out, "nodes changed", d.changedNodes, maxRows, [](const NodeChange& c) {
    std::string fields;
    for (const auto& f : c.fields()) fields += (fields.empty() ? "" : ", ") + f;
    std::string s = "  ~ " + nodeLabel(c.after) + ": " + fields + "\n";
    if (c.opType) s += "      op_type: " + c.before.opType + " -> " + c.after.opType + "\n";
    if (c.domain) s += "      domain: " + quoted(c.before.domain) + " -> " + quoted(c.after.domain) + "\n";
    if (c.name) s += "      name: " + quoted(c.before.name) + " -> " + quoted(c.after.name) + "\n";
    // Attribute and annotation values side by side (long values shortened).
    auto details = [&s](const char* kind, const std::vector<std::string>& keys, const std::string& a,
                        const std::string& b) {
      if (keys.empty()) return;
      const Json ja = parsedOr(a), jb = parsedOr(b);
      for (const auto& k : keys) {
        const Json* x = ja.isObject() ? ja.find(k) : nullptr;
        const Json* y = jb.isObject() ? jb.find(k) : nullptr;
        s += "      " + std::string(kind) + " " + k + ": " + jsonCell(x) + " -> " + jsonCell(y) + "\n";
      }
    };
    details("attr", c.attrs, c.before.attrsJson, c.after.attrsJson);
    details("annotation", c.annotations, c.before.annotationsJson, c.after.annotationsJson);
    return s;
  });
  section(out, "edges added", d.addedEdges, maxRows, [](const EdgeRow& e) { return "  + " + edgeLabel(e) + "\n"; });
  section(out, "edges removed", d.removedEdges, maxRows,
          [](const EdgeRow& e) { return "  - " + edgeLabel(e) + "\n"; });
  section(out, "values added", d.addedValues, maxRows,
          [](const ValueRow& v) { return "  + " + valueLabel(v) + "\n"; });
  section(out, "values removed", d.removedValues, maxRows,
          [](const ValueRow& v) { return "  - " + valueLabel(v) + "\n"; });
  section(out, "values changed", d.changedValues, maxRows, [](const ValueChange& c) {
    std::string s = "  ~ v" + std::to_string(c.after.id) + " " + quoted(c.after.name) + ":";
    std::string sep = " ";
    auto show = [&](const char* field, const std::string& a, const std::string& b) {
      s += sep + field + " " + a + " -> " + b;
      sep = ", ";
    };
    auto opt = [](const auto& o) { return o ? std::to_string(*o) : std::string("-"); };
    for (const auto& f : c.fields()) {
      if (f == "name") show("name", quoted(c.before.name), quoted(c.after.name));
      else if (f == "dtype") show("dtype", c.before.dtype, c.after.dtype);
      else if (f == "shape") show("shape", c.before.shape.value_or("?"), c.after.shape.value_or("?"));
      else if (f == "format") show("format", c.before.format, c.after.format);
      else if (f == "bytes") show("bytes", opt(c.before.bytes), opt(c.after.bytes));
      else if (f == "producer")
        show("producer", c.before.producerNode ? "#" + opt(c.before.producerNode) + ":" + opt(c.before.producerIndex) : "-",
             c.after.producerNode ? "#" + opt(c.after.producerNode) + ":" + opt(c.after.producerIndex) : "-");
      else {
        s += sep + f;
        sep = ", ";
      }
    }
    return s + "\n";
  });
  return out;
}

}  // namespace kiln
