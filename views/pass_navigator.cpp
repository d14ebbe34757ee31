#include "pass_navigator.h"

#include <QFontMetrics>
#include <QScrollBar>

#include "pipeline/standard_pipeline.h"

#include <QCheckBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "accuracy_chart.h"
#include "util/units.h"
#include "view_colors.h"

namespace kiln::views {

namespace {
constexpr int kSeqRole = Qt::UserRole + 1;

QString deltaText(const PassInfo& p) {
  if (!p.nodesBefore || !p.nodesAfter) return {};
  const int64_t d = *p.nodesAfter - *p.nodesBefore;
  if (d == 0) return p.changed ? "~" : "—";
  return (d > 0 ? "+" : "−") + QString("%L1").arg(std::abs(d));
}

constexpr int kErrorColumn = 3;

QString errorText(const PassAccuracyRow& r) {
  if (r.status == "not_emulatable") return "n/e";
  if (r.status == "error") return "error";
  return r.maxAbs ? QString::number(*r.maxAbs, 'g', 2) : QString();
}

QString errorTip(const PassAccuracyRow& r) {
  QString tip = QString("numerics after this pass: %1").arg(QString::fromStdString(r.status));
  if (r.maxAbs) tip += QString("\nmax abs %1, max rel %2").arg(*r.maxAbs, 0, 'g', 3).arg(r.maxRel.value_or(0), 0, 'g', 3);
  if (r.cosine) tip += QString("\ncosine %1").arg(*r.cosine, 0, 'f', 6);
  if (!r.detail.empty()) tip += "\n" + QString::fromStdString(r.detail);
  return tip;
}
}  // namespace

PassNavigator::PassNavigator(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText("Filter passes");
  filter_->setClearButtonEnabled(true);
  hideUnchanged_ = new QCheckBox("Hide passes that changed nothing", this);
  hideUnchanged_->setChecked(true);
  tree_ = new QTreeWidget(this);
  tree_->setColumnCount(4);
  tree_->setHeaderLabels({"Pass", "ms", "Δ nodes", "error"});
  tree_->headerItem()->setToolTip(kErrorColumn, "Max abs error of the outputs after this pass against the original "
                                                "(Run ▸ Verify Numerics); red: over tolerance");
  tree_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  for (int c = 1; c <= kErrorColumn; ++c) tree_->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  tree_->setColumnHidden(kErrorColumn, true);
  tree_->header()->setStretchLastSection(false);
  tree_->setRootIsDecorated(true);
  tree_->setUniformRowHeights(true);
  // RefineRunningPrecision and RefineRunningFormat must stay apart when the dock is narrow: cut in the middle.
  tree_->setTextElideMode(Qt::ElideMiddle);
  counter_ = new QLabel(this);
  counter_->setWordWrap(true);
  chart_ = new AccuracyChart(this);
  chart_->setVisible(false);
  layout->addWidget(filter_);
  layout->addWidget(hideUnchanged_);
  layout->addWidget(tree_, 1);
  layout->addWidget(chart_);
  layout->addWidget(counter_);
  connect(chart_, &AccuracyChart::passClicked, this, [this](int seq) { selectPass(seq); });
  connect(filter_, &QLineEdit::textChanged, this, [this] { rebuild(); });
  connect(hideUnchanged_, &QCheckBox::toggled, this, [this] { rebuild(); });
  connect(tree_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
    if (!item || !item->data(0, kSeqRole).isValid()) return;
    const int seq = item->data(0, kSeqRole).toInt();
    if (seq == current_) return;
    current_ = seq;
    updateCounter();
    chart_->setCurrentPass(seq);
    emit passSelected(seq);
  });
}

void PassNavigator::setPasses(const std::vector<PassInfo>& passes) {
  passes_ = passes;
  accuracy_.clear();
  chart_->setRows({});
  chart_->setVisible(false);
  tree_->setColumnHidden(kErrorColumn, true);
  current_ = -1;
  rebuild();
  if (!passes_.empty()) selectPass(passes_.back().seq);
}

void PassNavigator::setAccuracy(const std::vector<PassAccuracyRow>& rows) {
  accuracy_.clear();
  for (const PassAccuracyRow& r : rows) accuracy_[r.seq] = r;
  std::vector<PassAccuracyRow> ordered;
  for (const auto& [seq, r] : accuracy_) ordered.push_back(r);
  chart_->setRows(std::move(ordered));
  chart_->setVisible(!accuracy_.empty());
  tree_->setColumnHidden(kErrorColumn, accuracy_.empty());
  rebuild();
  updateCounter();
}

void PassNavigator::updateCounter() {
  if (current_ < 0) return;
  QString text = QString("pass %1 of %2 (%3 shown)")
                     .arg(current_)
                     .arg(passes_.empty() ? 0 : passes_.back().seq)
                     .arg(visiblePasses().size());
  if (const int first = firstExceeding(); first >= 0)
    for (const auto& p : passes_)
      if (p.seq == first) text += QString(" · numbers changed at %1").arg(QString::fromStdString(p.name));
  counter_->setText(text);
}

int PassNavigator::firstExceeding() const {
  for (const auto& [seq, r] : accuracy_)
    if (r.status == "exceeds") return seq;
  return -1;
}

int PassNavigator::previousPass(int seq) const {
  int prev = -1;
  for (const auto& p : passes_)
    if (p.seq < seq) prev = p.seq;
  return prev;
}

