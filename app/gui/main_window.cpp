#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QScrollBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTimer>
#include <QTime>
#include <QToolBar>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <utility>

#include "compile_session.h"
#include "io/model_path.h"
#include "fused_subgraph_view.h"
#include "gantt_view.h"
#include "graph_canvas.h"
#include "history/ge_dump_import.h"
#include "history/measured_import.h"
#include "io/msprof/msprof_profile.h"
#include "history/history_db.h"
#include "history/history_emulation.h"
#include "history/history_reader.h"
#include "history_watcher.h"
#include "inspector.h"
#include "layout/fused_subgraph.h"
#include "memory_view.h"
#include "options_form.h"
#include "pass_navigator.h"
#include "ir/model.h"
#include "shape_sweep_view.h"
#include "highlight_rules_dialog.h"
#include "report/run_charts.h"
#include "util/load_error.h"
#include "util/units.h"
#include "worker_pool.h"

namespace kiln::app {

namespace {

constexpr int kRunRole = Qt::UserRole + 1;
constexpr int kMaxRecent = 10;

bool isHistoryFile(const QString& path) {
  const QString s = QFileInfo(path).suffix().toLower();
  return s == "db" || s == "sqlite" || s == "sqlite3";
}

// History reads run on the pool with their own read-only connection (SQLite handles are per thread here).
struct RunData {
  std::vector<PassInfo> passes;
  std::vector<PassAccuracyRow> accuracy;  // when the run's numerics were verified
  RunInfo info;
  std::string error;
};

struct ViewData {
  std::shared_ptr<const layout::PassView> view;
  std::string error;
};

ViewData readPassView(const std::string& db, int64_t run, int to, int from) {
  ViewData out;
  try {
    HistoryDb h(db, HistoryDb::Mode::ReadOnly);
    HistoryReader r(h);
    out.view = std::make_shared<const layout::PassView>(layout::buildPassView(r, run, to, from));
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("Kiln");
  setAcceptDrops(true);
  setObjectName("KilnMainWindow");
  session_ = new views::CompileSession(this);
  historyPath_ = session_->historyPath();
  // Runs another process records into the history shown (a kiln batch) join the run list as they are written.
  historyWatcher_ = new views::HistoryWatcher(this);
  historyWatcher_->setPath(historyPath_);
  connect(historyWatcher_, &views::HistoryWatcher::changed, this, &MainWindow::refreshRuns);

  split_ = new QSplitter(Qt::Horizontal, this);
  comparePanel_ = new QWidget(split_);
  auto* cl = new QVBoxLayout(comparePanel_);
  cl->setContentsMargins(0, 0, 0, 0);
  auto* ch = new QHBoxLayout;
  ch->addWidget(new QLabel("Compare with:", comparePanel_));
  compareWith_ = new QComboBox(comparePanel_);
  ch->addWidget(compareWith_, 1);
  cl->addLayout(ch);
  compareCanvas_ = new views::GraphCanvas(comparePanel_);
  cl->addWidget(compareCanvas_, 1);
  comparePanel_->hide();
  auto* mainPanel = new QWidget(split_);
  auto* ml = new QVBoxLayout(mainPanel);
  ml->setContentsMargins(0, 0, 0, 0);
  graphLabel_ = new QLabel("Open a model (File → Open, or drop it here)", mainPanel);
  graphLabel_->setContentsMargins(6, 3, 6, 3);
  // Wraps rather than widening the centre: an unwrapped label's width is its minimum, which squeezed the docks.
  graphLabel_->setWordWrap(true);
  ml->addWidget(graphLabel_);
  canvas_ = new views::GraphCanvas(mainPanel);
  ml->addWidget(canvas_, 1);
  split_->addWidget(comparePanel_);
  split_->addWidget(mainPanel);
  setCentralWidget(split_);

  buildDocks();
  buildActions();

  statusLabel_ = new QLabel(this);
  progress_ = new QProgressBar(this);
  progress_->setMaximumWidth(220);
  progress_->hide();
  cancel_ = new QPushButton("Cancel", this);
  cancel_->hide();
  statusBar()->addWidget(statusLabel_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);
  connect(cancel_, &QPushButton::clicked, session_, &views::CompileSession::cancel);

  connect(session_, &views::CompileSession::progress, this, [this](int done, int total, const QString& name) {
    progress_->setRange(0, total);
    progress_->setValue(done);
    statusLabel_->setText(QString("Compiling: %1 (%2 of %3)").arg(name).arg(done).arg(total));
  });
  connect(session_, &views::CompileSession::finished, this, [this](qint64 run, bool ok, const QString& message) {
    clearBusy(message);
    log(message);
    if (!ok) showError(message);
    refreshRuns();
    showRun(run);
  });
  connect(session_, &views::CompileSession::failed, this, [this](const QString& message) {
    clearBusy("Could not compile");
    showError(message);
  });
  connect(navigator_, &views::PassNavigator::passSelected, this, &MainWindow::showPass);
  connect(canvas_, &views::GraphCanvas::nodeSelected, this, [this](qint64 id) {
    if (canvas_->passView() && id) inspector_->showNode(*canvas_->passView(), id);
    memoryView_->selectNode(id);
    ganttView_->selectNode(id);
  });
  connect(memoryView_, &views::MemoryView::nodeSelected, this, &MainWindow::selectChartNode);
  connect(ganttView_, &views::GanttView::nodeSelected, this, &MainWindow::selectChartNode);
  // Layouts are not counted in pendingReads_: a newer request supersedes an older one, whose end is never reported;
  // busy() asks the canvas instead.
  connect(canvas_, &views::GraphCanvas::layoutStarted, this, [this] { setBusy("Laying out…", false); });
  connect(canvas_, &views::GraphCanvas::layoutFinished, this, [this](double ms, int items) {
    // The run's outcome stays in the status bar; layout timings go to the log.
    clearBusy(QString());
    log(QString("layout: %L1 items in %2 ms").arg(items).arg(ms, 0, 'f', 0));
    if (!matches_.isEmpty()) canvas_->setMatches(matches_);
  });
  connect(canvas_, &views::GraphCanvas::layoutFailed, this, [this](const QString& m) {
    clearBusy("Layout failed");
    showError(m);
  });
  connect(inspector_, &views::Inspector::nodeLinkActivated, canvas_, &views::GraphCanvas::revealNode);
  // Fusions: double-click a fused node (or its inspector row) to see what it replaced; from an absorbed node, go to
  // the fused node that holds it.
  connect(canvas_, &views::GraphCanvas::nodeActivated, this, [this](qint64 id) { expandFusion(id); });
  connect(inspector_, &views::Inspector::fusionExpandRequested, this,
          [this](qint64 fused, qint64 original) { expandFusion(fused, original); });
  connect(inspector_, &views::Inspector::absorberActivated, this, &MainWindow::goToNode);
  connect(fusedView_, &views::FusedSubgraphView::fusedNodeRequested, this, &MainWindow::goToNode);
  connect(fusedView_, &views::FusedSubgraphView::nodeSelected, this, [this](qint64 id) {
    if (const auto v = fusedView_->canvas()->passView(); v && id) inspector_->showNode(*v, id);
  });
  connect(runs_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
    showRun(item->data(kRunRole).toLongLong());
  });
  connect(runs_, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
    showRun(item->data(kRunRole).toLongLong());
  });
  connect(optionsForm_, &views::OptionsForm::rerunRequested, this, &MainWindow::rerun);
  // Synced viewports in compare mode: whichever moves, the other follows.
  connect(canvas_, &views::GraphCanvas::viewportMoved, this, [this] {
    if (syncing_ || !comparePanel_->isVisible()) return;
    syncing_ = true;
    compareCanvas_->syncTo(canvas_);
    syncing_ = false;
  });
  connect(compareCanvas_, &views::GraphCanvas::viewportMoved, this, [this] {
    if (syncing_) return;
    syncing_ = true;
    canvas_->syncTo(compareCanvas_);
    syncing_ = false;
  });
  connect(compareWith_, &QComboBox::currentIndexChanged, this, [this] { loadCompareView(); });

