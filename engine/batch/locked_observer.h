#pragma once
// A PassObserver that holds one mutex around every call of the observer it wraps. Parallel batch cases record into
// one history file, each through its own connection; taking turns per pass keeps every transaction short and
// uncontended (no SQLITE_BUSY waits) while the compiles themselves still run in parallel.
#include <mutex>

#include "passes/pass_manager.h"

namespace kiln {

class LockedObserver final : public PassObserver {
 public:
  LockedObserver(PassObserver& inner, std::mutex& lock) : inner_(inner), lock_(lock) {}
  void runStarted(const Model& m, const Options& o) override { locked([&] { inner_.runStarted(m, o); }); }
  void beforePass(const PassRecord& r, const Model& m) override { locked([&] { inner_.beforePass(r, m); }); }
  void afterPass(const PassRecord& r, const Model& m) override { locked([&] { inner_.afterPass(r, m); }); }
  void passFailed(const PassRecord& r, const Model& m) override { locked([&] { inner_.passFailed(r, m); }); }
  void runFinished(const RunSummary& s, const Model& m) override { locked([&] { inner_.runFinished(s, m); }); }

 private:
  template <typename Fn>
  void locked(Fn&& fn) {
    std::lock_guard g(lock_);
    fn();
  }
  PassObserver& inner_;
  std::mutex& lock_;
};

}  // namespace kiln
