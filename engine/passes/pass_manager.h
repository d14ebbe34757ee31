#pragma once
// Runs the stages prepare -> optimize -> compile. Instrumentation is separate from the passes: observers see the
// run start, each pass before and after (with the graph), failures, and the end. The timing table, the SQLite
// history recorder and the per-pass ONNX dumps are all observers.
// With verify_each_pass (on by default) the IR verifier runs after every pass, and a pass that leaves a problem the
// imported model did not have fails the run, named with the problem; what the import already had is one warning.
// A precompiled model (an .om) runs no pass at all: its own plan is what gets shown.
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "options/options.h"
#include "passes/pass.h"

namespace kiln {

struct PassRecord {
  int index = 0;  // 1-based order in the run; 0 is the imported graph
  Stage stage = Stage::Prepare;
  std::string name;
  double ms = 0;
  bool changed = false;
  std::map<std::string, int64_t> counters;
  int64_t nodesBefore = 0, nodesAfter = 0;  // including subgraphs
  std::string error;                        // set when the pass failed
};

enum class RunStatus { Ok, Failed, Stopped };  // Stopped: --until reached before the end

struct RunSummary {
  RunStatus status = RunStatus::Ok;
  std::string error;  // "ConstantFolding: reason"
  bool invalidModel = false;  // the failing pass found the model invalid (InvalidModelError): bad input, exit 2
  std::vector<PassRecord> passes;
  int64_t nodesBefore = 0, nodesAfter = 0;
  double ms = 0;
  std::vector<std::string> warnings;
};

class PassObserver {
 public:
  virtual ~PassObserver() = default;
  virtual void runStarted(const Model&, const Options&) {}
  virtual void beforePass(const PassRecord&, const Model&) {}
  // `record` is complete (timing, counters, node counts); the model is the graph after the pass.
  virtual void afterPass(const PassRecord&, const Model&) {}
  // The pass threw or left an invalid graph; `record.error` says why. The run ends after this.
  virtual void passFailed(const PassRecord&, const Model&) {}
  virtual void runFinished(const RunSummary&, const Model&) {}
};

class PassManager {
 public:
  void add(Stage stage, std::unique_ptr<Pass> pass);
  // Orders passes by stage, keeping the order within a stage (plugin passes added late land at their stage's end).
  void sortByStage();
  void addObserver(PassObserver* observer) { observers_.push_back(observer); }
  // Stop after the pass (or the last pass of the stage) with this name; empty runs everything. Case-insensitive.
  void setUntil(std::string passOrStage) { until_ = std::move(passOrStage); }
  // Checked before each pass; once set, the run ends as Stopped with error "cancelled before PASS" (the GUI's
  // Cancel). The flag must outlive run().
  void setCancelFlag(const std::atomic<bool>* flag) { cancel_ = flag; }
  // Names of the passes in order, e.g. for `--until` validation and the GUI.
  std::vector<std::pair<Stage, std::string>> passNames() const;

  // Never throws for a failing pass: the failure is in the summary (status Failed, error "Pass: reason").
  RunSummary run(Model& model, const Options& options);

 private:
  struct Entry {
    Stage stage;
    std::unique_ptr<Pass> pass;
  };
  std::vector<Entry> passes_;
  std::vector<PassObserver*> observers_;
  std::string until_;
  const std::atomic<bool>* cancel_ = nullptr;
};

// JSON forms shared by `kiln compile --json`, the history report and (later) batch reports.
Json countersToJson(const std::map<std::string, int64_t>& counters);
Json passRecordToJson(const PassRecord& record);
// {"passes": [...], "nodes_before", "nodes_after", "ms", "status", "error"?, "warnings"}
Json runSummaryToJson(const RunSummary& summary);

// Prints the per-pass table (stage, pass, ms, nodes before -> after, counters) while the run goes.
class TimingTableObserver final : public PassObserver {
 public:
  explicit TimingTableObserver(std::ostream& out) : out_(out) {}
  void runStarted(const Model&, const Options&) override;
  void afterPass(const PassRecord& r, const Model&) override;
  void passFailed(const PassRecord& r, const Model&) override;
  void runFinished(const RunSummary& s, const Model&) override;

 private:
  std::ostream& out_;
};

// Writes the graph after each pass into a folder, numbered like GE's dumps (00000000 is the imported graph):
// as ONNX, ge_onnx_00000003_graph_0_ConstantFolding.onnx, or as GE's own ModelDef in protobuf text format,
// ge_proto_00000003_graph_0_ConstantFolding.txt (io/om/om_writer.h).
enum class DumpFormat { Onnx, GeProto };
class DumpObserver final : public PassObserver {
 public:
  explicit DumpObserver(std::string dir, DumpFormat format = DumpFormat::Onnx)
      : dir_(std::move(dir)), format_(format) {}
  void runStarted(const Model& m, const Options&) override;
  void afterPass(const PassRecord& r, const Model& m) override;

 private:
  void dump(int index, const std::string& name, const Model& m);
  std::string dir_;
  DumpFormat format_;
};

}  // namespace kiln
