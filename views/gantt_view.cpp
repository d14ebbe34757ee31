#include "gantt_view.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QHeaderView>
#include <QStackedWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <set>

#include "chart_pages.h"
#include "gantt_plot.h"
#include "report/measured_timeline.h"
#include "view_colors.h"

namespace kiln::views {

namespace {

// The legend as rich text: a coloured square per unit, then what the tints and outlines mean.
QString legend(const QPalette& pal) {
  QString s;
  for (const char* unit : {"cube", "vector", "aicpu", "dma", "stream"}) {
    const QString name = QString(unit) == "stream" ? "events" : QString(unit) == "aicpu" ? "AI CPU" : QString(unit);
    s += QString("<span style='color:%1'>■</span> %2 &nbsp;").arg(unitColor(unit).name(), name);
  }
  s += QString("<span style='color:%1'>■</span> lighter: memory-bound &nbsp;")
           .arg(towardsBase(unitColor("cube"), pal, 0.45).name());
  s += QString("<span style='color:%1'>□</span> critical path").arg(criticalColor().name());
  return s;
}

}  // namespace

GanttView::GanttView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  pages_ = new ChartPages("Open a model to see its simulated timeline.", "Show the whole run (F)", this);
  layout->addWidget(pages_);
  QWidget* chartPage = pages_->chartPage();
  byUnit_ = new QCheckBox("Lanes per unit", chartPage);
  byUnit_->setToolTip("One lane per compute unit (Cube, Vector, AI CPU, DMA) instead of one per stream");
  pages_->addControl(byUnit_);
  auto* key = new QLabel(legend(palette()), chartPage);
  pages_->body()->addWidget(key);
  plot_ = new GanttPlot(chartPage);
  pages_->body()->addWidget(plot_, 1);
  mismatch_ = new QTableWidget(0, 6, chartPage);
  mismatch_->setHorizontalHeaderLabels(
      {"op", "type", "measured µs / task", "tasks", "simulated µs", "simulated / measured"});
  mismatch_->setToolTip("Per node: the measured time per task beside the simulated time of its kernels, worst "
                        "mismatch first. Click a row to select the node.");
  mismatch_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  mismatch_->setSelectionBehavior(QAbstractItemView::SelectRows);
  mismatch_->verticalHeader()->hide();
  mismatch_->horizontalHeader()->setStretchLastSection(true);
  mismatch_->setMaximumHeight(160);
  mismatch_->hide();
  pages_->body()->addWidget(mismatch_);
  connect(mismatch_, &QTableWidget::cellClicked, this, [this](int row, int) {
    if (const QTableWidgetItem* item = mismatch_->item(row, 0)) {
      const qint64 node = item->data(Qt::UserRole).toLongLong();
      if (node) emit nodeSelected(node);
    }
  });

  connect(byUnit_, &QCheckBox::toggled, plot_, &GanttPlot::setLanesByUnit);
  connect(pages_->fitButton(), &QPushButton::clicked, plot_, &GanttPlot::fit);
  connect(plot_, &GanttPlot::taskClicked, this, [this](int, qint64 node) {
    if (node) emit nodeSelected(node);
  });
}

void GanttView::fillMismatches(const TimelineChart& chart) {
  const std::vector<MeasuredOpTimes> ops = chart.measuredTasks > 0 ? measuredBesideSimulated(chart)
                                                                   : std::vector<MeasuredOpTimes>{};
  mismatch_->setRowCount(0);
  mismatch_->setVisible(!ops.empty());
  constexpr size_t kRows = 200;  // the worst; the rest are closer
  mismatch_->setRowCount(int(std::min(ops.size(), kRows)));
  for (size_t i = 0; i < ops.size() && i < kRows; ++i) {
    const MeasuredOpTimes& o = ops[i];
    auto* name = new QTableWidgetItem(QString::fromStdString(o.name));
    name->setData(Qt::UserRole, static_cast<qlonglong>(o.nodeId));
    mismatch_->setItem(int(i), 0, name);
    mismatch_->setItem(int(i), 1, new QTableWidgetItem(QString::fromStdString(o.opType)));
    mismatch_->setItem(int(i), 2, new QTableWidgetItem(QString::number(o.measuredUs, 'f', 2)));
    mismatch_->setItem(int(i), 3, new QTableWidgetItem(QString::number(o.measuredTasks)));
    mismatch_->setItem(int(i), 4, new QTableWidgetItem(o.simulated ? QString::number(o.simulatedUs, 'f', 2) : "not simulated"));
    mismatch_->setItem(int(i), 5, new QTableWidgetItem(o.simulated ? QString("%1×").arg(o.ratio, 0, 'f', 2) : "—"));
  }
  mismatch_->resizeColumnsToContents();
}

const TimelineChart* GanttView::chart() const { return plot_->chart(); }

int GanttView::taskCount() const { return chart() ? int(chart()->tasks.size()) : 0; }

bool GanttView::showsChart() const { return pages_->showsChart(); }

QString GanttView::message() const { return pages_->message(); }

void GanttView::showMessage(const QString& text) {
  plot_->setChart(nullptr);
  pages_->showMessage(text);
}

void GanttView::setChart(std::shared_ptr<const TimelineChart> chart) {
  if (!chart || chart->tasks.empty()) {
    showMessage("This run has no device tasks to simulate.");
    mismatch_->hide();
    return;
  }
  std::set<int> streams;
  int kernels = 0, critical = 0, simulatedTasks = 0;
  for (const TimelineChartTask& t : chart->tasks) {
    if (t.measured) continue;
    ++simulatedTasks;
    streams.insert(t.stream);
    kernels += t.type == "KERNEL" || t.type == "KERNEL_EX";
    critical += t.critical;
  }
  QString text;
  if (simulatedTasks > 0)
    text = QString("latency <b>%1 µs</b> · %L2 tasks (%L3 kernels) on %4 · %L5 on the critical path · %6")
               .arg(chart->latencyUs, 0, 'f', 1)
               .arg(simulatedTasks)
               .arg(kernels)
               .arg(streams.size() == 1 ? QString("1 stream") : QString("%1 streams").arg(streams.size()))
               .arg(critical)
               .arg(QString::fromStdString(chart->source).toHtmlEscaped());
  else
    text = QString("measured span <b>%1 µs</b>").arg(chart->measuredSpanUs, 0, 'f', 1);
  if (chart->droppedRows > 0) text += QString(" · %L1 malformed rows skipped").arg(chart->droppedRows);
  if (chart->measuredTasks > 0) {
    text += QString("%1measured: %L2 tasks from %3 · device busy %4 µs")
                .arg(simulatedTasks > 0 ? "<br>" : " · ")
                .arg(chart->measuredTasks)
                .arg(QString::fromStdString(chart->measuredSource).toHtmlEscaped())
                .arg(chart->measuredBusyUs, 0, 'f', 1);
    if (const std::string note = hostGapNote(*chart); !note.empty())
      text += " · <b>" + QString::fromStdString(note).toHtmlEscaped() + "</b>";
  }
  fillMismatches(*chart);
  plot_->setChart(std::move(chart));
  pages_->showChart(text);
}

void GanttView::setLanesByUnit(bool on) { byUnit_->setChecked(on); }

void GanttView::selectNode(qint64 nodeId) { plot_->selectNode(nodeId); }

}  // namespace kiln::views
