#pragma once
// Runs a compile for the workbench on a worker thread: load the model, run every stage under an option set,
// record each pass in the history database, report progress per pass, and stop between passes on Cancel. The UI
// thread never waits for it; results arrive as signals (queued to the UI thread).
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>

#include "options/options.h"

namespace kiln {
struct Model;
}

namespace kiln::views {

class CompileSession : public QObject {
  Q_OBJECT
 public:
  explicit CompileSession(QObject* parent = nullptr);
  ~CompileSession() override;

  // The history database runs are recorded in (created on first use).
  void setHistoryPath(const QString& path) { historyPath_ = path; }
  const QString& historyPath() const { return historyPath_; }
  // The default: <app data>/history.db (QStandardPaths::AppDataLocation).
  static QString defaultHistoryPath();

  // Starts compiling; false (with `busy`) when a compile is already running. With `verifyNumerics` the graph after
  // every changed pass is also run on seeded random inputs (the emulator's PassVerifier) and its error against the
  // original recorded in the history (pass_accuracy), as `kiln verify --history` does; symbolic input dims are bound
  // to 1 for that unless input_shape is set.
  bool start(const QString& modelPath, const kiln::Options& options, bool verifyNumerics = false);
  void cancel();
  bool running() const { return running_; }
  // The graph the last compile left, kept for the views that need it in memory (memory plan, timeline): null
  // unless `runId` is that compile's run. Read-only, so worker threads may share it.
  std::shared_ptr<const Model> compiledModel(qint64 runId) const { return runId == compiledRun_ ? compiled_ : nullptr; }

 signals:
  void progress(int done, int total, const QString& passName);
  // A run was recorded (status ok, failed at a pass, or stopped by Cancel); `message` says how it ended.
  void finished(qint64 runId, bool ok, const QString& message);
  // Nothing was recorded: the model could not be read, or the history could not be opened.
  void failed(const QString& message);

 private:
  QString historyPath_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  bool running_ = false;
  std::shared_ptr<const Model> compiled_;
  qint64 compiledRun_ = 0;
};

}  // namespace kiln::views
