#pragma once
// Fusions as the workbench shows them: which fused node replaced which original nodes, by which rule and at which
// pass, and the replaced nodes drawn as the small graph they were in the pass recorded just before the fusion.
// Read from the history (the fused node's annotations fusion.rule / fusion.replaced / fusion.hbm_bytes_saved), so
// it works for any recorded run, including fusions by plugin rules.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "history/history_reader.h"
#include "layout/pass_view.h"

namespace kiln::layout {

struct FusionRecord {
  int64_t fusedNode = 0;
  int pass = 0;                    // the pass that created the fused node
  std::string rule, name, opType;  // opType qualified ("kiln:LayerNorm") when not in the default domain
  std::vector<int64_t> replaced;   // ids of the imported graph's nodes it stands for (flattened through fusions of
                                   // fused nodes), ascending
  int64_t hbmBytesSaved = 0;
  int64_t unknownSizedTensors = 0;  // intermediates of dynamic size, not counted in hbmBytesSaved
};

class FusionIndex {
 public:
  FusionIndex() = default;
  explicit FusionIndex(std::vector<FusionRecord> records);
  const std::vector<FusionRecord>& records() const { return records_; }
  const FusionRecord* fusion(int64_t fusedNode) const;
  // The first fusion that absorbed `node` (null when none did).
  const FusionRecord* absorber(int64_t node) const;
  // Every recorded fusion holding `node`, earliest pass first: the direct absorber, then the fusion that absorbed
  // that fused node (UB fusion swallowing a FusedConv, say), up to the node that finally holds it. A fused node's
  // chain starts with the fusion that absorbed it, not with its own record.
  std::vector<const FusionRecord*> absorberChain(int64_t node) const;

 private:
  std::vector<FusionRecord> records_;
  std::unordered_map<int64_t, size_t> byFused_;
  std::unordered_map<int64_t, std::vector<size_t>> byOriginal_;  // by pass, then fused node id
};

// The fusions recorded in a run. Malformed annotations (a history written by another tool) are skipped.
FusionIndex readFusions(const HistoryReader& reader, int64_t runId);

// What `f` replaced, as it was in the pass recorded before `f.pass`: the replaced original nodes still there, and
// the fused nodes standing for some of them (a FusedConv that UB fusion then absorbed), with the edges among them;
// values entering from outside become input terminals and values read outside (or graph outputs) output terminals,
// named after the value. Fusions made and absorbed within one pass were never recorded: their originals show.
// Throws HistoryError when no pass before the fusion is recorded.
PassView buildFusedSubgraphView(const HistoryReader& reader, int64_t runId, const FusionIndex& fusions,
                                const FusionRecord& f);

}  // namespace kiln::layout