  QSettings settings;
  try {
    highlightRules_ = layout::rulesFromJson(Json::parse(settings.value("canvas/highlightRules").toString().toStdString(), 8));
  } catch (const std::exception&) {
    highlightRules_.clear();  // none saved, or a settings file edited by hand: no rules
  }
  canvas_->setHighlightRules(highlightRules_);
  restoreGeometry(settings.value("window/geometry").toByteArray());
  defaultDockSizes_ = !restoreState(settings.value("window/state").toByteArray());
  if (!settings.contains("window/geometry")) resize(1400, 900);
  rebuildRecentMenu();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildDocks() {
  auto dock = [this](const QString& title, const QString& name, QWidget* w, Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, this);
    d->setObjectName(name);  // saveState needs names
    d->setWidget(w);
    addDockWidget(area, d);
    return d;
  };
  navigator_ = new views::PassNavigator(this);
  dock("Passes", "passesDock", navigator_, Qt::LeftDockWidgetArea);
  runs_ = new QListWidget(this);
  dock("Runs", "runsDock", runs_, Qt::LeftDockWidgetArea);
  inspector_ = new views::Inspector(this);
  auto* inspectorDock = dock("Inspector", "inspectorDock", inspector_, Qt::RightDockWidgetArea);
  optionsForm_ = new views::OptionsForm(this);
  // Scrolled, so the form's width does not set the right docks' minimum (it took a third of the window).
  auto* optionsScroll = new QScrollArea(this);
  optionsScroll->setWidget(optionsForm_);
  optionsScroll->setWidgetResizable(true);
  optionsScroll->setFrameShape(QFrame::NoFrame);
  auto* optionsDock = dock("Options", "optionsDock", optionsScroll, Qt::RightDockWidgetArea);
  tabifyDockWidget(inspectorDock, optionsDock);
  inspectorDock->raise();
  log_ = new QPlainTextEdit(this);
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(5000);
  auto* logDock = dock("Log", "logDock", log_, Qt::BottomDockWidgetArea);
  logDock->hide();
  // The memory plan and the timeline under the graph, so a selection in either shows on the canvas at once.
  memoryView_ = new views::MemoryView(this);
  auto* memoryDock = dock("Memory", "memoryDock", memoryView_, Qt::BottomDockWidgetArea);
  ganttView_ = new views::GanttView(this);
  auto* ganttDock = dock("Timeline", "timelineDock", ganttView_, Qt::BottomDockWidgetArea);
  tabifyDockWidget(memoryDock, ganttDock);
  fusedView_ = new views::FusedSubgraphView(this);
  fusedDock_ = dock("Fused", "fusedDock", fusedView_, Qt::BottomDockWidgetArea);
  tabifyDockWidget(ganttDock, fusedDock_);
  sweepView_ = new views::ShapeSweepView(this);
  sweepDock_ = dock("Shapes", "shapesDock", sweepView_, Qt::BottomDockWidgetArea);
  tabifyDockWidget(fusedDock_, sweepDock_);
  memoryDock->raise();
}

void MainWindow::showEvent(QShowEvent* e) {
  QMainWindow::showEvent(e);
  if (!std::exchange(defaultDockSizes_, false)) return;
  // The graph gets the room: the side and bottom docks start narrow. Sizes set before the window is laid out are
  // lost (the docks took their contents' size hints, a third of the height), so they are set once it is shown;
  // a user's own layout is restored instead.
  QTimer::singleShot(0, this, [this] {
    auto* memoryDock = findChild<QDockWidget*>("memoryDock");
    auto* navigatorDock = findChild<QDockWidget*>("passesDock");
    auto* inspectorDock = findChild<QDockWidget*>("inspectorDock");
    if (!memoryDock || !navigatorDock || !inspectorDock) return;
    resizeDocks({memoryDock}, {height() / 4}, Qt::Vertical);
    // The pass list as wide as its longest pass name (within a third of the window), the inspector as wide as its
    // facts need.
    const int passes = std::min(navigator_->preferredWidth(), width() / 3);
    resizeDocks({navigatorDock, inspectorDock}, {passes, std::min(360, width() / 4)}, Qt::Horizontal);
  });
}

void MainWindow::buildActions() {
  QMenu* file = menuBar()->addMenu("&File");
  QAction* open = file->addAction("&Open…", this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, "Open model or history", QString(),
        "Models and histories (*.onnx *.om *.pbtxt *.txt *.json *.db *.sqlite *.sqlite3);;ONNX models (*.onnx *.pbtxt);;"
        "Ascend files: .om, GE graph dumps, atc --mode=1 JSON (*.om *.txt *.pbtxt *.json);;"
        "Histories (*.db *.sqlite *.sqlite3);;All files (*)");
    if (!path.isEmpty()) openPath(path);
  });
  open->setShortcut(QKeySequence::Open);
  file->addAction("Import GE &Dumps…", this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, "Folder of GE graph dumps (DUMP_GE_GRAPH)");
    if (!dir.isEmpty()) importGeDumps(dir);
  });
  file->addAction("Import Measured &Profile…", this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(
        this, "msprof profile folder (mindstudio_profiler_output, ASCEND_PROFILER_OUTPUT) — beside the run shown");
    if (!dir.isEmpty()) importProfile(dir);
  });
  recentMenu_ = file->addMenu("Open &Recent");
  file->addAction("Use History &Database…", this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, "History database", historyPath_, "Histories (*.db)",
                                                      nullptr, QFileDialog::DontConfirmOverwrite);
    if (!path.isEmpty()) setHistoryPath(path);
  });
  buildExportMenu(file);
  file->addSeparator();
  file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);

  QMenu* view = menuBar()->addMenu("&View");
  view->addAction("Zoom to &Fit", QKeySequence("F"), canvas_, &views::GraphCanvas::zoomToFit);
  view->addAction("&Highlight Rules…", this, [this] {
    views::HighlightRulesDialog dialog(highlightRules_, this);
    if (dialog.exec() != QDialog::Accepted) return;
    setHighlightRules(dialog.rules());
  });
  QAction* flat = view->addAction("F&lat Layout (Whole Graph)");
  flat->setCheckable(true);
  flat->setToolTip("Lay out every node at once instead of by group (long on big graphs; Esc cancels)");
  connect(flat, &QAction::toggled, canvas_, &views::GraphCanvas::setFlat);
  connect(canvas_, &views::GraphCanvas::layoutCancelled, this, [this, flat] {
    const QSignalBlocker block(flat);
    flat->setChecked(canvas_->flat());
    log("layout cancelled");
  });
  QAction* compare = view->addAction("&Compare Passes Side by Side");
  compare->setCheckable(true);
  compare->setShortcut(QKeySequence("Ctrl+D"));
  connect(compare, &QAction::toggled, this, &MainWindow::setCompareEnabled);
  view->addSeparator();
  for (QDockWidget* d : findChildren<QDockWidget*>()) view->addAction(d->toggleViewAction());

  QMenu* run = menuBar()->addMenu("&Run");
  QAction* rerunAct = run->addAction("&Rerun with Current Options", QKeySequence("Ctrl+R"), this, &MainWindow::rerun);
  QAction* cancelAct = run->addAction("&Cancel", QKeySequence(Qt::Key_Escape), this, [this] {
    session_->cancel();
    canvas_->cancelLayout();  // a long (flat) layout too
  });
  verifyAct_ = run->addAction("&Verify Numerics on Each Rerun");
  verifyAct_->setCheckable(true);
  verifyAct_->setToolTip("Run the graph after every pass on seeded random inputs and record its error against the "
                         "original (slower; shown in the pass navigator's error column)");
  run->addAction("Rerun and &Verify Numerics", QKeySequence("Ctrl+Shift+R"), this, [this] {
    verifyAct_->setChecked(true);
    rerun();
  });
  run->addAction("Compare &Runs…", QKeySequence("Ctrl+Shift+D"), this, &MainWindow::askCompareRuns);
  run->addSeparator();
  QAction* prev = run->addAction("&Previous Pass", QKeySequence(Qt::Key_Left), this, [this] { navigator_->step(-1); });
  QAction* next = run->addAction("&Next Pass", QKeySequence(Qt::Key_Right), this, [this] { navigator_->step(1); });

  QMenu* help = menuBar()->addMenu("&Help");
  help->addAction("&About Kiln", this, [this] {
    QMessageBox::about(this, "About Kiln",
                       "Kiln — see what a graph compiler does to a model.\n\nPasses ←/→, search Ctrl+F, "
                       "double-click a group to open it, F to fit.");
  });

  QToolBar* tb = addToolBar("Main");
  tb->setObjectName("mainToolbar");
  tb->addAction(open);
  tb->addAction(rerunAct);
  tb->addAction(cancelAct);
  tb->addSeparator();
  tb->addAction(prev);
  tb->addAction(next);
  tb->addAction(compare);
  tb->addSeparator();
  search_ = new QLineEdit(this);
  search_->setPlaceholderText("Search name, op, attribute (Ctrl+F)");
  search_->setClearButtonEnabled(true);
  search_->setMaximumWidth(320);
  tb->addWidget(search_);
  searchCount_ = new QLabel(this);
  tb->addWidget(searchCount_);
  tb->addSeparator();
  // Overlays: what the nodes' colour says.
  tb->addWidget(new QLabel(" Colour by ", this));
  colourBy_ = new QComboBox(this);
  colourBy_->setSizeAdjustPolicy(QComboBox::AdjustToContents);  // "simulated time", not "simulati"
  colourBy_->setObjectName("colourBy");
  colourBy_->setToolTip("Colour the nodes by a number (a ramp, legend in the corner) or keep the compute unit");
  colourBy_->addItem("default", QString());
  tb->addWidget(colourBy_);
  connect(colourBy_, &QComboBox::currentIndexChanged, this, [this] {
    const QString metric = colourBy_->currentData().toString();
    canvas_->setOverlay(metric);
    QSettings().setValue("canvas/overlay", metric);
  });
  connect(canvas_, &views::GraphCanvas::overlayMetricsChanged, this, [this] {
    // Offer what this graph has data for; keep the user's choice when it is still there (or comes back).
    const QString wanted = QSettings().value("canvas/overlay").toString();
    const QSignalBlocker block(colourBy_);
    colourBy_->clear();
    colourBy_->addItem("default", QString());
    for (const QString& m : canvas_->overlayMetrics()) colourBy_->addItem(m, m);
    const int at = colourBy_->findData(wanted);
    colourBy_->setCurrentIndex(at < 0 ? 0 : at);
    canvas_->setOverlay(colourBy_->currentData().toString());
  });
  auto* focusSearch = new QAction(this);
  focusSearch->setShortcut(QKeySequence::Find);
  connect(focusSearch, &QAction::triggered, this, [this] {
    search_->setFocus();
    search_->selectAll();
  });
  addAction(focusSearch);
  connect(search_, &QLineEdit::returnPressed, this, [this] {
    findNext(search_->text(), QApplication::keyboardModifiers() & Qt::ShiftModifier);
  });
  connect(search_, &QLineEdit::textChanged, this, [this](const QString& t) {
    if (t.isEmpty()) {
      matches_.clear();
      canvas_->setMatches({});
      searchCount_->clear();
    }
  });
}