QList<int> PassNavigator::visiblePasses() const {
  QList<int> out;
  for (int s = 0; s < tree_->topLevelItemCount(); ++s) {
    QTreeWidgetItem* stage = tree_->topLevelItem(s);
    for (int i = 0; i < stage->childCount(); ++i) out << stage->child(i)->data(0, kSeqRole).toInt();
  }
  return out;
}

int PassNavigator::preferredWidth() const {
  std::vector<std::string> names;
  PassManager pm;
  addStandardPasses(pm, Options());
  for (const auto& [stage, name] : pm.passNames()) names.push_back(name);
  for (const PassInfo& p : passes_) names.push_back(p.name);
  const QFontMetrics fm(tree_->font());
  int widest = fm.horizontalAdvance("imported graph");
  for (const std::string& n : names) widest = std::max(widest, fm.horizontalAdvance(QString::fromStdString(n)));
  // The name column's text plus its indentation and margins, the other columns at their content, the scroll bar,
  // the layout's margins.
  const int numbers = fm.horizontalAdvance("00000.00") + fm.horizontalAdvance("Δ nodes") + 10 * fm.averageCharWidth();
  return widest + 3 * tree_->indentation() + numbers + tree_->verticalScrollBar()->sizeHint().width() + 32;
}

void PassNavigator::rebuild() {
  const int keep = current_;
  tree_->blockSignals(true);
  tree_->clear();
  const QString f = filter_->text().trimmed();
  QTreeWidgetItem* stageItem = nullptr;
  std::string stageName;
  double stageMs = 0;
  auto closeStage = [&] {
    if (stageItem) stageItem->setText(1, QString::number(stageMs, 'f', 1));
  };
  for (const PassInfo& p : passes_) {
    // The imported graph, the final graph, failed passes and the selected pass always show.
    const bool keepAlways = p.seq == 0 || &p == &passes_.back() || !p.error.empty() || p.seq == keep;
    if (!keepAlways && hideUnchanged_->isChecked() && !p.changed) continue;
    if (!keepAlways && !f.isEmpty() && !QString::fromStdString(p.name).contains(f, Qt::CaseInsensitive)) continue;
    if (!stageItem || p.stage != stageName) {
      closeStage();
      stageName = p.stage;
      stageMs = 0;
      stageItem = new QTreeWidgetItem(tree_, {QString::fromStdString(p.stage)});
      QFont b = stageItem->font(0);
      b.setBold(true);
      stageItem->setFont(0, b);
      stageItem->setFlags(stageItem->flags() & ~Qt::ItemIsSelectable);
      stageItem->setExpanded(true);
    }
    stageMs += p.ms;
    auto* item = new QTreeWidgetItem(stageItem, {QString::fromStdString(p.seq == 0 ? "imported graph" : p.name),
                                                 p.seq == 0 ? QString() : QString::number(p.ms, 'f', 2),
                                                 p.seq == 0 ? QString("%L1").arg(p.nodesAfter.value_or(0))
                                                            : deltaText(p)});
    item->setData(0, kSeqRole, p.seq);
    item->setTextAlignment(1, Qt::AlignRight);
    item->setTextAlignment(2, Qt::AlignRight);
    QString tip = QString("%1 / %2 (pass %3)").arg(QString::fromStdString(p.stage), QString::fromStdString(p.name)).arg(p.seq);
    for (const auto& [k, v] : p.counters) tip += QString("\n%1: %L2").arg(QString::fromStdString(k)).arg(v);
    if (!p.error.empty()) {
      tip += "\nFAILED: " + QString::fromStdString(p.error);
      item->setForeground(0, QBrush(QColor(0xdc, 0x26, 0x26)));
    }
    item->setToolTip(0, tip);
    if (auto a = accuracy_.find(p.seq); a != accuracy_.end()) {
      const PassAccuracyRow& r = a->second;
      const bool first = p.seq == firstExceeding();
      item->setText(kErrorColumn, (first ? "⚠ " : "") + errorText(r));
      item->setTextAlignment(kErrorColumn, Qt::AlignRight);
      item->setToolTip(kErrorColumn, errorTip(r) + (first ? "\nthe first pass over tolerance" : ""));
      if (r.status != "ok") item->setForeground(kErrorColumn, QBrush(views::errorText(palette())));
      if (first) {
        QFont b = item->font(kErrorColumn);
        b.setBold(true);
        item->setFont(kErrorColumn, b);
      }
    }
  }
  closeStage();
  tree_->blockSignals(false);
  if (keep >= 0) selectPass(keep);
}

void PassNavigator::selectPass(int seq) {
  for (int s = 0; s < tree_->topLevelItemCount(); ++s) {
    QTreeWidgetItem* stage = tree_->topLevelItem(s);
    for (int i = 0; i < stage->childCount(); ++i)
      if (stage->child(i)->data(0, kSeqRole).toInt() == seq) {
        if (tree_->currentItem() == stage->child(i)) return;
        tree_->setCurrentItem(stage->child(i));
        tree_->scrollToItem(stage->child(i));
        return;
      }
  }
}

bool PassNavigator::step(int delta) {
  const QList<int> v = visiblePasses();
  const qsizetype at = v.indexOf(current_);
  const qsizetype next = at < 0 ? 0 : at + delta;
  if (next < 0 || next >= v.size()) return false;
  selectPass(v[next]);
  return true;
}

void PassNavigator::setHideUnchanged(bool hide) { hideUnchanged_->setChecked(hide); }
void PassNavigator::setFilter(const QString& text) { filter_->setText(text); }
QString PassNavigator::counterText() const { return counter_->text(); }

}  // namespace kiln::views
