// A shared library that is not a Kiln plugin (no kiln_plugin_register): must be refused with a message.
extern "C" int kiln_plugin_api_version() { return 2; }
