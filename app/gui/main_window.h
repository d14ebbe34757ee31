#pragma once
// The workbench window: open a model (compiled on a worker thread and recorded in the history) or a history
// database, step through the passes with the diff drawn on the graph, inspect nodes, search, edit options and
// rerun, compare two passes side by side; the run's memory plan and simulated timeline in docks below, their
// selection linked both ways with the canvas and the inspector. Every slow step (load, compile, history reads, layout) runs off the UI
// thread; the status bar shows progress with Cancel.
#include <QMainWindow>
#include <QPointer>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "history/history_reader.h"
#include "layout/node_overlay.h"
#include "layout/pass_view.h"
#include "options/options.h"

class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QComboBox;
class QSplitter;
class QPlainTextEdit;
class QMenu;
class QAction;
class QDockWidget;

namespace kiln::views {
class GraphCanvas;
class PassNavigator;
class Inspector;
class CompileSession;
class OptionsForm;
class MemoryView;
class GanttView;
class FusedSubgraphView;
class ShapeSweepView;
class HistoryWatcher;
class RunCompareView;
}  // namespace kiln::views

namespace kiln::layout {
class FusionIndex;
}

namespace kiln::app {

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens an ONNX model (compiles it with the current options) or a history database (.db / .sqlite).
  void openPath(const QString& path);
  // A folder of GE graph dumps into the history in use (File ▸ Import GE Dumps…, a folder dropped or opened).
  void importGeDumps(const QString& folder);
  // An msprof profile (folder or op_summary CSV) beside the run shown, or as a run of its own (File ▸ Import
  // Measured Profile…, a profile opened or dropped).
  void importProfile(const QString& path);
  void rerun();
  void setHistoryPath(const QString& path);

  // For tests and automation.
  views::GraphCanvas* canvas() const { return canvas_; }
  views::GraphCanvas* compareCanvas() const { return compareCanvas_; }
  views::PassNavigator* navigator() const { return navigator_; }
  views::Inspector* inspector() const { return inspector_; }
  views::OptionsForm* optionsForm() const { return optionsForm_; }
  views::MemoryView* memoryView() const { return memoryView_; }
  views::GanttView* ganttView() const { return ganttView_; }
  views::ShapeSweepView* shapeSweepView() const { return sweepView_; }
  QComboBox* colourByBox() const { return colourBy_; }
  // The canvas' highlight rules, saved with the window's settings.
  void setHighlightRules(std::vector<layout::HighlightRule> rules);
  const std::vector<layout::HighlightRule>& highlightRules() const { return highlightRules_; }
  views::FusedSubgraphView* fusedView() const { return fusedView_; }
  // Shows what fused node `fusedNode` replaced in the Fused panel (selecting `original` there when given); false
  // when the run shown recorded no such fusion.
  bool expandFusion(qint64 fusedNode, qint64 original = 0);
  // Goes to pass `pass` and selects `nodeId` there.
  void goToNode(qint64 nodeId, int pass);
  // File ▸ Export: the whole graph shown (.svg/.png), the run's memory plan (.csv/.json), its timeline as a Chrome
  // trace (.json). Empty on success, else the message (also shown to the user).
  QString exportGraph(const QString& path);
  QString exportMemoryPlan(const QString& path);
  QString exportTimeline(const QString& path);
  // Run ▸ Compare Runs: runs `a` and `b` of the history side by side in their own window (loaded off the UI thread).
  void compareRuns(qint64 a, qint64 b);
  views::RunCompareView* runCompareView() const { return compareView_; }
  QWidget* runCompareWindow() const { return compareWindow_; }
  bool comparePending() const { return comparePending_; }
  bool chartsPending() const { return chartsPending_ || chartsAfterView_ != 0; }
  QListWidget* runList() const { return runs_; }
  qint64 currentRun() const { return runId_; }
  bool busy() const;  // compiling, reading (passes, charts) or laying out
  bool compiling() const;  // the compile itself (busy() also covers what the window reads and lays out after it)
  void setCompareEnabled(bool on);
  // Reruns record each pass's numeric error (Run ▸ Verify Numerics).
  void setVerifyNumerics(bool on);
  void findNext(const QString& text, bool backwards = false);
  QString statusText() const;

