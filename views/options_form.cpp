#include "options_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <climits>
#include <map>

#include "util/load_error.h"
#include "options_file.h"
#include "util/units.h"
#include "view_colors.h"

namespace kiln::views {
namespace {

using T = OptionSpec::Type;
constexpr const char* kEdited = " (edited)";

QString qs(const std::string& s) { return QString::fromStdString(s); }

// A key ending in _bytes holds a size; the hint next to it says how big in binary units.
bool isByteCount(const OptionSpec& s) { return s.type == T::Int && s.key.ends_with("_bytes"); }

// "memory.planner" is shown as "planner" under a "memory" header; keys without a dot have no group.
std::string groupOf(const std::string& key) {
  const auto dot = key.find('.');
  return dot == std::string::npos ? std::string() : key.substr(0, dot);
}

}  // namespace

OptionsForm::OptionsForm(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  origin_ = new QLabel;
  origin_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  outer->addWidget(origin_);
  binding_ = new QLabel;
  binding_->setObjectName("shapeBinding");
  binding_->setWordWrap(true);
  binding_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  binding_->setToolTip(tr("The extents the model's symbolic dimensions were compiled at: input_shape, then "
                          "dim_values, then dim_policy by role. Edit dim_values or dim_policy and Rerun."));
  binding_->hide();
  outer->addWidget(binding_);

  // The rows scroll so the form also fits a short dock; the buttons below stay visible.
  auto* body = new QWidget;
  auto* grid = new QGridLayout(body);
  grid->setColumnStretch(1, 1);
  buildRows(grid);
  grid->setRowStretch(grid->rowCount(), 1);
  auto* scroll = new QScrollArea;
  scroll->setWidget(body);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  outer->addWidget(scroll, 1);

  formError_ = new QLabel;
  formError_->setWordWrap(true);
  formError_->setTextFormat(Qt::PlainText);
  formError_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  formError_->hide();
  outer->addWidget(formError_);

  auto* buttons = new QHBoxLayout;
  auto button = [&](const QString& text, const QString& name, const QString& tip) {
    auto* b = new QPushButton(text);
    b->setObjectName(name);
    b->setToolTip(tip);
    buttons->addWidget(b);
    return b;
  };
  QPushButton* load = button(tr("Load…"), "load", tr("Read an option file (JSON, as kiln compile --options takes)"));
  QPushButton* save = button(tr("Save…"), "save", tr("Write the options that differ from the defaults as JSON"));
  QPushButton* reset = button(tr("Reset to defaults"), "reset", tr("Every option back to ATC's default"));
  buttons->addStretch(1);
  QPushButton* rerun = button(tr("Rerun"), "rerun", tr("Compile the model again with these options"));
  outer->addLayout(buttons);

  connect(load, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Load options"), lastDir_,
                                                      tr("Option files (*.json);;All files (*)"));
    if (path.isEmpty()) return;
    lastDir_ = QFileInfo(path).absolutePath();
    loadFile(path);
  });
  connect(save, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Save options"), lastDir_, tr("Option files (*.json);;All files (*)"));
    if (path.isEmpty()) return;
    lastDir_ = QFileInfo(path).absolutePath();
    saveFile(path);
  });
  connect(reset, &QPushButton::clicked, this, &OptionsForm::resetToDefaults);
  connect(rerun, &QPushButton::clicked, this, &OptionsForm::rerunRequested);

  styleErrors();
  refreshAll();
}

void OptionsForm::buildRows(QGridLayout* grid) {
  // Keys without a group first, then each group under its header, both in schema order.
  std::vector<std::string> groups{""};
  for (const auto& s : Options::schema())
    if (std::find(groups.begin(), groups.end(), groupOf(s.key)) == groups.end()) groups.push_back(groupOf(s.key));
  rows_.reserve(Options::schema().size());
  int r = 0;
  for (const auto& group : groups) {
    if (!group.empty()) {
      auto* header = new QLabel(qs(group));
      QFont f = header->font();
      f.setBold(true);
      header->setFont(f);
      header->setContentsMargins(0, 8, 0, 0);
      grid->addWidget(header, r++, 0, 1, 3);
    }
    for (const auto& s : Options::schema()) {
      if (groupOf(s.key) != group) continue;
      Row row;
      row.spec = &s;
      row.label = new QLabel(qs(group.empty() ? s.key : s.key.substr(group.size() + 1)));
      row.editor = makeEditor(row);
      row.editor->setObjectName(qs(s.key));
      row.label->setBuddy(row.editor);
      row.label->setToolTip(qs(s.help));
      row.editor->setToolTip(qs(s.help));
      row.error = new QLabel;
      row.error->setWordWrap(true);
      row.error->setTextFormat(Qt::PlainText);
      row.error->setTextInteractionFlags(Qt::TextSelectableByMouse);
      row.error->hide();
      grid->addWidget(row.label, r, 0);
      grid->addWidget(row.editor, r, 1, 1, row.hint ? 1 : 2);
      if (row.hint) grid->addWidget(row.hint, r, 2);
      grid->addWidget(row.error, ++r, 1, 1, 2);
      ++r;
      rows_.push_back(row);
    }
  }
}

