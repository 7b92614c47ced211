// Loading plugin libraries: dlopen, the descriptor's ABI check, and re-registering the plugin's
// formats under the `plugin:<path>` name.
#include "sluice/engine/plugin.h"

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"

namespace sluice::engine {
namespace {

struct LoadedPlugin {
  std::string name;
  std::unique_ptr<Registry> formats;  // what the plugin registered
};

std::mutex& LoadMutex() {
  static std::mutex mutex;
  return mutex;
}

// Plugins by path; never unloaded, since sources and sinks made from them run their code.
std::map<std::string, LoadedPlugin>& LoadedPlugins() {
  static auto* plugins = new std::map<std::string, LoadedPlugin>();
  return *plugins;
}

Result<const LoadedPlugin*> Load(const std::string& path) {
  auto& plugins = LoadedPlugins();
  if (auto it = plugins.find(path); it != plugins.end()) return &it->second;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = dlerror();
    return Status::Error(errors::kPluginLoadFailed,
                         fmt::format("cannot load plugin {}: {}", path, reason ? reason : "unknown reason"));
  }
  auto entry = reinterpret_cast<SluicePluginEntryPoint>(dlsym(handle, "sluice_plugin"));
  if (entry == nullptr) {
    dlclose(handle);
    return Status::Error(errors::kPluginSymbolNotFound,
                         fmt::format("{} exports no `sluice_plugin` function: is it a sluice plugin built with "
                                     "SLUICE_PLUGIN (sluice/engine/plugin.h)?",
                                     path));
  }
  const PluginDescriptor* descriptor = entry();
  if (descriptor == nullptr || descriptor->abi_version != kPluginAbiVersion) {
    uint32_t version = descriptor ? descriptor->abi_version : 0;
    dlclose(handle);
    return Status::Error(errors::kPluginAbiMismatch,
                         fmt::format("plugin {} was built for plugin ABI version {}, this sluice has version {}; "
                                     "rebuild the plugin against this sluice's headers",
                                     path, version, kPluginAbiVersion));
  }
  LoadedPlugin plugin{descriptor->name ? descriptor->name : "", std::make_unique<Registry>()};
  Status registered = descriptor->register_formats(plugin.formats.get());
  if (!registered.ok()) {
    return Status::Error(errors::kPluginLoadFailed,
                         fmt::format("plugin {} ({}) failed to register its formats: {}", path, plugin.name,
                                     registered.ToString()));
  }
  return &plugins.emplace(path, std::move(plugin)).first->second;
}

// The library path of `plugin:/abs/path/libx.so`.
Result<std::string> LibraryPath(std::string_view format, std::string_view shape) {
  std::string path(format.substr(kPluginFormatPrefix.size()));
  if (path.empty() || path[0] != '/') {
    return Status::Error(errors::kPluginLoadFailed,
                         fmt::format("plugin `{}` must name the library by absolute path: {}", format, shape));
  }
  return path;
}

}  // namespace

bool IsPluginFormat(std::string_view format) { return format.starts_with(kPluginFormatPrefix); }

Status LoadPlugin(Registry* registry, std::string_view format) {
  if (!IsPluginFormat(format)) return Status::OK();
  SLUICE_ASSIGN_OR_RETURN(std::string path, LibraryPath(format, "plugin:/path/libx.so"));
  std::lock_guard lock(LoadMutex());
  SLUICE_ASSIGN_OR_RETURN(const LoadedPlugin* plugin, Load(path));
  if (!plugin->formats->FindSourceFormat(plugin->name) && !plugin->formats->FindSinkFormat(plugin->name)) {
    return Status::Error(errors::kPluginLoadFailed,
                         fmt::format("plugin {} registered no source or sink named `{}`, its descriptor's name", path,
                                     plugin->name));
  }
  if (const SourceFormat* source = plugin->formats->FindSourceFormat(plugin->name);
      source && !registry->FindSourceFormat(format)) {
    SourceFormat named = *source;
    named.name = std::string(format);
    SLUICE_RETURN_IF_ERROR(registry->RegisterSource(std::move(named)));
  }
  if (const SinkFormat* sink = plugin->formats->FindSinkFormat(plugin->name); sink && !registry->FindSinkFormat(format)) {
    SinkFormat named = *sink;
    named.name = std::string(format);
    SLUICE_RETURN_IF_ERROR(registry->RegisterSink(std::move(named)));
  }
  return Status::OK();
}

Result<ForeachBatchFunction> FindPluginForeachBatch(std::string_view reference) {
  constexpr std::string_view kShape = "plugin:/path/libx.so:function";
  size_t colon = reference.rfind(':');
  if (!IsPluginFormat(reference) || colon < kPluginFormatPrefix.size() || colon + 1 == reference.size()) {
    return Status::Error(errors::kPluginLoadFailed,
                         fmt::format("foreachBatch function `{}` is not of the form {}", reference, kShape));
  }
  SLUICE_ASSIGN_OR_RETURN(std::string path, LibraryPath(reference.substr(0, colon), kShape));
  std::lock_guard lock(LoadMutex());
  SLUICE_ASSIGN_OR_RETURN(const LoadedPlugin* plugin, Load(path));
  Result<ForeachBatchFunction> function = plugin->formats->FindForeachBatch(reference.substr(colon + 1));
  if (!function.ok()) return function.status().WithContext("plugin " + path);
  return function;
}

}  // namespace sluice::engine
