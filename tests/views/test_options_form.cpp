// The options form against the engine's schema: a widget per key, edits through Options::setValue, rejected values
// leave the options alone, files round-trip, and every bundled option file loads.
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include "options_file.h"
#include "options_form.h"

using kiln::Json;
using kiln::Options;
using kiln::OptionSpec;
using kiln::views::OptionsForm;

namespace kiln {
// Readable QCOMPARE failures (found by argument-dependent lookup).
char* toString(const Json& j) { return qstrdup(j.dump().c_str()); }
}  // namespace kiln

namespace {

// Types into a line edit as a user would (which marks it modified) and presses Return.
void typeInto(QLineEdit* edit, const QString& text) {
  edit->selectAll();
  edit->del();
  QTest::keyClicks(edit, text);
  QTest::keyClick(edit, Qt::Key_Return);
}

QLineEdit* lineEdit(OptionsForm& form, const char* key) { return qobject_cast<QLineEdit*>(form.editor(key)); }

QLabel* labelFor(OptionsForm& form, const char* key) {
  for (auto* l : form.findChildren<QLabel*>())
    if (l->buddy() == form.editor(key)) return l;
  return nullptr;
}

void writeFile(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(bytes);
}

}  // namespace

class TestOptionsForm : public QObject {
  Q_OBJECT

 private slots:
  void everyKeyHasAWidget() {
    OptionsForm form;
    for (const auto& s : Options::schema()) {
      QWidget* w = form.editor(QString::fromStdString(s.key));
      QVERIFY2(w, s.key.c_str());
      QCOMPARE(w->toolTip(), QString::fromStdString(s.help));
      switch (s.type) {
        case OptionSpec::Type::Bool: QVERIFY(qobject_cast<QCheckBox*>(w)); break;
        case OptionSpec::Type::Enum: {
          auto* c = qobject_cast<QComboBox*>(w);
          QVERIFY(c);
          QCOMPARE(c->count(), int(s.choices.size()));
          break;
        }
        case OptionSpec::Type::Int: QVERIFY(qobject_cast<QSpinBox*>(w) || qobject_cast<QLineEdit*>(w)); break;
        case OptionSpec::Type::String:
        case OptionSpec::Type::FusionSwitch: QVERIFY(qobject_cast<QLineEdit*>(w)); break;
        case OptionSpec::Type::Number: {
          auto* spin = qobject_cast<QDoubleSpinBox*>(w);
          QVERIFY(spin);
          QCOMPARE(spin->minimum(), s.numberMin);
          QCOMPARE(spin->maximum(), s.numberMax);
          break;
        }
      }
    }
    // A small range gets a spin box with the schema's bounds; an int64 range does not fit one.
    auto* topo = qobject_cast<QSpinBox*>(form.editor("topo_sorting_mode"));
    QVERIFY(topo);
    QCOMPARE(topo->minimum(), 0);
    QCOMPARE(topo->maximum(), 3);
    QVERIFY(lineEdit(form, "constant_folding_max_bytes"));
    QCOMPARE(form.options().toJson(), Options().toJson());
    QVERIFY(form.lastError().isEmpty());
  }

  void comboAndCheckboxEdits() {
    OptionsForm form;
    Options start;
    start.setOrigin("default.json");
    form.setOptions(start);
    QSignalSpy changed(&form, &OptionsForm::optionsChanged);
    QVERIFY(!labelFor(form, "precision_mode")->font().bold());

    auto* combo = qobject_cast<QComboBox*>(form.editor("precision_mode"));
    combo->setCurrentIndex(combo->findText("force_fp32"));
    QCOMPARE(form.options().getString("precision_mode"), std::string("force_fp32"));
    QCOMPARE(changed.count(), 1);
    QVERIFY(labelFor(form, "precision_mode")->font().bold());
    QCOMPARE(form.options().origin(), std::string("default.json (edited)"));

    auto* box = qobject_cast<QCheckBox*>(form.editor("oo_constant_folding"));
    box->click();
    QCOMPARE(form.options().getBool("oo_constant_folding"), false);
    QCOMPARE(changed.count(), 2);

    auto* topo = qobject_cast<QSpinBox*>(form.editor("topo_sorting_mode"));
    topo->setValue(3);
    QCOMPARE(form.options().getInt("topo_sorting_mode"), 3);

    typeInto(lineEdit(form, "constant_folding_max_bytes"), "1099511627776");  // 1 TiB: beyond int
    QCOMPARE(form.options().getInt("constant_folding_max_bytes"), int64_t(1) << 40);

    typeInto(lineEdit(form, "fusion_switch"), " ConvBiasAddFusion:off ; ALL:on ");
    QVERIFY(!form.options().fusionEnabled("ConvBiasAddFusion"));
    QVERIFY(form.options().fusionEnabled("Other"));
    QCOMPARE(lineEdit(form, "fusion_switch")->text(), QString("ConvBiasAddFusion:off;ALL:on"));
    QVERIFY(form.lastError().isEmpty());

    // Taking our own options back and editing again must not stack "(edited)".
    form.setOptions(form.options());
    combo->setCurrentIndex(combo->findText("force_fp16"));
    QCOMPARE(form.options().origin(), std::string("default.json (edited)"));
    QVERIFY(!labelFor(form, "precision_mode")->font().bold());
  }

