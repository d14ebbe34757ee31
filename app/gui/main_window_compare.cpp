// MainWindow's Run ▸ Compare Runs: pick two runs of the history, load each side (metrics, memory plan, timeline,
// the graph after its last pass) on the thread pool, and show them in a window of their own.
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "compile_session.h"
#include "history/history_db.h"
#include "history/history_reader.h"
#include "layout/pass_view.h"
#include "main_window.h"
#include "run_compare_view.h"
#include "worker_pool.h"

namespace kiln::app {

namespace {

struct ComparePair {
  views::CompareSide a, b;
  bool sameModel = true;
  QString error;
};

views::CompareSide loadSide(const std::string& db, int64_t runId, std::shared_ptr<const Model> compiled,
                            RunInfo& info) {
  views::CompareSide side;
  side.charts = loadRunCharts(db, runId, std::move(compiled));
  try {
    HistoryDb h(db, HistoryDb::Mode::ReadOnly);
    HistoryReader r(h);
    info = r.run(runId);
    const auto passes = r.passes(runId);
    if (!passes.empty())
      side.view = std::make_shared<const layout::PassView>(layout::buildPassView(r, runId, passes.back().seq, -1));
  } catch (const std::exception& e) {
    side.error = QString::fromStdString(e.what());
  }
  return side;
}

// What tells two runs apart for a person: the options that differ between these two, else that they match.
QString sideTitle(const RunInfo& run) {
  const std::string& what = !run.optionsDiff.empty()       ? run.optionsDiff
                            : !run.optionsHeadline.empty() ? "same options · " + run.optionsHeadline
                                                           : run.status;
  return QString("%1 · run %2 · %3")
      .arg(QFileInfo(QString::fromStdString(run.modelPath)).fileName())
      .arg(run.id)
      .arg(QString::fromStdString(what));
}

}  // namespace

void MainWindow::askCompareRuns() {
  std::vector<RunInfo> runs;
  try {
    HistoryDb h(historyPath_.toStdString(), HistoryDb::Mode::ReadOnly);
    runs = HistoryReader(h).listRuns();
  } catch (const std::exception& e) {
    return showError(QString::fromStdString(e.what()));
  }
  if (runs.size() < 2) return showError("Compare Runs needs two runs in the history: change an option and rerun first");
  QDialog dialog(this);
  dialog.setWindowTitle("Compare Runs");
  auto* form = new QFormLayout;
  auto* a = new QComboBox(&dialog);
  auto* b = new QComboBox(&dialog);
  for (const RunInfo& r : runs)
    for (QComboBox* c : {a, b})
      c->addItem(QString("run %1 · %2 · %3").arg(r.id).arg(QFileInfo(QString::fromStdString(r.modelPath)).fileName(),
                                                          QString::fromStdString(r.optionsDiff.empty()
                                                                                     ? r.optionsHeadline
                                                                                     : r.optionsDiff)),
                 static_cast<qlonglong>(r.id));
  // Default: the run shown as B, the run before it as A.
  const int shown = b->findData(static_cast<qlonglong>(runId_));
  b->setCurrentIndex(shown >= 0 ? shown : b->count() - 1);
  a->setCurrentIndex(std::max(0, b->currentIndex() - 1));
  form->addRow("A:", a);
  form->addRow("B:", b);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
  connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  auto* layout = new QVBoxLayout(&dialog);
  layout->addLayout(form);
  layout->addWidget(buttons);
  if (dialog.exec() == QDialog::Accepted) compareRuns(a->currentData().toLongLong(), b->currentData().toLongLong());
}

void MainWindow::compareRuns(qint64 a, qint64 b) {
  if (!compareWindow_) {
    compareWindow_ = new QWidget(this, Qt::Window);
    compareWindow_->resize(1300, 950);
    compareView_ = new views::RunCompareView(compareWindow_);
    auto* l = new QVBoxLayout(compareWindow_);
    l->setContentsMargins(0, 0, 0, 0);
    l->addWidget(compareView_);
  }
  compareWindow_->setWindowTitle(QString("Kiln — run %1 vs run %2").arg(a).arg(b));
  compareWindow_->show();
  compareWindow_->raise();
  const uint64_t request = ++compareRequest_;
  comparePending_ = true;
  ++pendingReads_;
  auto* watcher = new QFutureWatcher<ComparePair>(this);
  connect(watcher, &QFutureWatcher<ComparePair>::finished, this, [this, watcher, request] {
    watcher->deleteLater();
    pendingReads_ = std::max(0, pendingReads_ - 1);
    if (request != compareRequest_) return;
    comparePending_ = false;
    const ComparePair p = watcher->result();
    if (!p.error.isEmpty()) return showError(p.error);
    compareView_->setRuns(p.a, p.b, p.sameModel);
  });
  watcher->setFuture(QtConcurrent::run(views::workerPool(), [db = historyPath_.toStdString(), a, b,
                                                              ca = session_->compiledModel(a),
                                        cb = session_->compiledModel(b)] {
    ComparePair p;
    RunInfo ia, ib;
    p.a = loadSide(db, a, ca, ia);
    p.b = loadSide(db, b, cb, ib);
    p.sameModel = ia.modelPath == ib.modelPath;
    // The options that tell these two apart (not the whole history's differences).
    std::vector<RunInfo> pair{ia, ib};
    summariseOptions(pair);
    p.a.title = sideTitle(pair[0]);
    p.b.title = sideTitle(pair[1]);
    return p;
  }));
}

}  // namespace kiln::app
