// A test library that claims a plugin ABI version no sluice has: loading it must fail with
// PLUGIN_ABI_MISMATCH before its register function could run.
#include "sluice/engine/plugin.h"

extern "C" __attribute__((visibility("default"))) const sluice::engine::PluginDescriptor* sluice_plugin() {
  static const sluice::engine::PluginDescriptor descriptor = {
      sluice::engine::kPluginAbiVersion + 1000, "future", nullptr};
  return &descriptor;
}
