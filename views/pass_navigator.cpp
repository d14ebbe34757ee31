#include "pass_navigator.h"

#include <QCheckBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "util/units.h"

namespace kiln::views {

namespace {
constexpr int kSeqRole = Qt::UserRole + 1;

QString deltaText(const PassInfo& p) {
  if (!p.nodesBefore || !p.nodesAfter) return {};
  const int64_t d = *p.nodesAfter - *p.nodesBefore;
  if (d == 0) return p.changed ? "~" : "—";
  return (d > 0 ? "+" : "−") + QString("%L1").arg(std::abs(d));
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
  tree_->setColumnCount(3);
  tree_->setHeaderLabels({"Pass", "ms", "Δ nodes"});
  tree_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  tree_->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  tree_->header()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
  tree_->header()->setStretchLastSection(false);
  tree_->setRootIsDecorated(true);
  tree_->setUniformRowHeights(true);
  counter_ = new QLabel(this);
  layout->addWidget(filter_);
  layout->addWidget(hideUnchanged_);
  layout->addWidget(tree_, 1);
  layout->addWidget(counter_);
  connect(filter_, &QLineEdit::textChanged, this, [this] { rebuild(); });
  connect(hideUnchanged_, &QCheckBox::toggled, this, [this] { rebuild(); });
  connect(tree_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
    if (!item || !item->data(0, kSeqRole).isValid()) return;
    const int seq = item->data(0, kSeqRole).toInt();
    if (seq == current_) return;
    current_ = seq;
    const auto visible = visiblePasses();
    counter_->setText(QString("pass %1 of %2 (%3 shown)")
                          .arg(seq)
                          .arg(passes_.empty() ? 0 : passes_.back().seq)
                          .arg(visible.size()));
    emit passSelected(seq);
  });
}

void PassNavigator::setPasses(const std::vector<PassInfo>& passes) {
  passes_ = passes;
  current_ = -1;
  rebuild();
  if (!passes_.empty()) selectPass(passes_.back().seq);
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

}  // namespace kiln::views
