#include "gantt_view.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <set>

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
  pages_ = new QStackedWidget(this);
  layout->addWidget(pages_);

  message_ = new QLabel("Open a model to see its simulated timeline.", pages_);
  message_->setAlignment(Qt::AlignCenter);
  message_->setWordWrap(true);
  message_->setMargin(24);
  pages_->addWidget(message_);

  auto* chartPage = new QWidget(pages_);
  auto* cl = new QVBoxLayout(chartPage);
  cl->setContentsMargins(4, 4, 4, 4);
  auto* bar = new QHBoxLayout;
  summary_ = new QLabel(chartPage);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  bar->addWidget(summary_, 1);
  byUnit_ = new QCheckBox("Lanes per unit", chartPage);
  byUnit_->setToolTip("One lane per compute unit (Cube, Vector, AI CPU, DMA) instead of one per stream");
  bar->addWidget(byUnit_);
  auto* fit = new QPushButton("Fit", chartPage);
  fit->setToolTip("Show the whole run (F)");
  bar->addWidget(fit);
  cl->addLayout(bar);
  auto* key = new QLabel(legend(palette()), chartPage);
  cl->addWidget(key);
  plot_ = new GanttPlot(chartPage);
  cl->addWidget(plot_, 1);
  pages_->addWidget(chartPage);

  connect(byUnit_, &QCheckBox::toggled, plot_, &GanttPlot::setLanesByUnit);
  connect(fit, &QPushButton::clicked, plot_, &GanttPlot::fit);
  connect(plot_, &GanttPlot::taskClicked, this, [this](int, qint64 node) {
    if (node) emit nodeSelected(node);
  });
}

const TimelineChart* GanttView::chart() const { return plot_->chart(); }

int GanttView::taskCount() const { return chart() ? int(chart()->tasks.size()) : 0; }

bool GanttView::showsChart() const { return pages_->currentIndex() == 1; }

QString GanttView::message() const { return showsChart() ? QString() : message_->text(); }

void GanttView::showMessage(const QString& text) {
  plot_->setChart(nullptr);
  message_->setText(text);
  pages_->setCurrentIndex(0);
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
  summary_->setText(text);
  plot_->setChart(std::move(chart));
  pages_->setCurrentIndex(1);
}

void GanttView::setLanesByUnit(bool on) { byUnit_->setChecked(on); }

void GanttView::selectNode(qint64 nodeId) { plot_->selectNode(nodeId); }

}  // namespace kiln::views
