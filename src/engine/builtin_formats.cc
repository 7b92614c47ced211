// The option tables and factories of the engine's own formats.
#include <iostream>

#include "sluice/engine/builtin_sinks.h"
#include "sluice/engine/memory_sink.h"
#include "sluice/engine/rate_source.h"
#include "sluice/engine/registry.h"

namespace sluice::engine {
namespace {

constexpr OptionSpec kMemorySinkOptions[] = {
    {"queryName", OptionType::kString, std::nullopt, true, "name of the in-process table the rows go to"},
};

constexpr OptionSpec kConsoleSinkOptions[] = {
    {"numRows", OptionType::kInt, "20", false, "rows printed per batch", {}, 0},
};

constexpr OptionSpec kForeachBatchSinkOptions[] = {
    {"function", OptionType::kString, std::nullopt, true,
     "name under which the callback was registered, or plugin:/path/libx.so:name"},
    {"arg.*", OptionType::kString, std::nullopt, false, "arguments for the callback, in its context without `arg.`"},
};

}  // namespace

Status RegisterBuiltinFormats(Registry* registry) {
  SLUICE_RETURN_IF_ERROR(registry->RegisterSource({"rate", kRateSourceOptions, errors::kInvalidOptions, MakeRateSource}));
  SLUICE_RETURN_IF_ERROR(registry->RegisterSink(
      {"memory", kMemorySinkOptions, errors::kInvalidOptions,
       [](const ValidatedOptions& options, const Registry&) -> Result<std::unique_ptr<Sink>> {
         return std::unique_ptr<Sink>(new MemorySink(MemoryTable::Named(options.GetString("queryName"))));
       }}));
  SLUICE_RETURN_IF_ERROR(registry->RegisterSink(
      {"console", kConsoleSinkOptions, errors::kInvalidOptions,
       [](const ValidatedOptions& options, const Registry&) -> Result<std::unique_ptr<Sink>> {
         return MakeConsoleSink(&std::cout, options.GetInt64("numRows"));
       }}));
  return registry->RegisterSink(
      {"foreachBatch", kForeachBatchSinkOptions, errors::kInvalidOptions,
       [](const ValidatedOptions& options, const Registry& registry) -> Result<std::unique_ptr<Sink>> {
         const std::string& name = options.GetString("function");
         SLUICE_ASSIGN_OR_RETURN(ForeachBatchFunction function, registry.FindForeachBatch(name));
         return MakeForeachBatchSink(name, std::move(function), options.WithPrefix("arg."), &registry);
       }});
}

}  // namespace sluice::engine
