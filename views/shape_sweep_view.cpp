#include "shape_sweep_view.h"

#include <algorithm>

#include <QComboBox>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPushButton>
#include <QSplitter>
#include <QSvgRenderer>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "io/model_loader.h"
#include "report/chart_svg.h"
#include "util/units.h"
#include "variants/variant_compile.h"
#include "worker_pool.h"

namespace kiln::views {

// The chart as the batch report draws it, scaled into the widget with its aspect ratio kept.
// Drawn again for the widget's shape on resize, so the text keeps its size whatever the dock's proportions.
class SvgChart : public QWidget {
 public:
  explicit SvgChart(QWidget* parent) : QWidget(parent) { setMinimumSize(320, 100); }
  void setChart(std::shared_ptr<const SweepChart> chart) {
    chart_ = std::move(chart);
    reload();
  }

 protected:
  void resizeEvent(QResizeEvent*) override { reload(); }
  void paintEvent(QPaintEvent*) override {
    if (!renderer_.isValid()) return;
    QPainter p(this);
    QSizeF size = renderer_.defaultSize();
    size.scale(QSizeF(width(), height()), Qt::KeepAspectRatio);
    renderer_.render(&p, QRectF(QPointF((width() - size.width()) / 2, 0), size));
  }

 private:
  void reload() {
    if (!chart_) return;
    // The SVG is about 350 units high: as wide as the widget's aspect asks, within what stays legible.
    const double aspect = height() > 0 ? double(width()) / double(height()) : 2.7;
    renderer_.load(QByteArray::fromStdString(sweepChartSvg(*chart_, std::clamp(350.0 * aspect, 480.0, 1800.0))));
    update();
  }
  std::shared_ptr<const SweepChart> chart_;
  QSvgRenderer renderer_;
};

namespace {

struct SweepOutcome {
  std::shared_ptr<const SweepChart> chart;
  QString error;
};

QString qs(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

ShapeSweepView::ShapeSweepView(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  symbol_ = new QComboBox;
  symbol_->setObjectName("sweepSymbol");
  symbol_->setEditable(true);
  symbol_->setMinimumContentsLength(16);
  symbol_->setToolTip(tr("A symbol of the model's inputs, or a dim_policy role (batch, sequence, past_sequence, "
                         "image, audio): every symbol of that role takes the extent"));
  values_ = new QLineEdit("128,512,2048,8192");
  values_->setObjectName("sweepValues");
  values_->setToolTip(tr("The extents to compile at, comma separated"));
  run_ = new QPushButton(tr("Sweep"));
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setEnabled(false);
  status_ = new QLabel(tr("Open a model with symbolic dimensions to sweep one of them."));
  status_->setWordWrap(true);
  bar->addWidget(new QLabel(tr("Symbol")));
  bar->addWidget(symbol_);
  bar->addWidget(new QLabel(tr("extents")));
  bar->addWidget(values_, 1);
  bar->addWidget(run_);
  bar->addWidget(cancel_);
  outer->addLayout(bar);
  outer->addWidget(status_);
  auto* split = new QSplitter(Qt::Horizontal);
  plot_ = new SvgChart(this);
  split->addWidget(plot_);
  table_ = new QTableWidget(0, 8);
  table_->setObjectName("sweepTable");
  table_->setHorizontalHeaderLabels(
      {tr("extent"), tr("arena"), tr("lower bound"), tr("no reuse"), tr("graph I/O"), tr("latency"), tr("nodes"),
       tr("shapes")});
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  outer->addWidget(split, 1);
  connect(run_, &QPushButton::clicked, this, [this] { startSweep(); });
  connect(values_, &QLineEdit::returnPressed, this, [this] { startSweep(); });
  connect(cancel_, &QPushButton::clicked, this, &ShapeSweepView::cancel);
  run_->setEnabled(false);
}

ShapeSweepView::~ShapeSweepView() { cancel(); }

void ShapeSweepView::setSource(const QString& modelPath, const Options& options, const QStringList& symbols) {
  modelPath_ = modelPath;
  options_ = options;
  const QString current = symbol_->currentText();
  symbol_->clear();
  symbol_->addItems(symbols);
  if (symbols.contains(current)) symbol_->setCurrentText(current);
  run_->setEnabled(!modelPath.isEmpty() && !running_);
  if (!running_)
    status_->setText(symbols.isEmpty() ? tr("The model's inputs are static: nothing to sweep (a role name still "
                                            "applies to models that have one).")
                                       : tr("Pick a symbol and the extents, then Sweep."));
}

void ShapeSweepView::setValues(const QString& commaSeparated) { values_->setText(commaSeparated); }
void ShapeSweepView::setSymbol(const QString& symbol) { symbol_->setCurrentText(symbol); }
QString ShapeSweepView::status() const { return status_->text(); }

bool ShapeSweepView::startSweep() {
  if (running_ || modelPath_.isEmpty()) return false;
  const std::string spec = symbol_->currentText().trimmed().toStdString() + "=" + values_->text().remove(' ').toStdString();
  SweepSpec sweep;
  try {
    sweep = parseSweep(spec);
  } catch (const std::exception& e) {
    status_->setText(qs(e.what()));
    return false;
  }
  running_ = true;
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  cancelFlag_ = std::make_shared<std::atomic<bool>>(false);
  status_->setText(tr("Compiling at %1 extents of %2…").arg(sweep.values.size()).arg(qs(sweep.symbol)));
  const uint64_t request = ++request_;
  auto* watcher = new QFutureWatcher<SweepOutcome>(this);
  connect(watcher, &QFutureWatcher<SweepOutcome>::finished, this, [this, watcher, request] {
    watcher->deleteLater();
    if (request != request_) return;
    running_ = false;
    run_->setEnabled(!modelPath_.isEmpty());
    cancel_->setEnabled(false);
    const SweepOutcome o = watcher->result();
    if (!o.error.isEmpty()) status_->setText(o.error);
    if (o.chart) showChart(o.chart);
    emit finished();
  });
  watcher->setFuture(QtConcurrent::run(workerPool(), [path = modelPath_.toStdString(), options = options_, sweep,
                                        cancel = cancelFlag_]() -> SweepOutcome {
    SweepOutcome out;
    try {
      const LoadedModel loaded = loadModel(path, loadLimits(options));
      const std::vector<ShapeVariant> variants = sweepVariants(*loaded.model->graph, options, sweep);
      VariantCompileOptions vc;
      vc.cancel = cancel.get();
      const std::vector<VariantResult> results = compileVariants(path, variants, vc);
      out.chart = std::make_shared<const SweepChart>(sweepChart(path, sweep.symbol, results));
      if (cancel->load()) out.error = QObject::tr("Cancelled after %1 of %2 extents.").arg(results.size()).arg(variants.size());
    } catch (const std::exception& e) {
      out.error = qs(e.what());
    }
    return out;
  }));
  return true;
}

void ShapeSweepView::cancel() {
  if (cancelFlag_) cancelFlag_->store(true);
}

void ShapeSweepView::showChart(std::shared_ptr<const SweepChart> chart) {
  chart_ = std::move(chart);
  plot_->setChart(chart_);
  table_->setRowCount(0);
  int failed = 0;
  for (const SweepPoint& p : chart_->points) {
    const int row = table_->rowCount();
    table_->insertRow(row);
    const auto cell = [&](int col, const QString& text) {
      auto* item = new QTableWidgetItem(text);
      if (col < 7) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table_->setItem(row, col, item);
    };
    cell(0, QString::number(p.value));
    if (!p.ok) {
      ++failed;
      cell(7, tr("failed: %1").arg(qs(p.error)));
      continue;
    }
    cell(1, qs(formatBytes(double(p.arenaBytes))));
    cell(2, qs(formatBytes(double(p.lowerBoundBytes))));
    cell(3, qs(formatBytes(double(p.noReuseBytes))));
    cell(4, qs(formatBytes(double(p.ioBytes))));
    cell(5, qs(formatDuration(p.latencyUs / 1e6)));
    cell(6, QString::number(p.nodes));
    cell(7, qs(p.binding));
  }
  if (status_->text().startsWith(tr("Compiling")))
    status_->setText(tr("%1 extents of %2 compiled%3.")
                         .arg(chart_->points.size() - size_t(failed))
                         .arg(qs(chart_->symbol))
                         .arg(failed ? tr(", %1 failed (see the table)").arg(failed) : QString()));
}

}  // namespace kiln::views