QWidget* OptionsForm::makeEditor(Row& row) {
  const OptionSpec& s = *row.spec;
  const size_t i = rows_.size();  // the row's index once pushed; rows_ never reallocates (reserved)
  auto commitThis = [this, i] { commit(rows_[i]); };
  switch (s.type) {
    case T::Bool: {
      auto* box = new QCheckBox;
      connect(box, &QCheckBox::toggled, this, commitThis);
      return box;
    }
    case T::Enum: {
      auto* combo = new QComboBox;
      for (const auto& c : s.choices) combo->addItem(qs(c));
      connect(combo, &QComboBox::currentIndexChanged, this, commitThis);
      return combo;
    }
    case T::Int:
      if (s.min >= INT_MIN && s.max <= INT_MAX) {
        auto* spin = new QSpinBox;
        spin->setRange(static_cast<int>(s.min), static_cast<int>(s.max));
        spin->setKeyboardTracking(false);  // one edit per committed number, not one per digit typed
        connect(spin, &QSpinBox::valueChanged, this, commitThis);
        return spin;
      }
      break;  // wider than int: a line edit below
    case T::Number: {
      auto* spin = new QDoubleSpinBox;
      spin->setRange(s.numberMin, s.numberMax);
      spin->setDecimals(6);
      spin->setSingleStep(s.numberMax <= 1 ? 0.001 : 1);
      spin->setKeyboardTracking(false);
      connect(spin, &QDoubleSpinBox::valueChanged, this, commitThis);
      return spin;
    }
    case T::String:
    case T::FusionSwitch:
      break;
  }
  auto* edit = new QLineEdit;
  if (s.type == T::Int) {
    // Only stops stray characters; the range (int64, beyond QSpinBox) is checked by the engine on commit.
    edit->setValidator(new QRegularExpressionValidator(QRegularExpression("-?[0-9]{0,19}"), edit));
    if (isByteCount(s)) row.hint = new QLabel;
  } else if (s.type == T::FusionSwitch) {
    edit->setPlaceholderText(tr("all rules on — e.g. ConvBiasAddFusion:off;ALL:on"));
  } else {
    edit->setPlaceholderText(qs(s.help));
  }
  connect(edit, &QLineEdit::editingFinished, this, commitThis);
  return edit;
}

Json OptionsForm::editedValue(const Row& row) const {
  if (auto* box = qobject_cast<QCheckBox*>(row.editor)) return Json(box->isChecked());
  if (auto* combo = qobject_cast<QComboBox*>(row.editor)) return Json(combo->currentText().toStdString());
  if (auto* spin = qobject_cast<QSpinBox*>(row.editor)) return Json(static_cast<int64_t>(spin->value()));
  if (auto* spin = qobject_cast<QDoubleSpinBox*>(row.editor)) return Json(spin->value());
  const QString text = static_cast<QLineEdit*>(row.editor)->text().trimmed();
  if (row.spec->type == T::Int) {
    bool ok = false;
    const qlonglong v = text.toLongLong(&ok);
    // Not a number (or beyond int64): hand the text on so the engine's message quotes it.
    return ok ? Json(static_cast<int64_t>(v)) : Json(text.toStdString());
  }
  return Json(text.toStdString());
}

void OptionsForm::commit(Row& row) {
  // editingFinished also fires when focus leaves an untouched (or just reverted) field: nothing was edited then.
  if (auto* edit = qobject_cast<QLineEdit*>(row.editor); edit && !edit->isModified()) return;
  const std::string& key = row.spec->key;
  // setValue may store a value before rejecting it (input_shape is checked after assignment): edit a copy.
  Options next = options_;
  try {
    next.setValue(key, editedValue(row));
  } catch (const std::exception& e) {
    refreshRow(row);
    showError(&row, QString::fromUtf8(e.what()));
    return;
  }
  clearError();
  const bool changed = !(next.get(key) == options_.get(key));
  if (changed) {
    next.setOrigin(baseOrigin_ + kEdited);
    options_ = std::move(next);
    showOrigin();
  }
  refreshRow(row);  // also shows the engine's normalised form (fusion_switch)
  if (changed) emit optionsChanged();
}

