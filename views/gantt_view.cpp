#include "gantt_view.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <set>

#include "chart_pages.h"
#include "gantt_plot.h"
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

  connect(byUnit_, &QCheckBox::toggled, plot_, &GanttPlot::setLanesByUnit);
  connect(pages_->fitButton(), &QPushButton::clicked, plot_, &GanttPlot::fit);
  connect(plot_, &GanttPlot::taskClicked, this, [this](int, qint64 node) {
    if (node) emit nodeSelected(node);
  });
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
    return;
  }
  std::set<int> streams;
  int kernels = 0, critical = 0;
  for (const TimelineChartTask& t : chart->tasks) {
    streams.insert(t.stream);
    kernels += t.type == "KERNEL" || t.type == "KERNEL_EX";
    critical += t.critical;
  }
  QString text = QString("latency <b>%1 µs</b> · %L2 tasks (%L3 kernels) on %4 · %L5 on the critical path · %6")
                     .arg(chart->latencyUs, 0, 'f', 1)
                     .arg(chart->tasks.size())
                     .arg(kernels)
                     .arg(streams.size() == 1 ? QString("1 stream") : QString("%1 streams").arg(streams.size()))
                     .arg(critical)
                     .arg(QString::fromStdString(chart->source).toHtmlEscaped());
  if (chart->droppedRows > 0) text += QString(" · %L1 malformed rows skipped").arg(chart->droppedRows);
  plot_->setChart(std::move(chart));
  pages_->showChart(text);
}

void GanttView::setLanesByUnit(bool on) { byUnit_->setChecked(on); }

void GanttView::selectNode(qint64 nodeId) { plot_->selectNode(nodeId); }

}  // namespace kiln::views
