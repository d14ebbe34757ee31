#include "gui/gui_main.h"

#include <QApplication>
#include <QStyleHints>
#include <QTimer>
#include <cstdlib>
#include <iostream>

#include "main_window.h"

namespace kiln::app {

bool displayAvailable() {
  // An explicit platform (offscreen, vnc, ...) is the user's choice; otherwise X11 or Wayland must be there.
  for (const char* var : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
    if (const char* v = std::getenv(var); v && *v) return true;
  return false;
}

int runWorkbench(int argc, char** argv, const std::string& file) {
  if (!displayAvailable()) {
    std::cerr << "kiln: no display (DISPLAY / WAYLAND_DISPLAY unset): the workbench needs one.\n"
                 "      Headless: kiln compile MODEL, kiln inspect MODEL, kiln history list DB (kiln help).\n"
                 "      Or run it under xvfb-run -a.\n";
    return 2;
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Kiln");
  QApplication::setApplicationName("Kiln");
  QApplication::setApplicationDisplayName("Kiln");
  MainWindow w;
  w.show();
  if (!file.empty()) {
    const QString path = QString::fromLocal8Bit(file.c_str());
    QTimer::singleShot(0, &w, [&w, path] { w.openPath(path); });
  }
  return app.exec();
}

}  // namespace kiln::app
