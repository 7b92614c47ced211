// Registry: the sources and sinks a query can name by format ("rate", "delta", "foreachBatch"),
// each with the table of options it accepts, and the foreachBatch functions registered by name.
// The engine brings its own formats (RegisterBuiltinFormats); the connectors add every other
// (connectors/register_formats.h, whose AllFormatsRegistry() is the registry of the `sluice`
// command).
//
// MakeSource / MakeSink validate the given options against the format's table before building
// anything (unknown keys, wrong types and missing required keys fail with the format's error
// class, naming the key), so bad configuration fails before any data moves.
//
// Thread-safe: registration and lookups may come from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/options.h"
#include "sluice/engine/sink.h"
#include "sluice/engine/source.h"

namespace sluice::engine {

class Registry;

struct SourceFormat {
  std::string name;
  std::span<const OptionSpec> options;  // a static table; must outlive the registry
  std::string_view error_class = errors::kInvalidOptions;
  std::function<Result<std::unique_ptr<Source>>(const ValidatedOptions& options)> make;
};

struct SinkFormat {
  std::string name;
  std::span<const OptionSpec> options;
  std::string_view error_class = errors::kInvalidOptions;
  // The registry is passed so that sinks can look up what is registered by name.
  std::function<Result<std::unique_ptr<Sink>>(const ValidatedOptions& options, const Registry& registry)> make;
};

// What a foreachBatch callback is told of the batch it gets.
struct BatchContext {
  // The batch's id: after a crash the replayed batch comes with the same id, so a callback whose
  // writes record it (WriteBatch's `txnAppId`/`txnVersion`, batch_write.h) writes each batch once.
  int64_t batch_id = 0;
  // The query's id, stable across restarts of its checkpoint: the natural `txnAppId`.
  std::string query_id;
  // The query's name: the flow's name in a pipeline.
  std::string flow_name;
  // The registry the foreachBatch sink was made from (every format the running program knows:
  // `delta`, `parquet`, `postgresql`, ... under the `sluice` command), for the callback's own
  // writes (WriteBatch, batch_write.h); null for a sink made without one.
  const Registry* registry = nullptr;
  // The sink's `arg.*` options, keyed without `arg.` (`arg.target: /w/t` gives {"target": "/w/t"}):
  // what a function shared by several sinks is told apart by.
  std::map<std::string, std::string> arguments;
};

// A foreachBatch callback. The batch is read-only and valid only during the call: its buffers are
// not to be kept, which lets a Python binding hand them out without copying. A failed Status
// stops the query with that error (the batch runs again when the query restarts). Calls for one
// query never overlap; callbacks of several queries may run at once.
using ForeachBatchFunction = std::function<Status(const RecordBatch& batch, const BatchContext& context)>;

class Registry {
 public:
  // An empty registry.
  Registry() = default;

  // INVALID_ARGUMENT when the name (case-insensitive) is already taken.
  Status RegisterSource(SourceFormat format);
  Status RegisterSink(SinkFormat format);
  Status RegisterForeachBatch(std::string name, ForeachBatchFunction function);

  // DATA_SOURCE_NOT_FOUND for an unknown format (listing the known ones); the format's error
  // class for invalid options; whatever the factory returns otherwise.
  Result<std::unique_ptr<Source>> MakeSource(std::string_view format,
                                             const std::map<std::string, std::string>& options) const;
  Result<std::unique_ptr<Sink>> MakeSink(std::string_view format,
                                         const std::map<std::string, std::string>& options) const;
  // The function registered under `name`, or for `plugin:/abs/path/libx.so:function` the one a
  // plugin library registered under `function` (loaded as LoadPlugin loads it: the same ABI check
  // and errors). FOREACH_BATCH_FUNCTION_NOT_FOUND when nothing is registered under the name.
  Result<ForeachBatchFunction> FindForeachBatch(std::string_view name) const;

  // Options of a format, for `sluice validate` and documentation; nullptr when unknown.
  const SourceFormat* FindSourceFormat(std::string_view format) const;
  const SinkFormat* FindSinkFormat(std::string_view format) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, SourceFormat> sources_;  // keyed by lower-case name
  std::map<std::string, SinkFormat> sinks_;
  std::map<std::string, ForeachBatchFunction> functions_;  // keyed by name as given
};

// Adds the engine's own formats to `registry`: the source `rate`; the sinks `memory`, `console` and
// `foreachBatch`. INVALID_ARGUMENT when one of the names is taken already.
Status RegisterBuiltinFormats(Registry* registry);

}  // namespace sluice::engine
