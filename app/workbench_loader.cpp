#include "workbench_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <system_error>

namespace kiln::app {
namespace {

constexpr const char* kModuleName = "kiln_workbench.so";

// Next to the executable (a build tree), then where the install puts it relative to bin/.
std::filesystem::path findModule() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return kModuleName;  // left to the loader's search path
  const std::filesystem::path dir = exe.parent_path();
  for (const auto& candidate : {dir / kModuleName, dir / KILN_WORKBENCH_RELDIR / kModuleName})
    if (std::filesystem::exists(candidate, ec)) return candidate.lexically_normal();
  return dir / KILN_WORKBENCH_RELDIR / kModuleName;
}

}  // namespace

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
  const std::filesystem::path module = findModule();
  // RTLD_NOW: a module that does not match this executable fails here, with the missing symbol named, not later.
  void* handle = dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    std::cerr << "kiln: cannot load the workbench " << module.string() << ": " << (why ? why : "unknown error")
              << "\n      The headless commands still work (kiln help).\n";
    return 2;
  }
  auto entry = reinterpret_cast<WorkbenchEntry>(dlsym(handle, kWorkbenchEntry));
  if (!entry) {
    std::cerr << "kiln: " << module.string() << " is not Kiln's workbench (no " << kWorkbenchEntry << ")\n";
    return 2;
  }
  // The module stays loaded until the process ends: Qt's own exit handlers run from it.
  return entry(argc, argv, file.c_str());
}

}  // namespace kiln::app
