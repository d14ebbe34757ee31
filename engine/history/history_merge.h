#pragma once
// `kiln history merge OUT.db IN.db...`: the histories of a CI matrix's shards joined into one file. Every run of each
// input is copied with a new run id (ids are per file, so they would collide), with its passes, graph rows,
// per-pass accuracy and timeline; models are shared by path and size as the recorder shares them. Inputs are
// validated read-only first (a foreign, newer or corrupt file is refused, never touched) and each input is copied in
// one transaction, so a failure leaves OUT as it was before that input.
#include <string>
#include <vector>

namespace kiln {

struct HistoryMergeStats {
  int runs = 0;    // runs copied
  int models = 0;  // model rows added to OUT
};

// Throws LoadError naming a refused file (OUT included), HistoryError when copying fails.
HistoryMergeStats mergeHistories(const std::string& out, const std::vector<std::string>& inputs);

}  // namespace kiln
