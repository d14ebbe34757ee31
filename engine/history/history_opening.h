#pragma once
// A history opened (created, validated, migrated: on a new file a few ms, mostly fsyncs) on another thread while the
// caller reads the model. A file this opening created is removed again when it is never taken (the model could not
// be read), so a failed command leaves nothing behind, as when the history was opened after the model. Used by
// `kiln compile`, the workbench's compiles and the Python module's compile.
#include <future>
#include <memory>
#include <string>

#include "history/history_db.h"

namespace kiln {

class HistoryOpening {
 public:
  explicit HistoryOpening(std::string path);
  ~HistoryOpening();
  HistoryOpening(const HistoryOpening&) = delete;
  HistoryOpening& operator=(const HistoryOpening&) = delete;
  // The open history; throws what opening it threw (LoadError for a foreign, newer or corrupt file).
  std::unique_ptr<HistoryDb> take();

 private:
  std::string path_;
  bool created_ = false, taken_ = false;
  std::future<std::unique_ptr<HistoryDb>> opening_;
};

}  // namespace kiln