void MainWindow::setHistoryPath(const QString& path) {
  historyPath_ = path;
  historyWatcher_->setPath(path);
  session_->setHistoryPath(path);
  refreshRuns();
}

bool MainWindow::compiling() const { return session_->running(); }

bool MainWindow::busy() const { return session_->running() || pendingReads_ > 0 || canvas_->layoutPending(); }

// An import into the history in use runs on the worker pool (a big folder takes seconds); then the runs list is
// refreshed and the run it made or filled is shown.
void MainWindow::runImport(const QString& busyText, std::function<ImportOutcome(HistoryDb&)> work) {
  ++pendingReads_;
  setBusy(busyText, false);
  auto* watcher = new QFutureWatcher<ImportOutcome>(this);
  connect(watcher, &QFutureWatcher<ImportOutcome>::finished, this, [this, watcher] {
    watcher->deleteLater();
    pendingReads_ = std::max(0, pendingReads_ - 1);
    const ImportOutcome out = watcher->result();
    if (!out.error.empty()) {
      clearBusy("");
      showError(QString::fromStdString(out.error));
      return;
    }
    for (const std::string& w : out.warnings) log("import: " + QString::fromStdString(w));
    clearBusy(QString::fromStdString(out.message));
    refreshRuns();
    // The run shown already (a profile imported beside it): only its charts change.
    if (out.showRun > 0 && out.showRun == runId_) {
      chartsKey_.clear();  // they are not the charts shown any more
      loadCharts(out.showRun);
    }
    else if (out.showRun > 0) showRun(out.showRun);
  });
  watcher->setFuture(QtConcurrent::run(views::workerPool(), [db = historyPath_.toStdString(), work = std::move(work)] {
    ImportOutcome out;
    try {
      HistoryDb h(db);
      out = work(h);
    } catch (const LoadError& e) {
      out.error = e.describe();
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    return out;
  }));
}

// GE's graph dumps become runs of the history in use, one per compilation the folder records; the last is shown.
void MainWindow::importGeDumps(const QString& folder) {
  runImport("Importing GE dumps…", [dir = folder.toStdString(), name = QFileInfo(folder).fileName().toStdString()](HistoryDb& h) {
    const gedump::ImportResult r = gedump::importDumps({dir}, h);
    ImportOutcome out;
    out.warnings = r.warnings;
    out.message = "Imported " + std::to_string(r.runs.size()) + " compilation(s) from " + name;
    if (!r.runs.empty()) out.showRun = r.runs.back().runId;
    return out;
  });
}

// A measured profile beside the run shown (its tasks matched to that run's nodes), or as a run of its own when none
// is shown; the run is shown with the measured lanes in its Timeline.
void MainWindow::importProfile(const QString& path) {
  const std::optional<int64_t> beside = runId_ > 0 ? std::optional<int64_t>(runId_) : std::nullopt;
  runImport("Importing the measured profile…", [path = path.toStdString(), beside](HistoryDb& h) {
    const msprof::MeasuredProfile p = msprof::readMeasuredProfile(path);
    const MeasuredImportResult r = importMeasuredProfile(h, p, beside);
    ImportOutcome out;
    out.warnings = p.notes;
    out.warnings.insert(out.warnings.end(), r.notes.begin(), r.notes.end());
    out.message = "Imported " + std::to_string(r.tasks) + " measured tasks " +
                  (r.newRun ? "as run " : "beside run ") + std::to_string(r.runId) + " (matched: " +
                  std::to_string(r.byName + r.byOriginalName) + " by name, " + std::to_string(r.byTypeAndShape) +
                  " by type and shape, " + std::to_string(r.unmatched) + " unmatched)";
    out.showRun = r.runId;
    return out;
  });
}

void MainWindow::openPath(const QString& path) {
  if (msprof::isMeasuredProfile(path.toStdString())) {  // a profile folder or its op_summary CSV
    importProfile(path);
    return;
  }
  if (QFileInfo(path).isDir()) {  // a folder of GE graph dumps
    importGeDumps(path);
    return;
  }
  if (!modelPathExists(path.toStdString())) {  // a file, or one model of an .om ("FILE.om#N")
    showError(path + ": no such file");
    return;
  }
  addRecent(path);
  if (isHistoryFile(path)) {
    try {
      // A history written by an older Kiln is upgraded first (the workbench records into it next anyway); the
      // probe then refuses foreign and newer files without writing to them.
      if (const int from = HistoryDb::olderSchemaOf(path.toStdString())) {
        HistoryDb upgrade(path.toStdString());
        statusLabel_->setText(QString("Upgraded %1 from history schema %2 to %3")
                                  .arg(QFileInfo(path).fileName())
                                  .arg(from)
                                  .arg(HistoryDb::kSchemaVersion));
      }
      HistoryDb probe(path.toStdString(), HistoryDb::Mode::ReadOnly);  // refuses foreign files, never writes
      HistoryReader r(probe);
      const auto runs = r.listRuns();
      historyPath_ = path;
      historyWatcher_->setPath(path);
      session_->setHistoryPath(path);
      modelPath_ = runs.empty() ? QString() : QString::fromStdString(runs.back().modelPath);
      refreshRuns();
      if (!runs.empty()) showRun(runs.back().id);
      else showError(path + ": the history holds no runs yet");
    } catch (const std::exception& e) {
      showError(QString::fromUtf8(e.what()));
    }
    return;
  }
  modelPath_ = QFileInfo(path).absoluteFilePath();
  setWindowTitle("Kiln — " + QFileInfo(path).fileName());
  rerun();
}

void MainWindow::setVerifyNumerics(bool on) {
  if (verifyAct_) verifyAct_->setChecked(on);
}

void MainWindow::rerun() {
  if (modelPath_.isEmpty()) {
    showError("Open a model first");
    return;
  }
  if (!session_->start(modelPath_, optionsForm_->options(), verifyAct_ && verifyAct_->isChecked())) {
    statusLabel_->setText("A compile is already running");
    return;
  }
  setBusy("Compiling " + QFileInfo(modelPath_).fileName() + "…", true);
  log("compile " + modelPath_ + " with " + QString::fromStdString(optionsForm_->options().origin()));
}

void MainWindow::refreshRuns() {
  // Called whenever the file changes (HistoryWatcher). Read on a worker: while a compile writes a large history,
  // a read on the UI thread waited 50-120 ms. One read at a time; a change meanwhile reads again after it.
  if (runsReading_) {
    runsStale_ = true;
    return;
  }
  runsReading_ = true;
  ++pendingReads_;
  struct RunList {
    std::vector<RunInfo> runs;
    QString error;
  };
  auto* watcher = new QFutureWatcher<RunList>(this);
  connect(watcher, &QFutureWatcher<RunList>::finished, this, [this, watcher, path = historyPath_] {
    watcher->deleteLater();
    pendingReads_ = std::max(0, pendingReads_ - 1);
    runsReading_ = false;
    clearBusy(QString());  // the last read to finish shows the outcome
    const RunList r = watcher->result();
    if (path == historyPath_) {
      if (!r.error.isEmpty()) log("history: " + r.error);
      else showRunList(r.runs);
    }
    if (std::exchange(runsStale_, false) || path != historyPath_) refreshRuns();
  });
  watcher->setFuture(QtConcurrent::run(views::workerPool(), [path = historyPath_.toStdString()] {
    RunList out;
    try {
      if (!QFileInfo::exists(QString::fromStdString(path))) return out;
      HistoryDb db(path, HistoryDb::Mode::ReadOnly);
      out.runs = HistoryReader(db).listRuns();
    } catch (const std::exception& e) {
      out.error = QString::fromUtf8(e.what());
    }
    return out;
  }));
}

void MainWindow::showRunList(const std::vector<RunInfo>& runs) {
  // The list keeps its place.
  const int scroll = runs_->verticalScrollBar()->value();
  struct KeepScroll {
    QListWidget* list;
    int value;
    ~KeepScroll() { list->verticalScrollBar()->setValue(value); }
  } keep{runs_, scroll};
  runs_->clear();
  // Second line: what tells a run from the others shown with it (the options that differ), not the whole option set
  // cut off at the dock's edge; one run alone shows its headline options. The tooltip has everything.
  size_t shown = 0;
  for (const RunInfo& r : runs) shown += modelPath_.isEmpty() || QString::fromStdString(r.modelPath) == modelPath_;
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    if (!modelPath_.isEmpty() && QString::fromStdString(it->modelPath) != modelPath_) continue;
    const std::string second = shown <= 1               ? it->optionsHeadline
                               : !it->optionsDiff.empty() ? it->optionsDiff
                                                          : "same options as the others";
    auto* item = new QListWidgetItem(QString("run %1 · %2 · %3 → %4 nodes\n%5")
                                         .arg(it->id)
                                         .arg(QString::fromStdString(it->status))
                                         .arg(it->nodesBefore.value_or(0))
                                         .arg(it->nodesAfter.value_or(0))
                                         .arg(QString::fromStdString(second)));
    item->setData(kRunRole, static_cast<qlonglong>(it->id));
    item->setToolTip(QString::fromStdString(it->modelPath + "\nstarted " + it->startedAt + "\n" + it->optionsSummary));
    runs_->addItem(item);
    if (it->id == runId_) {
      runs_->setCurrentItem(item);
      // The run shown was still being written (by a batch, say) and now has ended: show all of it.
      if (shownRunning_ && it->status != "running") {
        shownRunning_ = false;
        QTimer::singleShot(0, this, [this, id = runId_] { showRun(id); });
      }
    }
  }
}

