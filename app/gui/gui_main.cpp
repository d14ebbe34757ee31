// The workbench module's entry point, called by the kiln executable (app/workbench_loader.cpp) once it has checked
// that there is a display.
#include <QApplication>
#include <QTimer>
#include <type_traits>

#include "main_window.h"
#include "workbench_loader.h"

extern "C" __attribute__((visibility("default"))) int kiln_workbench_main(int argc, char** argv, const char* file) {
  static_assert(std::is_same_v<decltype(&kiln_workbench_main), kiln::app::WorkbenchEntry>);
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Kiln");
  QApplication::setApplicationName("Kiln");
  QApplication::setApplicationDisplayName("Kiln");
  kiln::app::MainWindow w;
  w.show();
  if (file && *file) {
    const QString path = QString::fromLocal8Bit(file);
    QTimer::singleShot(0, &w, [&w, path] { w.openPath(path); });
  }
  return app.exec();
}