  void invalidValuesAreRejected_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("shape dim") << "input_shape" << "x:1,a" << "input_shape";
    QTest::newRow("shape no name") << "input_shape" << "1,3" << "input_shape";
    QTest::newRow("fusion state") << "fusion_switch" << "ConvBiasAddFusion:maybe" << "fusion_switch";
    QTest::newRow("fusion no colon") << "fusion_switch" << "ConvBiasAddFusion" << "fusion_switch";
    QTest::newRow("stream mode") << "multi_stream_parallel_mode" << "LoadBalance:x" << "multi_stream_parallel_mode";
    QTest::newRow("below min") << "constant_folding_max_bytes" << "-5" << "between 0 and";
    QTest::newRow("above max") << "constant_folding_max_bytes" << "1099511627777" << "between 0 and";
    QTest::newRow("beyond int64") << "constant_folding_max_bytes" << "99999999999999999999" << "must be an integer";
    QTest::newRow("empty int") << "constant_folding_max_bytes" << "" << "must be an integer";
  }

  void invalidValuesAreRejected() {
    QFETCH(QString, key);
    QFETCH(QString, text);
    QFETCH(QString, mentions);
    OptionsForm form;
    form.show();  // the inline message must actually be visible
    Options start;
    start.setValue("input_shape", Json("x:1,3,224,224"));
    start.setValue("fusion_switch", Json("ConvBiasAddFusion:off"));
    form.setOptions(start);
    const Json before = form.options().toJson();
    auto* edit = lineEdit(form, key.toUtf8().constData());
    const QString shown = edit->text();
    QSignalSpy changed(&form, &OptionsForm::optionsChanged);

    typeInto(edit, text);
    QVERIFY2(form.lastError().contains(mentions), qPrintable(form.lastError()));
    QCOMPARE(form.options().toJson(), before);
    QCOMPARE(edit->text(), shown);  // back to the last valid value
    QCOMPARE(changed.count(), 0);
    bool visible = false;
    for (auto* l : form.findChildren<QLabel*>()) visible |= l->isVisible() && l->text() == form.lastError();
    QVERIFY(visible);

    // Focus leaving the reverted field is not an edit: the message stays until the next valid one.
    emit edit->editingFinished();
    QVERIFY(!form.lastError().isEmpty());
    qobject_cast<QCheckBox*>(form.editor("enable_single_stream"))->click();
    QVERIFY(form.lastError().isEmpty());
    QCOMPARE(changed.count(), 1);
  }

  void saveLoadRoundTrip() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    OptionsForm form;
    Options edited;
    edited.setValue("precision_mode", Json("allow_mix_precision"));
    edited.setValue("fusion_switch", Json("ConvBiasAddFusion:off;ALL:on"));
    edited.setValue("input_shape", Json("x:1,3,224,224;mask:1,-1"));
    edited.setValue("constant_folding_max_bytes", Json(int64_t(5) << 32));
    edited.setValue("verify_each_pass", Json(false));
    form.setOptions(edited);
    const QString path = dir.filePath("mine.json");
    QVERIFY(form.saveFile(path));
    QCOMPARE(form.options().origin(), std::string("mine.json"));

    // Only the changed keys are written, and the engine reads the file back to the same set.
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const Json saved = Json::parse(f.readAll().toStdString());
    QCOMPARE(saved.asObject().size(), size_t(5));
    QCOMPARE(Options::fromFile(path.toStdString()).toJson(), edited.toJson());

    OptionsForm other;
    QSignalSpy changed(&other, &OptionsForm::optionsChanged);
    QVERIFY(other.loadFile(path));
    QCOMPARE(other.options().toJson(), edited.toJson());
    QCOMPARE(other.options().origin(), std::string("mine.json"));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(lineEdit(other, "fusion_switch")->text(), QString("ConvBiasAddFusion:off;ALL:on"));

    // Defaults save as an empty object, which loads as the defaults.
    OptionsForm plain;
    QVERIFY(plain.saveFile(dir.filePath("plain.json")));
    QVERIFY(other.loadFile(dir.filePath("plain.json")));
    QCOMPARE(other.options().toJson(), Options().toJson());

    QVERIFY(!form.saveFile(dir.filePath("no/such/dir/x.json")));
    QVERIFY(form.lastError().contains("no/such/dir/x.json"));
  }

  void badFilesChangeNothing_data() {
    QTest::addColumn<QByteArray>("content");
    QTest::newRow("truncated") << QByteArray("{ \"oo_level\": ");
    QTest::newRow("not an object") << QByteArray("[1, 2]");
    QTest::newRow("bad value") << QByteArray("{\"oo_level\": \"O2\"}");
    QTest::newRow("unknown key") << QByteArray("{\"oo_levle\": \"O1\"}");
    QTest::newRow("bad shape") << QByteArray("{\"input_shape\": \"x:1,a\"}");
    QTest::newRow("binary") << QByteArray("\x00\xff\xfe garbage", 12);
  }

  void badFilesChangeNothing() {
    QFETCH(QByteArray, content);
    QTemporaryDir dir;
    const QString path = dir.filePath("broken.json");
    writeFile(path, content);
    OptionsForm form;
    qobject_cast<QCheckBox*>(form.editor("disable_reuse_memory"))->click();
    const Options before = form.options();
    QSignalSpy changed(&form, &OptionsForm::optionsChanged);
    QVERIFY(!form.loadFile(path));
    QVERIFY2(form.lastError().contains(path), qPrintable(form.lastError()));
    QCOMPARE(form.options().toJson(), before.toJson());
    QCOMPARE(form.options().origin(), before.origin());
    QVERIFY(qobject_cast<QCheckBox*>(form.editor("disable_reuse_memory"))->isChecked());
    QCOMPARE(changed.count(), 0);
  }

  void missingFileIsReported() {
    OptionsForm form;
    QVERIFY(!form.loadFile("/nonexistent/options.json"));
    QVERIFY(form.lastError().contains("/nonexistent/options.json"));
  }

  void bundledOptionFilesLoad() {
    const QString folder = QFINDTESTDATA("../../resources/options");
    QVERIFY(!folder.isEmpty());
    const QStringList files = QDir(folder).entryList({"*.json"}, QDir::Files);
    QVERIFY(files.size() >= 6);
    for (const QString& name : files) {
      OptionsForm form;
      const QString path = QDir(folder).filePath(name);
      QVERIFY2(form.loadFile(path), qPrintable(form.lastError()));
      QCOMPARE(form.options().toJson(), Options::fromFile(path.toStdString()).toJson());
      QCOMPARE(form.options().origin(), name.toStdString());
    }
  }

  void resetAndRerunButtons() {
    OptionsForm form;
    QSignalSpy changed(&form, &OptionsForm::optionsChanged);
    QSignalSpy rerun(&form, &OptionsForm::rerunRequested);
    qobject_cast<QComboBox*>(form.editor("oo_level"))->setCurrentText("O1");
    QVERIFY(labelFor(form, "oo_level")->font().bold());
    form.findChild<QPushButton*>("reset")->click();
    QCOMPARE(form.options().toJson(), Options().toJson());
    QCOMPARE(form.options().origin(), std::string("defaults"));
    QVERIFY(!labelFor(form, "oo_level")->font().bold());
    QCOMPARE(changed.count(), 2);
    form.findChild<QPushButton*>("reset")->click();  // already the defaults: nothing changed
    QCOMPARE(changed.count(), 2);
    form.findChild<QPushButton*>("rerun")->click();
    QCOMPARE(rerun.count(), 1);
  }

  void screenshot() {
    OptionsForm form;
    Options o = Options::fromFile(QFINDTESTDATA("../../resources/options/o1.json").toStdString());
    o.setValue("precision_mode", Json("force_fp32"));
    o.setValue("fusion_switch", Json("ConvBiasAddFusion:off"));
    form.setOptions(o);
    form.resize(620, 640);
    form.show();
    typeInto(lineEdit(form, "input_shape"), "x:1,a");  // show a rejected value's message
    QVERIFY(!form.lastError().isEmpty());
    QVERIFY(QDir().mkpath(KILN_ARTIFACTS));
    QVERIFY(form.grab().save(KILN_ARTIFACTS "/options_form.png"));

    // A dark theme: the message's red is re-blended with the new text colour and stays readable.
    QPalette dark = form.palette();
    dark.setColor(QPalette::Window, QColor(0x20, 0x22, 0x26));
    dark.setColor(QPalette::WindowText, QColor(0xe6, 0xe6, 0xe6));
    dark.setColor(QPalette::Base, QColor(0x2a, 0x2c, 0x31));
    dark.setColor(QPalette::Text, QColor(0xe6, 0xe6, 0xe6));
    dark.setColor(QPalette::Button, QColor(0x33, 0x35, 0x3a));
    dark.setColor(QPalette::ButtonText, QColor(0xe6, 0xe6, 0xe6));
    form.setPalette(dark);
    QLabel* message = nullptr;
    for (auto* l : form.findChildren<QLabel*>())
      if (l->isVisible() && l->text() == form.lastError()) message = l;
    QVERIFY(message);
    QVERIFY(message->palette().color(QPalette::WindowText).lightness() > 120);
    QVERIFY(form.grab().save(KILN_ARTIFACTS "/options_form_dark.png"));
  }
};

QTEST_MAIN(TestOptionsForm)
#include "test_options_form.moc"
