#pragma once
// Runs the real `kiln` binary (KILN_BINARY) as a user would, with a 60 s limit: exit code and both output streams.
#include <QProcess>
#include <QString>
#include <QStringList>

struct KilnRun {
  int code = -1;  // -1 crashed, -2 timed out
  QString out, err;
};

inline KilnRun runKiln(const QStringList& args,
                       const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
  QProcess p;
  p.setProcessEnvironment(env);
  p.start(QStringLiteral(KILN_BINARY), args);
  if (!p.waitForFinished(60000)) {
    p.kill();
    p.waitForFinished();
    return {-2, {}, "timed out"};
  }
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}
