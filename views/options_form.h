#pragma once
// The options form: one row per key of Options::schema(), so it always offers exactly what the CLI accepts. Every
// edit goes through Options::setValue; a rejected value shows the engine's message under its row and the widget
// goes back to the last valid value. Values that differ from the default have a bold label.
#include <QString>
#include <QWidget>
#include <vector>

#include "options/options.h"

class QGridLayout;
class QLabel;

namespace kiln::views {

class OptionsForm : public QWidget {
  Q_OBJECT

 public:
  explicit OptionsForm(QWidget* parent = nullptr);

  // Shows `o` (and takes its origin); does not emit optionsChanged, so a caller can mirror its own state.
  void setOptions(const kiln::Options& o);
  // The edited set; its origin says where it came from, e.g. "default.json (edited)".
  kiln::Options options() const;
  // The problem currently shown to the user (rejected value, failed load or save); empty when there is none.
  QString lastError() const;

  // What the Load…/Save…/Reset buttons do after their dialogs, callable without them. On failure the form keeps its
  // values and shows the problem (naming the file).
  bool loadFile(const QString& path);
  bool saveFile(const QString& path);
  void resetToDefaults();

  // The shape binding the shown run compiled at ("batch=1 (dim_policy: batch), ..."), above the rows: what
  // dim_values and dim_policy resolved to, so a user sees what to change. Empty hides it.
  void setShapeBinding(const QString& text);
  QString shapeBinding() const;

  // The editor of a schema key (its objectName is the key), or nullptr.
  QWidget* editor(const QString& key) const;

 signals:
  void optionsChanged();  // any valid edit that changed a value, a load or a reset
  void rerunRequested();  // the Rerun button

 protected:
  void changeEvent(QEvent* e) override;

 private:
  struct Row {
    const OptionSpec* spec = nullptr;
    QLabel* label = nullptr;
    QWidget* editor = nullptr;
    QLabel* error = nullptr;  // under the editor, hidden unless this row's last edit was rejected
    QLabel* hint = nullptr;   // optional, e.g. a byte count in MiB
  };

  void buildRows(QGridLayout* grid);
  QWidget* makeEditor(Row& row);
  Json editedValue(const Row& row) const;
  void commit(Row& row);
  void refreshRow(Row& row);
  void refreshAll();
  void showOrigin();
  void replaceOptions(const Options& o);  // adopts `o`, emits optionsChanged if a value differs
  void showError(Row* row, const QString& message);
  void clearError();
  void styleErrors();

  Options options_;
  std::string baseOrigin_ = "defaults";  // origin_ before any edit in the form
  std::vector<Row> rows_;
  QLabel* origin_ = nullptr;
  QLabel* binding_ = nullptr;  // the run's shape binding
  QLabel* formError_ = nullptr;  // load/save problems, above the buttons
  QString lastError_;
  QString lastDir_;  // where the file dialogs open next
};

}  // namespace kiln::views
