#pragma once
// Edits the canvas' highlight rules (layout/node_overlay): one row a rule — what it tests (op type, name regex,
// attribute range), its pattern or attribute, the range, its colour. A rule that cannot work (a bad regex, an
// empty pattern, low above high) is named under the table and the dialog does not accept it.
#include <QDialog>
#include <vector>

#include "layout/node_overlay.h"

class QLabel;
class QTableWidget;

namespace kiln::views {

class HighlightRulesDialog : public QDialog {
  Q_OBJECT
 public:
  HighlightRulesDialog(const std::vector<layout::HighlightRule>& rules, QWidget* parent = nullptr);
  std::vector<layout::HighlightRule> rules() const { return rules_; }
  // The rules as the table holds them now; the first problem in `problem` (empty when all are usable).
  std::vector<layout::HighlightRule> edited(QString* problem) const;
  void addRule(const layout::HighlightRule& rule);
  QTableWidget* table() const { return table_; }

 public slots:
  void accept() override;

 private:
  QTableWidget* table_;
  QLabel* error_;
  std::vector<layout::HighlightRule> rules_;
};

}  // namespace kiln::views
