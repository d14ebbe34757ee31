#pragma once
// One reference run per model, shared by the cases of its option sets. The reference (the original graph on the
// reference kernels) does not depend on the option set — same graph, same inputs — and on large CNNs it is a good
// part of a case (fns-candy: ~45 s of reference against a compiled run that fails at once), so running it once per
// model instead of once per case is most of what keeps a corpus × two option sets batch inside its time budget.
// The first case of a model to ask computes it while later ones wait; the entry is freed when the last case of the
// model is done with it.
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "emulator/emulation.h"

namespace kiln {

struct ReferenceEntry {
  std::shared_ptr<const Model> original;  // null when there is no reference (see note)
  ReferenceRun run;
  std::string note;     // why there is no reference: the model is not emulatable ("numerics missing: ...")
  std::string failure;  // the reference run failed: the model does not run on these inputs (the case fails)
  std::string bindingKey;  // the shape binding its inputs were made at
};

class ReferenceCache {
 public:
  // `cases[model]`: how many cases of each model will call release().
  explicit ReferenceCache(std::map<std::string, int> cases);
  // The model's entry, made by `make` on the first call (which must not throw); other callers wait for it.
  std::shared_ptr<const ReferenceEntry> get(const std::string& model, const std::function<ReferenceEntry()>& make);
  // A case of `model` is finished (whether or not it called get): the last one frees the entry.
  void release(const std::string& model);

 private:
  struct Slot {
    int remaining = 0;
    bool started = false;
    std::shared_future<std::shared_ptr<const ReferenceEntry>> entry;
  };
  std::mutex lock_;
  std::map<std::string, Slot> slots_;
};

}  // namespace kiln
