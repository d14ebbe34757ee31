#include "memory_view.h"

#include <QComboBox>
#include <QFutureWatcher>
#include <QtConcurrent>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPixmap>
#include <QPushButton>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <map>

#include "chart_pages.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "memory/memory_plan.h"
#include "memory_plot.h"
#include "util/units.h"
#include "worker_pool.h"

namespace kiln::views {

namespace {

constexpr int kBlockRole = Qt::UserRole + 1;

QString bytesText(double b) { return QString::fromStdString(formatBytes(b)); }

QIcon swatch(const QColor& c) {
  QPixmap pm(12, 12);
  pm.fill(c);
  return QIcon(pm);
}

// "batch, sequence" (the first few of the named dimensions left in unplanned tensors).
QString symbolList(const MemoryChart& c) {
  QStringList names;
  for (const std::string& s : c.unsizedSymbols) {
    if (names.size() == 4) {
      names << QString("… %L1 more").arg(c.unsizedSymbols.size() - 4);
      break;
    }
    names << QString::fromStdString(s);
  }
  return names.join(", ");
}

// How to give the symbolic dimensions a size: by name when they have names, else by input.
QString bindHint(const MemoryChart& c) {
  if (c.unsizedSymbols.empty())
    return "Bind the input shapes with the input_shape option (name:1,3,224,224) and rerun.";
  QStringList example;
  for (const std::string& s : c.unsizedSymbols) {
    if (example.size() == 2) break;
    example << QString::fromStdString(s) + ":1";
  }
  return QString("Give the named dimensions (%1) a size with the dim_values option, e.g. %2, or bind the inputs with "
                 "input_shape, and rerun.")
      .arg(symbolList(c), example.join(';'));
}

}  // namespace

MemoryView::MemoryView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  pages_ = new ChartPages("Open a model to see its memory plan.", "Show the whole plan (F)", this);
  layout->addWidget(pages_);
  QWidget* chartPage = pages_->chartPage();
  auto* colourLabel = new QLabel("Colour by:", chartPage);
  pages_->addControl(colourLabel);
  colour_ = new QComboBox(chartPage);
  colour_->addItems({"reuse block", "producer op type", "stream"});
  pages_->addControl(colour_);
  pages_->addControl(new QLabel("Plan:", chartPage));
  planner_ = new QComboBox(chartPage);
  planner_->addItem("as compiled", QString());
  for (const std::string& p : memory::plannerNames()) planner_->addItem(QString::fromStdString(p), QString::fromStdString(p));
  planner_->setToolTip("Plan the same tensor lifetimes again with another planner and compare arena and lower bound");
  planner_->setEnabled(false);
  pages_->addControl(planner_);
  auto* split = new QSplitter(Qt::Horizontal, chartPage);
  plot_ = new MemoryPlot(split);
  auto* side = new QWidget(split);
  auto* sl = new QVBoxLayout(side);
  sl->setContentsMargins(0, 0, 0, 0);
  peakTitle_ = new QLabel(side);
  peakTitle_->setWordWrap(true);
  sl->addWidget(peakTitle_);
  peak_ = new QListWidget(side);
  peak_->setUniformItemSizes(true);
  sl->addWidget(peak_, 1);
  split->addWidget(plot_);
  split->addWidget(side);
  split->setStretchFactor(0, 4);
  split->setStretchFactor(1, 1);
  pages_->body()->addWidget(split, 1);

  connect(colour_, &QComboBox::currentIndexChanged, this, [this](int i) {
    plot_->setColourBy(static_cast<MemoryPlot::ColourBy>(i));
    fillPeakList();
  });
  connect(pages_->fitButton(), &QPushButton::clicked, plot_, &MemoryPlot::fit);
  connect(planner_, &QComboBox::currentIndexChanged, this,
          [this] { setPlanner(planner_->currentData().toString()); });
  connect(plot_, &MemoryPlot::blockClicked, this, [this](int, qint64 producer) {
    if (producer) emit nodeSelected(producer);
  });
  connect(peak_, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
    const MemoryChart* c = chart();
    const size_t i = item->data(kBlockRole).toULongLong();
    if (!c || i >= c->blocks.size()) return;
    plot_->selectNode(c->blocks[i].producerId);
    if (c->blocks[i].producerId) emit nodeSelected(c->blocks[i].producerId);
  });
}

const MemoryChart* MemoryView::chart() const { return plot_->chart(); }

int MemoryView::blockCount() const { return chart() ? int(chart()->blocks.size()) : 0; }

bool MemoryView::showsChart() const { return pages_->showsChart(); }

QString MemoryView::message() const { return pages_->message(); }
QString MemoryView::summary() const { return pages_->summary(); }

void MemoryView::showMessage(const QString& text) {
  plot_->setChart(nullptr);
  peak_->clear();
  pages_->showMessage(text);
}

void MemoryView::setReplanSource(std::shared_ptr<const Model> compiled) {
  compiled_ = std::move(compiled);
  planner_->setEnabled(compiled_ != nullptr);
}

