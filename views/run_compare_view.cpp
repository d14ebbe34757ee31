#include "run_compare_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "gantt_plot.h"
#include "gantt_view.h"
#include "graph_canvas.h"
#include "layout/node_match.h"
#include "memory_plot.h"
#include "memory_view.h"
#include "util/units.h"
#include "view_colors.h"

namespace kiln::views {

QString metricText(const std::string& unit, double v) {
  if (!std::isfinite(v)) return "∞";
  if (unit == "bytes") return (v < 0 ? "−" : "") + QString::fromStdString(formatBytes(std::fabs(v)));
  if (unit == "us") return (v < 0 ? "−" : "") + QString::fromStdString(formatDuration(std::fabs(v) / 1e6));
  if (unit == "ms") return (v < 0 ? "−" : "") + QString::fromStdString(formatDuration(std::fabs(v) / 1e3));
  if (unit == "ratio") return QString::number(100 * v, 'f', 1) + "%";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return QString::number(static_cast<qint64>(v));
  return QString::number(v, 'g', 3);
}

namespace {

QLabel* sideTitle(QWidget* parent) {
  auto* l = new QLabel(parent);
  l->setTextInteractionFlags(Qt::TextSelectableByMouse);
  l->setContentsMargins(6, 2, 6, 2);
  QFont f = l->font();
  f.setBold(true);
  l->setFont(f);
  return l;
}

QWidget* titled(QLabel* title, QWidget* body, QWidget* parent) {
  auto* w = new QWidget(parent);
  auto* l = new QVBoxLayout(w);
  l->setContentsMargins(0, 0, 0, 0);
  l->setSpacing(0);
  l->addWidget(title);
  l->addWidget(body, 1);
  return w;
}

}  // namespace

RunCompareView::RunCompareView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* split = new QSplitter(Qt::Vertical, this);
  layout->addWidget(split);

  table_ = new QTableWidget(0, 4, split);
  table_->setHorizontalHeaderLabels({"metric", "A", "B", "B − A"});
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);  // many rows in view

  auto* graphs = new QSplitter(Qt::Horizontal, split);
  titleA_ = sideTitle(this);
  titleB_ = sideTitle(this);
  canvasA_ = new GraphCanvas(this);
  canvasB_ = new GraphCanvas(this);
  graphs->addWidget(titled(titleA_, canvasA_, graphs));
  graphs->addWidget(titled(titleB_, canvasB_, graphs));

  auto* charts = new QTabWidget(split);
  auto* memory = new QSplitter(Qt::Vertical, charts);
  memoryA_ = new MemoryView(memory);
  memoryB_ = new MemoryView(memory);
  memory->addWidget(memoryA_);
  memory->addWidget(memoryB_);
  auto* timeline = new QSplitter(Qt::Vertical, charts);
  ganttA_ = new GanttView(timeline);
  ganttB_ = new GanttView(timeline);
  timeline->addWidget(ganttA_);
  timeline->addWidget(ganttB_);
  charts->addTab(memory, "Memory (A above, B below, one byte scale)");
  charts->addTab(timeline, "Timeline (A above, B below, one time scale)");
  split->addWidget(table_);
  split->addWidget(graphs);
  split->addWidget(charts);
  split->setSizes({300, 330, 320});

  // Synced viewports and selection; the timelines share their visible window.
  auto syncView = [this](GraphCanvas* from, GraphCanvas* to) {
    if (syncing_) return;
    syncing_ = true;
    to->syncTo(from);
    syncing_ = false;
  };
  connect(canvasA_, &GraphCanvas::viewportMoved, this, [this, syncView] { syncView(canvasA_, canvasB_); });
  connect(canvasB_, &GraphCanvas::viewportMoved, this, [this, syncView] { syncView(canvasB_, canvasA_); });
  connect(canvasA_, &GraphCanvas::nodeSelected, this, [this](qint64 id) { selectOn(0, id); });
  connect(canvasB_, &GraphCanvas::nodeSelected, this, [this](qint64 id) { selectOn(1, id); });
  connect(memoryA_, &MemoryView::nodeSelected, this, [this](qint64 id) { canvasA_->revealNode(id); });
  connect(memoryB_, &MemoryView::nodeSelected, this, [this](qint64 id) { canvasB_->revealNode(id); });
  connect(ganttA_, &GanttView::nodeSelected, this, [this](qint64 id) { canvasA_->revealNode(id); });
  connect(ganttB_, &GanttView::nodeSelected, this, [this](qint64 id) { canvasB_->revealNode(id); });
  connect(ganttA_->plot(), &GanttPlot::timeWindowChanged, ganttB_->plot(), &GanttPlot::setTimeWindow);
  connect(ganttB_->plot(), &GanttPlot::timeWindowChanged, ganttA_->plot(), &GanttPlot::setTimeWindow);
}

