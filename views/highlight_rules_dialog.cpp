#include "highlight_rules_dialog.h"

#include <QColorDialog>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include "overlay_legend.h"

namespace kiln::views {
namespace {

enum Column { Kind, Pattern, Low, High, Colour };

QString kindName(layout::HighlightRule::Kind k) {
  switch (k) {
    case layout::HighlightRule::Kind::OpType: return "op type";
    case layout::HighlightRule::Kind::NameRegex: return "name regex";
    case layout::HighlightRule::Kind::AttributeRange: return "attribute range";
  }
  return "op type";
}

void paintSwatch(QPushButton* b, const QColor& c) {
  b->setText(c.name());
  b->setStyleSheet(QString("background-color: %1; color: %2").arg(c.name(), c.lightnessF() > 0.55 ? "black" : "white"));
}

}  // namespace

HighlightRulesDialog::HighlightRulesDialog(const std::vector<layout::HighlightRule>& rules, QWidget* parent)
    : QDialog(parent), rules_(rules) {
  setWindowTitle(tr("Highlight Rules"));
  auto* outer = new QVBoxLayout(this);
  outer->addWidget(new QLabel(tr("Nodes a rule matches get a ring in its colour; the first matching rule wins. "
                                 "Op type: Softmax or com.microsoft:Attention. Name regex: ECMAScript. Attribute "
                                 "range: the attribute's name as pattern, any of its numbers within [low, high].")));
  table_ = new QTableWidget(0, 5);
  table_->setHorizontalHeaderLabels({tr("tests"), tr("op type / regex / attribute"), tr("low"), tr("high"), tr("colour")});
  table_->horizontalHeader()->setSectionResizeMode(Pattern, QHeaderView::Stretch);
  outer->addWidget(table_);
  error_ = new QLabel;
  error_->setObjectName("ruleError");
  error_->setWordWrap(true);
  error_->setStyleSheet("color: #d62728");
  outer->addWidget(error_);
  auto* row = new QHBoxLayout;
  auto* add = new QPushButton(tr("Add Rule"));
  auto* remove = new QPushButton(tr("Remove Rule"));
  row->addWidget(add);
  row->addWidget(remove);
  row->addStretch();
  outer->addLayout(row);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  outer->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, &HighlightRulesDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(add, &QPushButton::clicked, this, [this] { addRule({}); });
  connect(remove, &QPushButton::clicked, this, [this] {
    if (table_->currentRow() >= 0) table_->removeRow(table_->currentRow());
  });
  for (const auto& r : rules) addRule(r);
  resize(720, 360);
}

void HighlightRulesDialog::addRule(const layout::HighlightRule& rule) {
  const int r = table_->rowCount();
  table_->insertRow(r);
  auto* kind = new QComboBox;
  for (auto k : {layout::HighlightRule::Kind::OpType, layout::HighlightRule::Kind::NameRegex,
                 layout::HighlightRule::Kind::AttributeRange})
    kind->addItem(kindName(k), int(k));
  kind->setCurrentIndex(int(rule.kind));
  table_->setCellWidget(r, Kind, kind);
  const bool attr = rule.kind == layout::HighlightRule::Kind::AttributeRange;
  table_->setItem(r, Pattern, new QTableWidgetItem(QString::fromStdString(attr ? rule.attribute : rule.pattern)));
  table_->setItem(r, Low, new QTableWidgetItem(attr ? QString::number(rule.lo) : QString()));
  table_->setItem(r, High, new QTableWidgetItem(attr ? QString::number(rule.hi) : QString()));
  auto* colour = new QPushButton;
  paintSwatch(colour, toQColor(rule.colour));
  connect(colour, &QPushButton::clicked, this, [this, colour] {
    const QColor c = QColorDialog::getColor(QColor(colour->text()), this, tr("Rule colour"));
    if (c.isValid()) paintSwatch(colour, c);
  });
  table_->setCellWidget(r, Colour, colour);
}

std::vector<layout::HighlightRule> HighlightRulesDialog::edited(QString* problem) const {
  std::vector<layout::HighlightRule> out;
  for (int r = 0; r < table_->rowCount(); ++r) {
    layout::HighlightRule rule;
    rule.kind = layout::HighlightRule::Kind(static_cast<QComboBox*>(table_->cellWidget(r, Kind))->currentData().toInt());
    const QString text = table_->item(r, Pattern) ? table_->item(r, Pattern)->text().trimmed() : QString();
    if (rule.kind == layout::HighlightRule::Kind::AttributeRange) {
      rule.attribute = text.toStdString();
      bool okLo = false, okHi = false;
      rule.lo = table_->item(r, Low) ? table_->item(r, Low)->text().toDouble(&okLo) : 0;
      rule.hi = table_->item(r, High) ? table_->item(r, High)->text().toDouble(&okHi) : 0;
      if ((!okLo || !okHi) && problem && problem->isEmpty())
        *problem = tr("rule %1: low and high must be numbers").arg(r + 1);
    } else {
      rule.pattern = text.toStdString();
    }
    if (auto c = layout::Rgb::parse(static_cast<QPushButton*>(table_->cellWidget(r, Colour))->text().toStdString()))
      rule.colour = *c;
    const std::string p = layout::ruleProblem(rule);
    if (!p.empty() && problem && problem->isEmpty()) *problem = tr("rule %1: %2").arg(r + 1).arg(QString::fromStdString(p));
    out.push_back(std::move(rule));
  }
  return out;
}

void HighlightRulesDialog::accept() {
  QString problem;
  std::vector<layout::HighlightRule> rules = edited(&problem);
  if (!problem.isEmpty()) {
    error_->setText(problem);
    return;
  }
  rules_ = std::move(rules);
  QDialog::accept();
}

}  // namespace kiln::views
