#pragma once
// Shared by the GUI tests: a widget's screenshot saved under build/tests/artifacts (KILN_ARTIFACTS) for people to
// look at; a failed save fails the test.
#include <QDir>
#include <QWidget>
#include <QtTest>

namespace kiln::testing {

inline void shot(QWidget& w, const QString& name) {
  QDir().mkpath(KILN_ARTIFACTS);
  const QString path = QString(KILN_ARTIFACTS) + "/" + name + ".png";
  QVERIFY(w.grab().save(path));
  qInfo("screenshot: %s", qPrintable(path));
}

}  // namespace kiln::testing