void OptionsForm::refreshRow(Row& row) {
  const OptionSpec& s = *row.spec;
  const Json& v = options_.get(s.key);
  const QSignalBlocker block(row.editor);
  if (auto* box = qobject_cast<QCheckBox*>(row.editor)) box->setChecked(v.asBool());
  else if (auto* combo = qobject_cast<QComboBox*>(row.editor)) combo->setCurrentText(qs(v.asString()));
  else if (auto* spin = qobject_cast<QSpinBox*>(row.editor)) spin->setValue(static_cast<int>(v.asInt()));
  else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(row.editor)) dspin->setValue(v.asDouble());
  else if (auto* edit = qobject_cast<QLineEdit*>(row.editor))
    edit->setText(s.type == T::FusionSwitch ? fusionSwitchText(v)
                  : s.type == T::Int       ? QString::number(v.asInt())
                                           : qs(v.asString()));
  if (row.hint) row.hint->setText(qs("= " + formatBytes(static_cast<double>(v.asInt()))));
  QFont f = row.label->font();
  f.setBold(!(v == s.defaultValue));
  row.label->setFont(f);
}

void OptionsForm::refreshAll() {
  for (auto& row : rows_) refreshRow(row);
  showOrigin();
}

void OptionsForm::setShapeBinding(const QString& text) {
  binding_->setText(text.isEmpty() ? QString() : tr("Shapes: %1").arg(text));
  binding_->setVisible(!text.isEmpty());
}

QString OptionsForm::shapeBinding() const { return binding_->text(); }

void OptionsForm::showOrigin() { origin_->setText(tr("Options: %1").arg(qs(options_.origin()))); }

void OptionsForm::setOptions(const Options& o) {
  options_ = o;
  // Taking back our own options() must not stack "(edited) (edited)" on the next edit.
  baseOrigin_ = o.origin();
  if (baseOrigin_.ends_with(kEdited)) baseOrigin_.resize(baseOrigin_.size() - std::char_traits<char>::length(kEdited));
  clearError();
  refreshAll();
}

Options OptionsForm::options() const { return options_; }

QString OptionsForm::lastError() const { return lastError_; }

QWidget* OptionsForm::editor(const QString& key) const {
  for (const auto& row : rows_)
    if (row.editor->objectName() == key) return row.editor;
  return nullptr;
}

void OptionsForm::replaceOptions(const Options& o) {
  const bool changed = !(o.toJson() == options_.toJson());
  setOptions(o);
  if (changed) emit optionsChanged();
}

bool OptionsForm::loadFile(const QString& path) {
  try {
    replaceOptions(Options::fromFile(path.toStdString()));
    return true;
  } catch (const LoadError& e) {
    showError(nullptr, QString::fromUtf8(e.describe()));
  } catch (const std::exception& e) {  // fromFile promises LoadError; anything else still must not escape a slot
    showError(nullptr, path + ": " + QString::fromUtf8(e.what()));
  }
  return false;
}

bool OptionsForm::saveFile(const QString& path) {
  if (const QString problem = writeOptionsFile(options_, path); !problem.isEmpty()) {
    showError(nullptr, problem);
    return false;
  }
  // The values are now exactly that file's: say so, as loading it would.
  baseOrigin_ = QFileInfo(path).fileName().toStdString();
  options_.setOrigin(baseOrigin_);
  clearError();
  showOrigin();
  return true;
}

void OptionsForm::resetToDefaults() { replaceOptions(Options()); }

void OptionsForm::showError(Row* row, const QString& message) {
  clearError();
  QLabel* label = row ? row->error : formError_;
  label->setText(message);
  label->show();
  lastError_ = message;
}

void OptionsForm::clearError() {
  for (auto& row : rows_) row.error->hide();
  formError_->hide();
  lastError_.clear();
}

void OptionsForm::styleErrors() {
  if (!formError_) return;  // a palette change during construction, before the labels exist
  auto style = [this](QLabel* label) {
    QPalette p = label->palette();
    p.setColor(QPalette::WindowText, errorText(palette()));
    label->setPalette(p);
  };
  style(formError_);
  for (auto& row : rows_) style(row.error);
}

void OptionsForm::changeEvent(QEvent* e) {
  // A theme switch changes the text colour the error red is blended with.
  if (e->type() == QEvent::PaletteChange) styleErrors();
  QWidget::changeEvent(e);
}

}  // namespace kiln::views
