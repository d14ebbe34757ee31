// The installed layout (`cmake --install`, the same tree the .deb holds under /usr) works from wherever it lands:
// every file the package promises is there, `kiln --version` answers, the installed binary finds the SoC profiles next
// to itself (a profile only the install holds is found), `kiln batch` runs on the installed option sets, and the
// workbench module is found and loaded (or, removed, named in a clear refusal).
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "support/kiln_process.h"

namespace {

// Headless, and without KILN_SOC_DIR: only the installed tree (and what the binary was built with) is searched.
KilnRun run(const QString& program, const QStringList& args) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  for (const char* var : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "KILN_SOC_DIR"}) env.remove(var);
  return runProgram(program, args, env, 120000);
}

}  // namespace

class InstallTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir tmp_;

 private slots:
  void installedTreeWorks() {
    const QString prefix = tmp_.filePath("prefix");
    const KilnRun install = run(QStringLiteral(KILN_CMAKE), {"--install", QStringLiteral(KILN_BUILD_DIR), "--prefix", prefix, "--strip"});
    QVERIFY2(install.code == 0, qPrintable(install.err));
    for (const char* file : {"bin/kiln", "share/kiln/soc/ascend910a.json", "share/kiln/options/default.json",
                             "share/kiln/options/o1.json", "share/applications/kiln.desktop",
                             "share/icons/hicolor/scalable/apps/kiln.svg",
                             "share/metainfo/io.github.kiln.Kiln.metainfo.xml", "share/man/man1/kiln.1.gz"})
      QVERIFY2(QFile::exists(prefix + "/" + file), file);
    const QString kiln = prefix + "/bin/kiln";
    const KilnRun version = run(kiln, {"--version"});
    QCOMPARE(version.code, 0);
    QVERIFY(version.out.startsWith("kiln "));

    // A profile that exists only in the installed tree: found through the binary's own location.
    QVERIFY(QFile::copy(prefix + "/share/kiln/soc/ascend910a.json", prefix + "/share/kiln/soc/installed_only.json"));
    const QString model = tmp_.filePath("m.onnx");
    QCOMPARE(run(kiln, {"sample", "bert-base", "--layers", "1", "--no-weights", "-o", model}).code, 0);
    const KilnRun soc = run(kiln, {"run", model, "--soc", "installed_only", "--json"});
    QVERIFY2(soc.code == 0, qPrintable(soc.err));

    const QString out = tmp_.filePath("report");
    const KilnRun batch = run(kiln, {"batch", "--models", model, "--options", prefix + "/share/kiln/options/default.json",
                                    "--options", prefix + "/share/kiln/options/o1.json", "--out", out, "--timing-only",
                                    "--quiet"});
    QVERIFY2(batch.code == 0, qPrintable(batch.err));
    QVERIFY(QFile::exists(out + "/junit.xml"));

    // The workbench is a module the installed binary loads from lib/.../kiln/; without it the binary says so and
    // the headless commands still run.
    const QString opened = workbenchStaysUp(kiln, model);
    QVERIFY2(opened.isEmpty(), qPrintable(opened));
    QString module;
    for (QDirIterator it(prefix, {"kiln_workbench.so"}, QDir::Files, QDirIterator::Subdirectories); it.hasNext();)
      module = it.next();
    QVERIFY2(module.contains("/lib"), qPrintable(module));
    QVERIFY(QFile::remove(module));
    QProcessEnvironment offscreen = QProcessEnvironment::systemEnvironment();
    offscreen.insert("QT_QPA_PLATFORM", "offscreen");
    const KilnRun missing = runProgram(kiln, {model}, offscreen);
    QCOMPARE(missing.code, 2);
    QVERIFY2(missing.err.contains("cannot load the workbench") && missing.err.contains("kiln_workbench.so"),
             qPrintable(missing.err));
    QCOMPARE(run(kiln, {"inspect", model}).code, 0);
  }
};

QTEST_GUILESS_MAIN(InstallTest)
#include "test_install.moc"
