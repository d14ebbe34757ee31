// The workbench opens an Ascend .om like any model: the shared ATC-built model compiles into the history and its graph
// is drawn; a corrupt .om is refused with a message naming the file (never a crash or a hang).
#include <QFileInfo>
#include <QGraphicsScene>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include "graph_canvas.h"
#include "main_window.h"

using namespace kiln;

namespace {
bool settled(app::MainWindow& w) { return !w.busy() && w.canvas()->passView() && !w.canvas()->scene()->items().isEmpty(); }
}  // namespace

class OmWorkbenchTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir tmp_;

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
  }

  void opensTheSharedOm() {
    const QString model = QString(KILN_SHARED_DIR) + "/models/om/a3c_pong_model.om";
    if (!QFileInfo(model).isFile()) QSKIP(qPrintable("shared .om model not found at " + model));
    app::MainWindow w;
    w.setHistoryPath(tmp_.filePath("om.db"));
    w.resize(1200, 800);
    w.show();
    QSignalSpy errors(&w, &app::MainWindow::errorShown);
    w.openPath(model);
    QTRY_VERIFY2_WITH_TIMEOUT(settled(w) || (!errors.isEmpty() && !w.busy()), "open did not finish", 120000);
    QVERIFY2(errors.isEmpty(), errors.isEmpty() ? "" : qPrintable(errors.first().first().toString()));
    QVERIFY(w.currentRun() > 0);
    QDir().mkpath(QString(KILN_ARTIFACTS));
    w.grab().save(QString(KILN_ARTIFACTS) + "/om_workbench.png");
  }

  void refusesACorruptOmClearly() {
    const QString path = tmp_.filePath("broken_model.om");
    std::ofstream(path.toStdString(), std::ios::binary) << std::string("IMOD\x00\x01\x00\x00", 8) << std::string(300, '\0');
    app::MainWindow w;
    w.setHistoryPath(tmp_.filePath("broken.db"));
    w.show();
    QSignalSpy errors(&w, &app::MainWindow::errorShown);
    w.openPath(path);
    QTRY_VERIFY_WITH_TIMEOUT(!errors.isEmpty() && !w.busy(), 60000);
    const QString msg = errors.first().first().toString();
    qInfo("%s", qPrintable(msg));
    QVERIFY2(msg.contains("broken_model.om") && msg.contains("bytes follow the header"), qPrintable(msg));
  }
};

QTEST_MAIN(OmWorkbenchTest)
#include "test_om_workbench.moc"