void MainWindow::showRun(qint64 runId) {
  if (runId <= 0) return;
  runId_ = runId;
  readFusions(runId);
  ++pendingReads_;
  setBusy("Reading run…", false);
  auto* watcher = new QFutureWatcher<RunData>(this);
  connect(watcher, &QFutureWatcher<RunData>::finished, this, [this, watcher, runId] {
    watcher->deleteLater();
    pendingReads_ = std::max(0, pendingReads_ - 1);
    const RunData d = watcher->result();
    if (runId != runId_) return;
    if (!d.error.empty()) {
      clearBusy("");
      showError(QString::fromStdString(d.error));
      return;
    }
    clearBusy(QString("Run %1: %2%3")
                  .arg(runId)
                  .arg(QString::fromStdString(d.info.status))
                  .arg(d.info.error.empty() ? QString() : " — " + QString::fromStdString(d.info.error)));
    modelPath_ = QString::fromStdString(d.info.modelPath);
    shownRunning_ = d.info.status == "running";
    setWindowTitle(QString("Kiln — %1 — run %2").arg(QFileInfo(modelPath_).fileName()).arg(runId));
    for (int i = 0; i < runs_->count(); ++i)
      if (runs_->item(i)->data(kRunRole).toLongLong() == runId) runs_->setCurrentItem(runs_->item(i));
    compareWith_->blockSignals(true);
    compareWith_->clear();
    for (const auto& p : d.passes)
      compareWith_->addItem(QString("%1 · %2").arg(p.seq).arg(QString::fromStdString(p.seq ? p.name : "imported graph")), p.seq);
    compareWith_->blockSignals(false);
    passes_ = d.passes;
    navigator_->setPasses(d.passes);
    navigator_->setAccuracy(d.accuracy);
    // The charts (memory plan, timeline) are worked out once the graph is on screen: on two cores, both at once
    // delayed the graph by the charts' time on a 50k-node model.
    chartsAfterView_ = runId;
    if (d.passes.empty()) loadCharts(std::exchange(chartsAfterView_, 0));
    emit runShown(runId);
  });
  watcher->setFuture(QtConcurrent::run(views::workerPool(), [db = historyPath_.toStdString(), runId] {
    RunData out;
    try {
      HistoryDb h(db, HistoryDb::Mode::ReadOnly);
      HistoryReader r(h);
      out.info = r.run(runId);
      out.passes = r.passes(runId);
      out.accuracy = readPassAccuracy(h, runId);
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    return out;
  }));
}

void MainWindow::readFusions(qint64 runId) {
  // Its own read, alongside the run's: finding the fused nodes scans every node row of the run (a quarter of a
  // second at 50k nodes) and the graph need not wait for it.
  fusions_.reset();
  inspector_->setFusions(fusions_);
  ++pendingReads_;
  auto* watcher = new QFutureWatcher<std::shared_ptr<const layout::FusionIndex>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, runId] {
    watcher->deleteLater();
    pendingReads_ = std::max(0, pendingReads_ - 1);
    clearBusy(QString());  // the last read to finish shows the outcome
    if (runId != runId_) return;
    fusions_ = watcher->result();
    inspector_->setFusions(fusions_);
    fusedView_->showMessage(fusions_ && !fusions_->records().empty()
                                ? QString("Run %1 has %2 fused nodes. Double-click one (or its \"fused by\" row in "
                                          "the inspector) to see what it replaced.")
                                      .arg(runId)
                                      .arg(fusions_->records().size())
                                : QString("Run %1 recorded no fusions.").arg(runId));
  });
  watcher->setFuture(QtConcurrent::run(views::workerPool(), [db = historyPath_.toStdString(), runId] {
    try {
      HistoryDb h(db, HistoryDb::Mode::ReadOnly);
      return std::make_shared<const layout::FusionIndex>(layout::readFusions(HistoryReader(h), runId));
    } catch (const std::exception&) {
      return std::shared_ptr<const layout::FusionIndex>();  // the run's own read reports what is wrong with it
    }
  }));
}

