#include "batch/batch_summary.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "util/load_error.h"
#include "util/json_fields.h"

namespace kiln {

bool CaseRecord::passed() const {
  if (!metrics.ok()) return false;
  for (const GateRecord& g : gates)
    if (g.outcome.state == GateOutcome::State::Failed) return false;
  return true;
}

std::string CaseRecord::failure() const {
  std::string why = metrics.ok() ? std::string() : metrics.reason;
  for (const GateRecord& g : gates)
    if (g.outcome.state == GateOutcome::State::Failed) why += (why.empty() ? "gate " : "; gate ") + g.outcome.detail;
  return why;
}

int BatchSummary::failed() const {
  int n = 0;
  for (const CaseRecord& c : cases) n += c.passed() ? 0 : 1;
  return n;
}

int BatchSummary::skippedGates() const {
  int n = 0;
  for (const CaseRecord& c : cases)
    for (const GateRecord& g : c.gates) n += g.outcome.state == GateOutcome::State::Skipped ? 1 : 0;
  return n;
}

Json caseRecordToJson(const CaseRecord& c) {
  Json j = Json::object();
  j.set("id", c.id);
  j.set("passed", c.passed());
  Json m = runMetricsToJson(c.metrics);
  for (auto& [k, v] : m.asObject()) j.set(k, std::move(v));
  Json gates = Json::array();
  for (const GateRecord& g : c.gates) {
    Json gj = Json::object();
    gj.set("expr", g.expr);
    gj.set("result", gateStateName(g.outcome.state));
    gj.set("detail", g.outcome.detail);
    gates.push(std::move(gj));
  }
  j.set("gates", std::move(gates));
  j.set("wall_ms", c.wallMs);
  j.set("report_ms", c.reportMs);
  if (c.hasPage) j.set("page", "cases/" + c.id + ".html");
  if (c.hasTrace) j.set("trace", "cases/" + c.id + ".trace.json");
  if (c.sweep) j.set("sweep", sweepChartToJson(*c.sweep));
  return j;
}

Json batchSummaryToJson(const BatchSummary& s) {
  Json j = Json::object();
  j.set("kiln_batch", 1);
  Json sets = Json::array();
  for (const std::string& o : s.optionSets) sets.push(o);
  j.set("option_sets", std::move(sets));
  if (!s.shard.empty()) j.set("shard", s.shard);
  j.set("jobs", s.jobs);
  j.set("total_ms", s.totalMs);
  j.set("report_ms", s.reportMs);
  j.set("cases_total", static_cast<int64_t>(s.cases.size()));
  j.set("cases_failed", s.failed());
  j.set("gates_skipped", s.skippedGates());
  Json cases = Json::array();
  for (const CaseRecord& c : s.cases) cases.push(caseRecordToJson(c));
  j.set("cases", std::move(cases));
  return j;
}

namespace {

// A case id becomes a file name in the merged report: only what caseId() produces is accepted.
bool safeId(const std::string& id) {
  if (id.empty() || id.size() > 160 || id[0] == '.') return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

CaseRecord caseFromJson(const Json& j) {
  jsonObject(j, "a case");
  CaseRecord c;
  c.id = jsonString(j, "id");
  if (!safeId(c.id)) throw std::invalid_argument("'id': expected letters, digits, '.', '-' or '_'");
  c.metrics = runMetricsFromJson(j);
  if (const Json* gates = j.find("gates"); gates && !gates->isNull()) {
    if (!gates->isArray()) throw std::invalid_argument("'gates': expected an array");
    for (const Json& g : gates->asArray()) {
      jsonObject(g, "'gates' entry");
      GateRecord r;
      r.expr = jsonString(g, "expr");
      const std::string result = jsonString(g, "result", "passed");
      r.outcome.state = result == "failed"    ? GateOutcome::State::Failed
                        : result == "skipped" ? GateOutcome::State::Skipped
                        : result == "passed"  ? GateOutcome::State::Passed
                                              : throw std::invalid_argument("'result': unknown gate result '" + result + "'");
      r.outcome.detail = jsonString(g, "detail");
      c.gates.push_back(std::move(r));
    }
  }
  c.wallMs = jsonNumber(j, "wall_ms", 0, 0);
  c.reportMs = jsonNumber(j, "report_ms", 0, 0);
  c.hasPage = j.find("page") != nullptr;
  c.hasTrace = j.find("trace") != nullptr;
  if (const Json* sweep = j.find("sweep"); sweep && !sweep->isNull()) c.sweep = sweepChartFromJson(*sweep);
  return c;
}

}  // namespace

BatchSummary readBatchSummary(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw LoadError(path, "cannot open");
  std::ostringstream text;
  text << f.rdbuf();
  if (text.str().size() > (size_t{256} << 20)) throw LoadError(path, "larger than 256 MiB: not a summary.json");
  Json j;
  try {
    j = Json::parse(text.str());
  } catch (const std::exception& e) {
    throw LoadError(path, std::string("not JSON: ") + e.what());
  }
  BatchSummary s;
  if (!j.isObject() || !j.find("kiln_batch") || !j.find("cases") || !j.find("cases")->isArray())
    throw LoadError(path, "not a kiln batch summary.json (no \"kiln_batch\" and \"cases\")");
  try {
    if (const Json* sets = j.find("option_sets"); sets && sets->isArray())
      for (const Json& o : sets->asArray())
        if (o.isString()) s.optionSets.push_back(o.asString());
    s.shard = jsonString(j, "shard");
    s.jobs = static_cast<int>(jsonNumber(j, "jobs", 1, 1, 4096));
    s.totalMs = jsonNumber(j, "total_ms", 0, 0);
    s.reportMs = jsonNumber(j, "report_ms", 0, 0);
  } catch (const std::invalid_argument& e) {
    throw LoadError(path, e.what());
  }
  std::set<std::string> ids;
  const Json::Array& cases = j.find("cases")->asArray();
  for (size_t i = 0; i < cases.size(); ++i) {
    try {
      s.cases.push_back(caseFromJson(cases[i]));
    } catch (const std::invalid_argument& e) {
      throw LoadError(path, "cases[" + std::to_string(i) + "]: " + e.what());
    }
    if (!ids.insert(s.cases.back().id).second)
      throw LoadError(path, "cases[" + std::to_string(i) + "]: case id '" + s.cases.back().id + "' appears twice");
  }
  return s;
}

namespace {

// The baseline's cases of `model`: by the path as given, else — paths differ between a CI checkout and a laptop —
// by file name when exactly one baseline model has it.
std::vector<const CaseRecord*> casesOfModel(const BatchSummary& baseline, const std::string& model) {
  std::vector<const CaseRecord*> same, sameName;
  std::set<std::string> pathsWithName;
  const std::string name = std::filesystem::path(model).filename().string();
  for (const CaseRecord& c : baseline.cases) {
    if (c.metrics.model == model) same.push_back(&c);
    if (std::filesystem::path(c.metrics.model).filename().string() == name) {
      sameName.push_back(&c);
      pathsWithName.insert(c.metrics.model);
    }
  }
  if (!same.empty() || pathsWithName.size() != 1) return same;
  return sameName;
}

}  // namespace

const CaseRecord* findBaselineCase(const BatchSummary& baseline, const std::string& model, const std::string& optionSet) {
  std::set<std::string> sets;
  for (const CaseRecord& c : baseline.cases) sets.insert(c.metrics.optionSet);
  const std::vector<const CaseRecord*> cases = casesOfModel(baseline, model);
  for (const CaseRecord* c : cases)
    if (c->metrics.optionSet == optionSet) return c;
  return sets.size() == 1 && !cases.empty() ? cases.front() : nullptr;
}

}  // namespace kiln
