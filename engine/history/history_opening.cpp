#include "history/history_opening.h"

#include <filesystem>

#include "util/process_limits.h"

namespace kiln {

HistoryOpening::HistoryOpening(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  created_ = !std::filesystem::exists(std::filesystem::symlink_status(path_, ec));
  // (Under an address-space limit a second thread's malloc arena can fail first: opened in take() instead.)
  if (!addressSpaceLimited())
    opening_ = std::async(std::launch::async, [p = path_] { return HistoryDb::forAppending(p); });
}

HistoryOpening::~HistoryOpening() {
  if (taken_) return;
  std::unique_ptr<HistoryDb> db;
  try {
    if (opening_.valid()) db = opening_.get();
  } catch (...) {
    return;  // it failed: nothing was made, or nothing of ours
  }
  if (!db || !created_) return;
  db.reset();  // closed (its -wal and -shm go with it)
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

std::unique_ptr<HistoryDb> HistoryOpening::take() {
  taken_ = true;
  return opening_.valid() ? opening_.get() : HistoryDb::forAppending(path_);
}

}  // namespace kiln