void MainWindow::showPass(int seq) {
  pass_ = seq;
  const int prev = navigator_->previousPass(seq);
  const uint64_t request = ++viewRequest_;
  ++pendingReads_;
  setBusy("Reading pass…", false);
  auto* watcher = new QFutureWatcher<ViewData>(this);
  connect(watcher, &QFutureWatcher<ViewData>::finished, this, [this, watcher, request, seq] {
    watcher->deleteLater();
    pendingReads_ = std::max(0, pendingReads_ - 1);
    const ViewData d = watcher->result();
    if (chartsAfterView_) loadCharts(std::exchange(chartsAfterView_, 0));
    if (request != viewRequest_) return;  // the user moved on
    if (!d.error.empty()) {
      clearBusy("");
      showError(QString::fromStdString(d.error));
      return;
    }
    clearBusy("");
    const auto& v = *d.view;
    auto passName = [this](int p) {
      for (const auto& x : passes_)
        if (x.seq == p) return p == 0 ? QString("the imported graph") : QString::fromStdString(x.stage + " / " + x.name);
      return QString("pass %1").arg(p);
    };
    // Body nodes are counted apart: "nodes" stays the main graph's count, as the CLI prints it.
    const QString nodes = QString("%L1 nodes").arg(v.ops) +
                          (v.bodyOps ? QString(" + %L1 in control-flow bodies").arg(v.bodyOps) : QString());
    graphLabel_->setText(v.fromPass >= 0
                             ? QString("After %1  ·  %2  ·  vs %3: +%4 added, −%5 removed, ~%6 changed")
                                   .arg(passName(seq), nodes, passName(v.fromPass))
                                   .arg(v.added)
                                   .arg(v.removed)
                                   .arg(v.changed)
                             : QString("%1  ·  %2").arg(passName(seq), nodes));
    canvas_->setPassView(d.view);
    if (canvas_->selectedNode()) inspector_->showNode(v, canvas_->selectedNode());
    if (const qint64 id = std::exchange(revealAfterPass_, 0); id && v.node(id)) {
      canvas_->revealNode(id);
      inspector_->showNode(v, id);
    }
    if (!lastSearch_.isEmpty()) {
      matches_ = canvas_->search(lastSearch_);
      canvas_->setMatches(matches_);
    }
    if (comparePanel_->isVisible()) loadCompareView();
    emit passShown(seq);
  });
  watcher->setFuture(
      QtConcurrent::run(views::workerPool(), readPassView, historyPath_.toStdString(), runId_, seq, prev));
}

