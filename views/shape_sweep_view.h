#pragma once
// The Shapes tab: arena, lower bound, memory without reuse and simulated latency against one symbol's extent —
// "how much memory at 8k context?". The user picks a symbol of the model (or a dim_policy role) and the extents; the
// model is compiled once per extent on a worker thread (variants/variant_compile, cancellable between compiles and
// passes), with the options the Options dock holds, and drawn by the same chart the batch report and
// `kiln compile --sweep --chart` draw (report/chart_svg), with the numbers in a table below. Sweep compiles are a
// chart, not runs to step through: they are not recorded in the history.
#include <QWidget>
#include <atomic>
#include <memory>

#include "options/options.h"
#include "report/sweep_chart.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace kiln::views {

class SvgChart;

class ShapeSweepView : public QWidget {
  Q_OBJECT
 public:
  explicit ShapeSweepView(QWidget* parent = nullptr);
  ~ShapeSweepView() override;

  // The model to sweep, the options to compile it with, and its symbols ("seq_len") with their roles, offered in
  // the symbol box (which also takes a role name typed in).
  void setSource(const QString& modelPath, const Options& options, const QStringList& symbols);
  void setValues(const QString& commaSeparated);
  void setSymbol(const QString& symbol);
  // Starts the sweep; false (with the reason shown) for a bad symbol or value list.
  bool startSweep();
  void cancel();
  bool running() const { return running_; }
  const SweepChart* chart() const { return chart_.get(); }
  QString status() const;
  QTableWidget* table() const { return table_; }

 signals:
  void finished();

 private:
  void showChart(std::shared_ptr<const SweepChart> chart);

  QComboBox* symbol_;
  QLineEdit* values_;
  QPushButton* run_;
  QPushButton* cancel_;
  QLabel* status_;
  SvgChart* plot_;
  QTableWidget* table_;
  QString modelPath_;
  Options options_;
  std::shared_ptr<std::atomic<bool>> cancelFlag_;
  std::shared_ptr<const SweepChart> chart_;
  bool running_ = false;
  uint64_t request_ = 0;
};

}  // namespace kiln::views
