#pragma once
// Runs the real `kiln` binary (KILN_BINARY) as a user would, with a 60 s limit: exit code and both output streams.
// runKilnLimited adds an address-space limit (ulimit -v), so unbounded allocation fails inside kiln instead of
// swapping the machine.
#include <sys/resource.h>

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
                          int timeoutMs = 60000, unsigned long long addressSpaceBytes = 0) {
  QProcess p;
  p.setProcessEnvironment(env);
#if !defined(__SANITIZE_ADDRESS__)
  // (AddressSanitizer reserves terabytes of address space for its shadow memory: no limit in that build.)
  if (addressSpaceBytes)
    p.setChildProcessModifier([addressSpaceBytes] {
      rlimit lim{};
      lim.rlim_cur = lim.rlim_max = addressSpaceBytes;
      setrlimit(RLIMIT_AS, &lim);
    });
#endif
  p.start(program, args);
  if (!p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished();
    return {-2, {}, "timed out"};
  }
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

// Without DISPLAY / WAYLAND_DISPLAY / QT_QPA_PLATFORM: what a CI job or an ssh session looks like.
inline QProcessEnvironment headlessEnvironment() {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  for (const char* var : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}) env.remove(var);
  return env;
}

inline KilnRun runKiln(const QStringList& args,
                       const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
  return runProgram(QStringLiteral(KILN_BINARY), args, env);
}

// kiln under a 2 GiB address-space limit (what test_cli and the malformed-input corpus run it with).
inline KilnRun runKilnLimited(const QStringList& args,
                              const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
  return runProgram(QStringLiteral(KILN_BINARY), args, env, 60000, 2ull << 30);
}

// Opens `file` (none: the empty workbench) in the workbench of `program` (offscreen) and reports whether it is still up after `ms`: a workbench
// that cannot start (its module missing or not matching the executable) exits at once with code 2 and a message. The
// process is ended either way. Returns the empty string when it stayed up, else what it said.
inline QString workbenchStaysUp(const QString& program, const QString& file, int ms = 3000) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("QT_QPA_PLATFORM", "offscreen");
  QProcess p;
  p.setProcessEnvironment(env);
  p.start(program, file.isEmpty() ? QStringList() : QStringList{file});
  if (!p.waitForStarted(10000)) return "did not start";
  if (p.waitForFinished(ms))
    return QString("exited with %1: %2").arg(p.exitCode()).arg(QString::fromUtf8(p.readAllStandardError()));
  p.kill();
  p.waitForFinished();
  return {};
}
