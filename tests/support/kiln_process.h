#pragma once
// Runs the real `kiln` binary (KILN_BINARY) as a user would, with a 60 s limit: exit code and both output streams.
#include <QProcess>
#include <QString>
#include <QStringList>

struct KilnRun {
  int code = -1;  // -1 crashed, -2 timed out
  QString out, err;
};

// Any program (an installed copy of kiln, cmake) under the same rules.
inline KilnRun runProgram(const QString& program, const QStringList& args,
                          const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment(),
                          int timeoutMs = 60000) {
  QProcess p;
  p.setProcessEnvironment(env);
  p.start(program, args);
  if (!p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished();
    return {-2, {}, "timed out"};
  }
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

inline KilnRun runKiln(const QStringList& args,
                       const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
  return runProgram(QStringLiteral(KILN_BINARY), args, env);
}
