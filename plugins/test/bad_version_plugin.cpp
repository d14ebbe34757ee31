// A plugin built for an API version this Kiln does not provide: must be refused with a message, never called.
#include <cstdlib>

#include "kiln_plugin.h"

extern "C" int kiln_plugin_api_version() { return 99; }
extern "C" void kiln_plugin_register(kiln::plugin::Registry&) { std::abort(); }