 signals:
  void runShown(qint64 runId);
  void passShown(int seq);
  void errorShown(const QString& message);

 protected:
  void closeEvent(QCloseEvent* e) override;
  void showEvent(QShowEvent* e) override;
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;

 private:
  void buildActions();
  void buildExportMenu(QMenu* file);  // main_window_export.cpp
  void askCompareRuns();              // main_window_compare.cpp
  void buildDocks();
  void showRun(qint64 runId);
  void showPass(int seq);
  void loadCompareView();
  void loadCharts(qint64 runId);
  // A node chosen in the memory view or the Gantt chart: selected in both, on the canvas and in the inspector.
  void selectChartNode(qint64 nodeId);
  void refreshRuns();
  // What an import into the history did: the run to show, what to say, warnings, or the error.
  struct ImportOutcome {
    int64_t showRun = 0;
    std::string message, error;
    std::vector<std::string> warnings;
  };
  void runImport(const QString& busyText, std::function<ImportOutcome(HistoryDb&)> work);
  void readFusions(qint64 runId);
  void showRunList(const std::vector<RunInfo>& runs);
  void addRecent(const QString& path);
  void rebuildRecentMenu();
  void setBusy(const QString& what, bool cancellable);
  void clearBusy(const QString& message);
  void showError(const QString& message);
  void log(const QString& line);

  views::GraphCanvas* canvas_ = nullptr;
  views::GraphCanvas* compareCanvas_ = nullptr;
  QWidget* comparePanel_ = nullptr;
  QComboBox* compareWith_ = nullptr;
  views::PassNavigator* navigator_ = nullptr;
  views::Inspector* inspector_ = nullptr;
  views::OptionsForm* optionsForm_ = nullptr;
  views::CompileSession* session_ = nullptr;
  views::MemoryView* memoryView_ = nullptr;
  views::GanttView* ganttView_ = nullptr;
  views::FusedSubgraphView* fusedView_ = nullptr;
  QDockWidget* fusedDock_ = nullptr;
  views::ShapeSweepView* sweepView_ = nullptr;
  QComboBox* colourBy_ = nullptr;
  std::vector<layout::HighlightRule> highlightRules_;
  QDockWidget* sweepDock_ = nullptr;
  std::shared_ptr<const layout::FusionIndex> fusions_;  // of the run shown
  uint64_t fusionRequest_ = 0;  // drops stale subgraph reads
  QWidget* compareWindow_ = nullptr;
  views::RunCompareView* compareView_ = nullptr;
  bool comparePending_ = false;
  uint64_t compareRequest_ = 0;
  QListWidget* runs_ = nullptr;
  QPlainTextEdit* log_ = nullptr;
  QLineEdit* search_ = nullptr;
  QLabel* searchCount_ = nullptr;
  QLabel* statusLabel_ = nullptr;
  QLabel* graphLabel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QAction* verifyAct_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QSplitter* split_ = nullptr;
  views::HistoryWatcher* historyWatcher_ = nullptr;

  std::vector<PassInfo> passes_;  // of the run shown
  QString outcome_;  // what the status bar shows when idle
  QString historyPath_;
  QString modelPath_;  // the model whose runs are listed
  qint64 runId_ = 0;
  bool shownRunning_ = false;  // the run shown was still being written when it was read
  int pass_ = -1;
  uint64_t viewRequest_ = 0;  // drops stale history reads
  int pendingReads_ = 0;
  bool runsReading_ = false, runsStale_ = false;  // the run list's read on a worker (refreshRuns)
  uint64_t chartRequest_ = 0;  // drops stale chart loads
  bool chartsPending_ = false;
  qint64 chartsAfterView_ = 0;  // the run whose charts start when its first pass view arrives
  QString chartsKey_;  // history path and run of the charts shown or loading
  qint64 revealAfterPass_ = 0;  // a chart's node to select once the last pass is shown
  QList<int64_t> matches_;
  int matchIndex_ = -1;
  QString lastSearch_;
  bool syncing_ = false;
  bool defaultDockSizes_ = false;  // no saved layout: the docks get their starting sizes once the window is shown
};

}  // namespace kiln::app
