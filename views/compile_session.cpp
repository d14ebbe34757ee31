#include "compile_session.h"

#include <QDir>
#include <QPointer>
#include <QStandardPaths>
#include <QThread>
#include <QThreadPool>
#include <memory>

#include "emulator/emulation_inputs.h"
#include "emulator/model_inputs.h"
#include "emulator/pass_verifier.h"
#include "history/history_db.h"
#include "history/history_emulation.h"
#include "history/history_opening.h"
#include "history/history_recorder.h"
#include "util/load_error.h"
#include "io/model_loader.h"
#include "ir/model.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "util/json.h"
#include "worker_pool.h"

namespace kiln::views {

namespace {

// Reports each finished pass to the UI thread.
class ProgressObserver final : public PassObserver {
 public:
  ProgressObserver(QPointer<CompileSession> session, int total) : session_(std::move(session)), total_(total) {}
  void afterPass(const PassRecord& r, const Model&) override {
    QMetaObject::invokeMethod(session_.data(), [s = session_, i = r.index, t = total_, n = QString::fromStdString(r.name)] {
      if (s) emit s->progress(i, t, n);
    }, Qt::QueuedConnection);
  }

 private:
  QPointer<CompileSession> session_;
  int total_;
};

}  // namespace

CompileSession::CompileSession(QObject* parent) : QObject(parent), historyPath_(defaultHistoryPath()) {}

CompileSession::~CompileSession() {
  if (cancel_) cancel_->store(true);
  // The worker only touches its own copies and a QPointer to us; wait so the process never exits mid-transaction.
  workerPool()->waitForDone(30000);
}

QString CompileSession::defaultHistoryPath() {
  const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
  QDir().mkpath(dir);
  return dir + "/history.db";
}

void CompileSession::cancel() {
  if (cancel_) cancel_->store(true);
}

bool CompileSession::start(const QString& modelPath, const kiln::Options& options, bool verifyNumerics) {
  if (running_) return false;
  running_ = true;
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  QPointer<CompileSession> self(this);
  auto finish = [self](auto fn) {
    QMetaObject::invokeMethod(self.data(), [self, fn] {
      if (!self) return;
      self->running_ = false;
      fn(self.data());
    }, Qt::QueuedConnection);
  };
  workerPool()->start([self, finish, cancel = cancel_, model = modelPath.toStdString(),
                                        history = historyPath_.toStdString(), options = kiln::Options(options), verifyNumerics]() mutable {
    struct NormalPriorityAfter {
      ~NormalPriorityAfter() { QThread::currentThread()->setPriority(QThread::NormalPriority); }
    } restorePriority;
    try {
      // The history opens (its checks read a file of up to 8 MB whole) while the model loads.
      HistoryOpening opening(history);
      LoadedModel loaded = loadModel(model);
      const std::unique_ptr<HistoryDb> opened = opening.take();
      HistoryDb& db = *opened;
      HistoryRecorder recorder(db, model);
      std::unique_ptr<PassVerifier> verifier;
      std::string accuracyError, unverified;
      if (verifyNumerics) {
        // The data is made at the compiler's own binding (under dim_values=keep, at the policy's extents).
        const std::map<std::string, int64_t> dims = bindForEmulation(*loaded.model, options).values();
        // Data the model cannot get (over emulator.max_input_bytes, an input of unknown type) skips the
        // verification, not the compile.
        std::vector<Tensor> data;
        try {
          const int64_t limit = options.getInt(kEmulatorInputKey);
          data = randomInputs(*loaded.model->graph, 1, dims, 2, limit);
        } catch (const std::runtime_error& e) {
          unverified = e.what();
        }
        auto record = [&](const PassAccuracyRow& row) {
          if (recorder.runId() == 0 || !accuracyError.empty()) return;
          try {
            writePassAccuracy(db, recorder.runId(), row);
          } catch (const std::exception& e) {
            accuracyError = e.what();
          }
        };
        if (unverified.empty())
          verifier = std::make_unique<PassVerifier>(std::move(data), std::nullopt, record);
      }
      PassManager pm;
      addStandardPasses(pm, options);
      ProgressObserver progress(self, static_cast<int>(pm.passNames().size()));
      pm.addObserver(&recorder);  // first: a pass row exists before its accuracy row
      if (verifier) pm.addObserver(verifier.get());
      pm.addObserver(&progress);
      pm.setCancelFlag(cancel.get());
      const RunSummary s = pm.run(*loaded.model, options);
      const qint64 runId = recorder.runId();
      QString message;
      bool ok = s.status != RunStatus::Failed && recorder.error().empty();
      if (!recorder.error().empty()) message = "history " + QString::fromStdString(history) + ": " +
                                               QString::fromStdString(recorder.error());
      else if (s.status == RunStatus::Failed) message = "failed at pass " + QString::fromStdString(s.error);
      else if (s.status == RunStatus::Stopped) message = "stopped: " + QString::fromStdString(s.error);
      else message = QString("compiled in %1 ms: %L2 → %L3 nodes").arg(s.ms, 0, 'f', 1).arg(s.nodesBefore).arg(s.nodesAfter);
      if (!unverified.empty())
        message += "; numerics not verified: " + QString::fromStdString(unverified);
      else if (verifier && !verifier->baselineError().empty())
        message += "; numerics not verified: " + QString::fromStdString(verifier->baselineError());
      else if (verifier && verifier->firstExceeding() >= 0)
        message += "; numerics below the gate from " +
                   QString::fromStdString(verifier->results()[size_t(verifier->firstExceeding())].pass) + ": " +
                   QString::fromStdString(verifier->results()[size_t(verifier->firstExceeding())].row.detail);
      else if (verifier && !verifier->results().empty() && verifier->results().back().row.status == "ok")
        message += QString("; numerics: every output passed the gate at every pass (min cosine %1)")
                       .arg(verifier->results().back().row.cosine.value_or(1.0), 0, 'f', 6);
      if (!accuracyError.empty()) message += "; accuracy not recorded: " + QString::fromStdString(accuracyError);
      std::shared_ptr<const Model> compiled(std::move(loaded.model));
      finish([runId, ok, message, compiled](CompileSession* cs) {
        cs->compiled_ = compiled;
        cs->compiledRun_ = runId;
        emit cs->finished(runId, ok, message);
      });
      // What is left is freeing the recorder's open rows (a quarter of a second of CPU at 50k nodes): at idle
      // priority, because the window now reads the run on both cores. The pool thread gets its priority back below.
      QThread::currentThread()->setPriority(QThread::IdlePriority);
    } catch (const LoadError& e) {
      const QString m = QString::fromStdString(e.describe());
      finish([m](CompileSession* cs) { emit cs->failed(m); });
    } catch (const std::exception& e) {
      const QString m = QString::fromStdString(model) + ": " + QString::fromUtf8(e.what());
      finish([m](CompileSession* cs) { emit cs->failed(m); });
    }
  });
  return true;
}

}  // namespace kiln::views
