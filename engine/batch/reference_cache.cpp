#include "batch/reference_cache.h"

namespace kiln {

ReferenceCache::ReferenceCache(std::map<std::string, int> cases) {
  for (const auto& [model, n] : cases) slots_[model].remaining = n;
}

std::shared_ptr<const ReferenceEntry> ReferenceCache::get(const std::string& model,
                                                          const std::function<ReferenceEntry()>& make) {
  std::promise<std::shared_ptr<const ReferenceEntry>> promise;
  std::shared_future<std::shared_ptr<const ReferenceEntry>> entry;
  bool mine = false;
  {
    std::lock_guard g(lock_);
    Slot& slot = slots_[model];
    if (!slot.started) {
      slot.started = true;
      slot.entry = promise.get_future().share();
      mine = true;
    }
    entry = slot.entry;  // a copy: the slot may be erased by release() while we wait
  }
  if (mine) {
    ReferenceEntry made;
    try {
      made = make();
    } catch (const std::exception& e) {  // `make` should not throw; waiting cases must not hang if it does
      made = ReferenceEntry{};
      made.note = e.what();
    }
    promise.set_value(std::make_shared<const ReferenceEntry>(std::move(made)));
  }
  return entry.get();
}

void ReferenceCache::release(const std::string& model) {
  std::lock_guard g(lock_);
  auto it = slots_.find(model);
  if (it != slots_.end() && --it->second.remaining <= 0) slots_.erase(it);
}

}  // namespace kiln