bool MainWindow::expandFusion(qint64 fusedNode, qint64 original) {
  const layout::FusionRecord* f = fusions_ ? fusions_->fusion(fusedNode) : nullptr;
  if (!f) return false;
  fusedDock_->show();
  fusedDock_->raise();
  fusedView_->showMessage(QString("Reading what %1 replaced…").arg(QString::fromStdString(f->name)));
  const uint64_t request = ++fusionRequest_;
  ++pendingReads_;
  auto* watcher = new QFutureWatcher<ViewData>(this);
  connect(watcher, &QFutureWatcher<ViewData>::finished, this, [this, watcher, request, record = *f, original] {
    watcher->deleteLater();
    pendingReads_ = std::max(0, pendingReads_ - 1);
    const ViewData d = watcher->result();
    if (request != fusionRequest_) return;
    if (!d.error.empty()) return fusedView_->showMessage(QString::fromStdString(d.error));
    fusedView_->showFusion(record, d.view, original);
  });
  watcher->setFuture(QtConcurrent::run(views::workerPool(), [db = historyPath_.toStdString(), run = runId_,
                                                              index = fusions_, record = *f] {
    ViewData out;
    try {
      HistoryDb h(db, HistoryDb::Mode::ReadOnly);
      HistoryReader r(h);
      out.view = std::make_shared<const layout::PassView>(layout::buildFusedSubgraphView(r, run, *index, record));
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    return out;
  }));
  return true;
}

void MainWindow::goToNode(qint64 nodeId, int pass) {
  if (pass == pass_) {
    canvas_->revealNode(nodeId);
    if (canvas_->passView()) inspector_->showNode(*canvas_->passView(), nodeId);
    return;
  }
  revealAfterPass_ = nodeId;
  navigator_->selectPass(pass);
}

void MainWindow::setCompareEnabled(bool on) {
  comparePanel_->setVisible(on);
  if (!on) return;
  // Default: the pass before the one shown, which is what the diff overlay compares with.
  const int prev = navigator_->previousPass(pass_);
  const int idx = compareWith_->findData(prev >= 0 ? prev : 0);
  if (idx >= 0 && idx != compareWith_->currentIndex()) compareWith_->setCurrentIndex(idx);
  else loadCompareView();
}

void MainWindow::loadCompareView() {
  if (!comparePanel_->isVisible() || runId_ <= 0 || compareWith_->currentIndex() < 0) return;
  const int seq = compareWith_->currentData().toInt();
  auto* watcher = new QFutureWatcher<ViewData>(this);
  connect(watcher, &QFutureWatcher<ViewData>::finished, this, [this, watcher] {
    watcher->deleteLater();
    const ViewData d = watcher->result();
    if (!d.error.empty()) return showError(QString::fromStdString(d.error));
    compareCanvas_->setPassView(d.view);
  });
  watcher->setFuture(QtConcurrent::run(views::workerPool(), readPassView, historyPath_.toStdString(), runId_, seq, -1));
}

void MainWindow::loadCharts(qint64 runId) {
  // Clicking the run shown again must not rebuild its charts (for a run read from a history, that compiles again).
  const QString key = historyPath_ + "#" + QString::number(runId);
  if (key == chartsKey_) return;
  chartsKey_ = key;
  const uint64_t request = ++chartRequest_;
  ++pendingReads_;
  chartsPending_ = true;
  canvas_->setNodeTiming({});  // the run's own timing comes with its charts
  memoryView_->showMessage("Reading the memory plan of run " + QString::number(runId) + "…");
  ganttView_->showMessage("Simulating the timeline of run " + QString::number(runId) + "…");
  auto* watcher = new QFutureWatcher<RunCharts>(this);
  connect(watcher, &QFutureWatcher<RunCharts>::finished, this, [this, watcher, request, runId] {
    watcher->deleteLater();
    pendingReads_ = std::max(0, pendingReads_ - 1);
    if (request != chartRequest_) return;  // another run was shown meanwhile
    chartsPending_ = false;
    const RunCharts c = watcher->result();
    memoryView_->setReplanSource(c.compiled);
    if (c.memory) memoryView_->setChart(c.memory);
    else memoryView_->showMessage(QString::fromStdString(c.memoryMessage));
    if (c.timeline) ganttView_->setChart(c.timeline);
    else ganttView_->showMessage(QString::fromStdString(c.timelineMessage));
    if (c.recompiled) log(QString("charts: run %1 compiled again from its model file for its memory plan and timeline").arg(runId));
    // The run's headline numbers join its outcome in the status bar.
    const std::string shapes = c.compiled ? c.compiled->binding.shortText() : std::string();
    optionsForm_->setShapeBinding(c.compiled ? QString::fromStdString(c.compiled->binding.text()) : QString());
    if (c.compiled && !c.compiled->precompiled) {  // the Shapes tab sweeps the model behind this run
      QStringList symbols;
      for (const BoundSymbol& b : c.compiled->binding.bound) symbols << QString::fromStdString(b.symbol);
      for (const std::string& k : c.compiled->binding.kept) symbols << QString::fromStdString(k);
      sweepView_->setSource(QString::fromStdString(c.compiled->sourcePath), optionsForm_->options(), symbols);
    }
    if (!shapes.empty()) outcome_ += " · shapes " + QString::fromStdString(shapes);
    if (c.memory && c.memory->planned) outcome_ += " · arena " + QString::fromStdString(formatBytes(double(c.memory->arenaBytes)));
    if (c.timeline && c.timeline->measuredTasks == int(c.timeline->tasks.size()))
      outcome_ += " · measured span " + QString::fromStdString(formatDuration(c.timeline->measuredSpanUs / 1e6));
    else if (c.timeline)
      outcome_ += " · latency " + QString::fromStdString(formatDuration(c.timeline->latencyUs / 1e6)) + " simulated";
    // The simulated time and bytes of every node, for the canvas' overlays.
    auto timing = c.timeline ? nodeTimingOf(*c.timeline) : std::unordered_map<int64_t, layout::NodeTiming>{};
    inspector_->setNodeTiming(timing);
    canvas_->setNodeTiming(std::move(timing));
    if (const qint64 id = canvas_->selectedNode()) {
      memoryView_->selectNode(id);
      ganttView_->selectNode(id);
    }
    clearBusy(QString());
  });
  // The model the session just compiled when this is its run (no second compile), else loadRunCharts compiles again.
  watcher->setFuture(QtConcurrent::run(views::workerPool(), loadRunCharts, historyPath_.toStdString(),
                                       static_cast<int64_t>(runId),
                                       session_->compiledModel(runId)));
}

void MainWindow::setHighlightRules(std::vector<layout::HighlightRule> rules) {
  highlightRules_ = std::move(rules);
  canvas_->setHighlightRules(highlightRules_);
  QSettings().setValue("canvas/highlightRules", QString::fromStdString(layout::rulesToJson(highlightRules_).dump()));
}

void MainWindow::selectChartNode(qint64 nodeId) {
  if (nodeId <= 0) return;
  memoryView_->selectNode(nodeId);
  ganttView_->selectNode(nodeId);
  // The charts show the graph after the last pass: when the canvas shows an earlier pass without this node, show
  // the last pass and select the node once it is there.
  const auto view = canvas_->passView();
  const QList<int> visible = navigator_->visiblePasses();
  if ((!view || !view->node(nodeId)) && !visible.isEmpty() && pass_ != visible.back()) {
    revealAfterPass_ = nodeId;
    navigator_->selectPass(visible.back());
    return;
  }
  canvas_->revealNode(nodeId);
  if (view && view->node(nodeId)) inspector_->showNode(*view, nodeId);
}

void MainWindow::findNext(const QString& text, bool backwards) {
  if (text != lastSearch_) {
    lastSearch_ = text;
    matches_ = canvas_->search(text);
    matchIndex_ = -1;
    canvas_->setMatches(matches_);
  }
  if (matches_.isEmpty()) {
    searchCount_->setText(text.isEmpty() ? QString() : " no match ");
    return;
  }
  matchIndex_ = backwards ? (matchIndex_ <= 0 ? static_cast<int>(matches_.size()) - 1 : matchIndex_ - 1)
                          : (matchIndex_ + 1) % static_cast<int>(matches_.size());
  searchCount_->setText(QString(" %1 of %2 ").arg(matchIndex_ + 1).arg(matches_.size()));
  canvas_->revealNode(matches_[matchIndex_]);
  if (canvas_->passView()) inspector_->showNode(*canvas_->passView(), matches_[matchIndex_]);
}

QString MainWindow::statusText() const { return statusLabel_->text(); }

void MainWindow::setBusy(const QString& what, bool cancellable) {
  statusLabel_->setText(what);
  progress_->show();
  if (!session_->running()) progress_->setRange(0, 0);  // indeterminate until passes report
  cancel_->setVisible(cancellable || session_->running());
}

void MainWindow::clearBusy(const QString& message) {
  // The latest outcome ("Run 4: stopped — cancelled before ...") is kept and shown once nothing is pending, so a
  // read or layout finishing later does not wipe it.
  if (!message.isEmpty()) outcome_ = message;
  if (busy()) return;
  progress_->hide();
  cancel_->hide();
  statusLabel_->setText(outcome_);
}

void MainWindow::showError(const QString& message) {
  log("error: " + message);
  outcome_ = message;
  statusLabel_->setText(message);
  emit errorShown(message);
  // Tests and automation run offscreen: a modal box there would block forever.
  if (QGuiApplication::platformName() != "offscreen") QMessageBox::warning(this, "Kiln", message);
}

void MainWindow::log(const QString& line) { log_->appendPlainText(QTime::currentTime().toString("HH:mm:ss  ") + line); }

void MainWindow::addRecent(const QString& path) {
  QSettings s;
  QStringList recent = s.value("recentFiles").toStringList();
  const QString abs = QFileInfo(path).absoluteFilePath();
  recent.removeAll(abs);
  recent.prepend(abs);
  while (recent.size() > kMaxRecent) recent.removeLast();
  s.setValue("recentFiles", recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  const QStringList recent = QSettings().value("recentFiles").toStringList();
  for (const QString& p : recent) recentMenu_->addAction(p, this, [this, p] { openPath(p); });
  recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::closeEvent(QCloseEvent* e) {
  QSettings s;
  s.setValue("window/geometry", saveGeometry());
  s.setValue("window/state", saveState());
  session_->cancel();
  e->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
  for (const QUrl& url : e->mimeData()->urls())
    if (url.isLocalFile()) {
      openPath(url.toLocalFile());
      return;
    }
}

}  // namespace kiln::app
