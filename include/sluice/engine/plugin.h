// Plugins: sources and sinks in shared libraries, loaded by path (docs/plugins.md).
//
// A plugin is a shared library that exports one C-linkage function, `sluice_plugin`, returning a
// static PluginDescriptor. A query names the library as its format, `plugin:/abs/path/libx.so`;
// LoadPlugin() opens the library, checks the descriptor's ABI version, and calls its
// `register_formats` with a registry of its own. The source and/or sink the plugin registers
// there under the descriptor's `name` are then registered in the caller's registry under
// the format name `plugin:/abs/path/libx.so`, with the plugin's own option table: options given
// to that format are validated against it and passed to the plugin's factory.
//
//   // libsequence.so
//   #include "sluice/engine/plugin.h"
//   static sluice::Status RegisterFormats(sluice::engine::Registry* registry) {
//     return registry->RegisterSource({"sequence", kOptions, sluice::errors::kInvalidOptions, MakeSequence});
//   }
//   SLUICE_PLUGIN("sequence", RegisterFormats)
//
// ABI: the interface a plugin sees is C++ (Registry, Source, Sink, Status, columns), so a plugin
// must be built with the same compiler and standard library, against the same sluice headers, as
// the sluice that loads it. kPluginAbiVersion changes whenever those headers change in a way
// that breaks a built plugin; a library built for another version is refused before any of its
// code but `sluice_plugin` runs. The descriptor's layout (abi_version first) never changes.
//
// A loaded library stays loaded for the life of the process (its code backs the sources and
// sinks made from it); loading the same path again reuses it. Thread-safe.
//
// Errors: PLUGIN_LOAD_FAILED (no such file, not a shared library, unresolved symbols, a path
// that is not absolute, or a plugin that registers nothing or its own error), PLUGIN_SYMBOL_NOT_FOUND
// (no `sluice_plugin` export), PLUGIN_ABI_MISMATCH (built for another ABI version).
#pragma once

#include <cstdint>
#include <string_view>

#include "sluice/engine/registry.h"

namespace sluice::engine {

inline constexpr uint32_t kPluginAbiVersion = 10;

// The format prefix that names a plugin library: `plugin:/path/libx.so`.
inline constexpr std::string_view kPluginFormatPrefix = "plugin:";

struct PluginDescriptor {
  uint32_t abi_version;  // kPluginAbiVersion of the headers the plugin was built against
  const char* name;      // the name its source and/or sink are registered under

  // Registers the plugin's source and/or sink, and any foreachBatch functions, into `registry`
  // (a fresh one, private to loading).
  Status (*register_formats)(Registry* registry);
};

// Whether `format` names a plugin (starts with kPluginFormatPrefix).
bool IsPluginFormat(std::string_view format);

// Makes the plugin format `format` (`plugin:/abs/path/libx.so`) known to `registry`: loads the
// library once per process, and registers its source and sink under `format` unless the registry
// already has them. OK without doing anything when `format` is not a plugin format.
// PLUGIN_LOAD_FAILED when the plugin registered neither under its descriptor's name.
Status LoadPlugin(Registry* registry, std::string_view format);

// The foreachBatch function `plugin:/abs/path/libx.so:function` names: loads the library as
// LoadPlugin does and returns what it registered as `function` (FOREACH_BATCH_FUNCTION_NOT_FOUND
// when nothing; PLUGIN_LOAD_FAILED for a reference of another shape).
Result<ForeachBatchFunction> FindPluginForeachBatch(std::string_view reference);

}  // namespace sluice::engine

// The one export of a plugin library.
extern "C" {
typedef const sluice::engine::PluginDescriptor* (*SluicePluginEntryPoint)();
}

// Defines the export: SLUICE_PLUGIN("name", function registering the formats).
#define SLUICE_PLUGIN(plugin_name, register_function)                                     \
  extern "C" __attribute__((visibility("default"))) const sluice::engine::PluginDescriptor* \
  sluice_plugin() {                                                                       \
    static const sluice::engine::PluginDescriptor descriptor = {                          \
        sluice::engine::kPluginAbiVersion, plugin_name, register_function};              \
    return &descriptor;                                                                   \
  }