void MemoryView::setChart(std::shared_ptr<const MemoryChart> chart) {
  // A new run's chart: its recorded plan, "as compiled" selected again.
  ++replanRequest_;
  replanning_ = false;
  recorded_ = chart;
  planner_->blockSignals(true);
  planner_->setCurrentIndex(0);
  planner_->blockSignals(false);
  showChart(std::move(chart));
}

void MemoryView::setPlanner(const QString& planner) {
  const int index = planner_->findData(planner);
  if (index >= 0 && index != planner_->currentIndex()) {
    planner_->setCurrentIndex(index);  // comes back here through the combo's signal
    return;
  }
  const uint64_t request = ++replanRequest_;
  if (planner.isEmpty() || !compiled_) {
    replanning_ = false;
    showChart(recorded_);
    return;
  }
  replanning_ = true;
  pages_->showChart("Planning the same lifetimes with " + planner + "…");
  auto* watcher = new QFutureWatcher<std::shared_ptr<const MemoryChart>>(this);
  connect(watcher, &QFutureWatcher<std::shared_ptr<const MemoryChart>>::finished, this, [this, watcher, request] {
    watcher->deleteLater();
    if (request != replanRequest_) return;
    replanning_ = false;
    showChart(watcher->result());
  });
  watcher->setFuture(QtConcurrent::run(workerPool(), [model = compiled_, name = planner.toStdString()] {
    return std::make_shared<const MemoryChart>(buildMemoryChart(*model->graph, name));
  }));
}

void MemoryView::showChart(std::shared_ptr<const MemoryChart> chart) {
  if (!chart || !chart->planned) {
    showMessage("This run has no memory plan: its compile stopped before MemoryAssignment.");
    return;
  }
  if (chart->blocks.empty()) {
    showMessage(chart->unsized > 0
                    ? QString("No tensor was planned: %L1 tensors have symbolic shapes (no static size). %2")
                          .arg(chart->unsized)
                          .arg(bindHint(*chart))
                    : QString("The memory plan is empty: every tensor of this model lives outside the arena (inputs, "
                              "outputs, weights)."));
    return;
  }
  const MemoryChart& c = *chart;
  QString text = QString("%L1 tensors in %L2 reuse blocks · arena %3 · lower bound %4 · peak at step %L5 of %L6")
                     .arg(c.blocks.size())
                     .arg(c.reuseBlocks)
                     .arg(bytesText(double(c.arenaBytes)), bytesText(double(c.lowerBound)))
                     .arg(c.peakStep)
                     .arg(c.stepNodes.size());
  if (!c.replannedWith.empty())
    text += QString(" · replanned with %1%2")
                .arg(QString::fromStdString(c.replannedWith))
                .arg(c.planDetail.empty() ? QString() : " (" + QString::fromStdString(c.planDetail) + ")");
  if (c.unplaced > 0) text += QString(" · %L1 tensors without an offset").arg(c.unplaced);
  if (c.unsized > 0) {
    text += QString(" · %L1 with symbolic shapes not planned").arg(c.unsized);
    if (!c.unsizedSymbols.empty()) text += " (" + symbolList(c) + ": set dim_values)";
  }
  plot_->setChart(std::move(chart));
  plot_->setColourBy(static_cast<MemoryPlot::ColourBy>(colour_->currentIndex()));
  fillPeakList();
  pages_->showChart(text);
}

void MemoryView::fillPeakList() {
  peak_->clear();
  const MemoryChart* c = chart();
  if (!c) return;
  std::map<int, int64_t> arenaBlocks;  // an alias shares its input's bytes: count each arena block once
  for (size_t i : c->peakBlocks) {
    const MemoryChartBlock& b = c->blocks[i];
    arenaBlocks[b.arenaBlock] = std::max(arenaBlocks[b.arenaBlock], b.bytes);
    auto* item = new QListWidgetItem(swatch(plot_->blockColour(i)),
                                     QString("%1  ·  %2  ·  %3")
                                         .arg(bytesText(double(b.bytes)), QString::fromStdString(b.producerOp),
                                              QString::fromStdString(b.name)));
    item->setData(kBlockRole, qulonglong(i));
    item->setToolTip(QString::fromStdString(b.name));
    peak_->addItem(item);
  }
  int64_t total = 0;
  for (const auto& entry : arenaBlocks) total += entry.second;
  // The peak counts blocks at their 512-byte-aligned size, the tensors' own bytes are a little less.
  QString sum = bytesText(double(total));
  const QString aligned = bytesText(double(c->lowerBound));
  if (aligned != sum) sum += QString(" (%1 aligned)").arg(aligned);
  peakTitle_->setText(QString("<b>Alive at the peak</b> (step %L1): %L2 tensors, %3")
                          .arg(c->peakStep)
                          .arg(c->peakBlocks.size())
                          .arg(sum));
}

void MemoryView::setColourBy(int index) { colour_->setCurrentIndex(index); }

void MemoryView::selectNode(qint64 nodeId) {
  plot_->selectNode(nodeId);
  const MemoryChart* c = chart();
  for (int row = 0; c && row < peak_->count(); ++row) {
    const size_t i = peak_->item(row)->data(kBlockRole).toULongLong();
    peak_->item(row)->setSelected(nodeId != 0 && i < c->blocks.size() && c->blocks[i].producerId == nodeId);
  }
}

}  // namespace kiln::views