void RunCompareView::setRuns(const CompareSide& a, const CompareSide& b, bool sameModel) {
  sameModel_ = sameModel;
  titleA_->setText("A: " + a.title);
  titleB_->setText("B: " + b.title);
  rows_.clear();
  if (a.charts.hasMetrics && b.charts.hasMetrics) rows_ = compareRunMetrics(a.charts.metrics, b.charts.metrics);
  table_->setRowCount(static_cast<int>(rows_.size()));
  for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
    const MetricComparison& m = rows_[size_t(r)];
    auto cell = [&](int c, const QString& text) {
      auto* item = new QTableWidgetItem(text);
      if (c > 0) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table_->setItem(r, c, item);
      return item;
    };
    cell(0, QString::fromStdString(m.metric));
    cell(1, m.a ? metricText(m.unit, *m.a) : "—");
    cell(2, m.b ? metricText(m.unit, *m.b) : "—");
    const auto d = m.delta();
    QString text = !d ? "—" : *d == 0 ? "=" : (*d > 0 ? "+" : "") + metricText(m.unit, *d);
    if (d && *d != 0 && m.a && *m.a != 0 && std::isfinite(*d / *m.a))
      text += QString("  (%1%2%)").arg(*d > 0 ? "+" : "").arg(100 * *d / std::fabs(*m.a), 0, 'f', 1);
    QTableWidgetItem* delta = cell(3, text);
    if (m.verdict() != 0) delta->setForeground(m.verdict() < 0 ? betterColor() : worseColor());
  }
  if (rows_.empty()) {
    table_->setRowCount(1);
    table_->setItem(0, 0, new QTableWidgetItem(QString::fromStdString(
                              !a.charts.hasMetrics ? "A has no numbers: " + a.charts.memoryMessage
                                                   : "B has no numbers: " + b.charts.memoryMessage)));
  }
  table_->resizeColumnsToContents();

  for (const auto& [side, canvas] : {std::pair{&a, canvasA_}, std::pair{&b, canvasB_}})
    if (side->view) canvas->setPassView(side->view);
  // One byte scale for the memory plans, one time scale for the timelines.
  const auto arena = [](const RunCharts& c) {
    return c.memory ? double(std::max(c.memory->arenaBytes, c.memory->lowerBound)) : 0.0;
  };
  const auto latency = [](const RunCharts& c) { return c.timeline ? c.timeline->latencyUs : 0.0; };
  const double bytes = std::max(arena(a.charts), arena(b.charts));
  const double us = std::max(latency(a.charts), latency(b.charts));
  for (const auto& [side, view] : {std::pair{&a, memoryA_}, std::pair{&b, memoryB_}}) {
    if (side->charts.memory) {
      view->setChart(side->charts.memory);
      view->plot()->setByteExtentAtLeast(bytes);
    } else {
      view->showMessage(QString::fromStdString(side->charts.memoryMessage));
    }
  }
  for (const auto& [side, view] : {std::pair{&a, ganttA_}, std::pair{&b, ganttB_}}) {
    if (side->charts.timeline) {
      view->setChart(side->charts.timeline);
      view->plot()->setTimeExtentAtLeast(us);
    } else {
      view->showMessage(QString::fromStdString(side->charts.timelineMessage));
    }
  }
}

int RunCompareView::rowOf(const QString& metric) const {
  for (size_t r = 0; r < rows_.size(); ++r)
    if (QString::fromStdString(rows_[r].metric) == metric) return static_cast<int>(r);
  return -1;
}

void RunCompareView::selectOn(int side, qint64 nodeId) {
  (side == 0 ? memoryA_ : memoryB_)->selectNode(nodeId);
  (side == 0 ? ganttA_ : ganttB_)->selectNode(nodeId);
  if (syncing_ || !nodeId) return;
  GraphCanvas* from = canvas(side);
  GraphCanvas* to = canvas(1 - side);
  if (!from->passView() || !to->passView()) return;
  const int64_t match = layout::matchNode(*from->passView(), nodeId, *to->passView(), sameModel_);
  if (!match) return;
  syncing_ = true;
  to->revealNode(match);
  (side == 0 ? memoryB_ : memoryA_)->selectNode(match);
  (side == 0 ? ganttB_ : ganttA_)->selectNode(match);
  syncing_ = false;
}

}  // namespace kiln::views
