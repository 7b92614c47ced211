#include "sluice/engine/registry.h"

#include <algorithm>
#include <cctype>

#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"
#include "sluice/engine/plugin.h"

namespace sluice::engine {
namespace {

template <typename Map>
std::string KnownNames(const Map& formats) {
  std::string names;
  for (const auto& [key, format] : formats) {
    if (!names.empty()) names += ", ";
    names += format.name;
  }
  return names;
}

}  // namespace

Status Registry::RegisterSource(SourceFormat format) {
  std::lock_guard lock(mutex_);
  std::string key = AsciiLower(format.name);
  if (sources_.count(key)) {
    return Status::Error(errors::kInvalidArgument, "a source format named '" + format.name + "' is already registered");
  }
  sources_.emplace(std::move(key), std::move(format));
  return Status::OK();
}

Status Registry::RegisterSink(SinkFormat format) {
  std::lock_guard lock(mutex_);
  std::string key = AsciiLower(format.name);
  if (sinks_.count(key)) {
    return Status::Error(errors::kInvalidArgument, "a sink format named '" + format.name + "' is already registered");
  }
  sinks_.emplace(std::move(key), std::move(format));
  return Status::OK();
}

Status Registry::RegisterForeachBatch(std::string name, ForeachBatchFunction function) {
  std::lock_guard lock(mutex_);
  if (functions_.count(name)) {
    return Status::Error(errors::kInvalidArgument, "a foreachBatch function named '" + name + "' is already registered");
  }
  functions_.emplace(std::move(name), std::move(function));
  return Status::OK();
}

const SourceFormat* Registry::FindSourceFormat(std::string_view format) const {
  std::lock_guard lock(mutex_);
  auto it = sources_.find(AsciiLower(format));
  return it == sources_.end() ? nullptr : &it->second;
}

const SinkFormat* Registry::FindSinkFormat(std::string_view format) const {
  std::lock_guard lock(mutex_);
  auto it = sinks_.find(AsciiLower(format));
  return it == sinks_.end() ? nullptr : &it->second;
}

Result<std::unique_ptr<Source>> Registry::MakeSource(std::string_view format,
                                                     const std::map<std::string, std::string>& options) const {
  const SourceFormat* found = FindSourceFormat(format);
  if (found == nullptr) {
    std::lock_guard lock(mutex_);
    return Status::Error(errors::kDataSourceNotFound,
                         "no source format named '" + std::string(format) + "'; known: " + KnownNames(sources_));
  }
  SLUICE_ASSIGN_OR_RETURN(ValidatedOptions validated,
                          ValidateOptions(found->name + " source", found->options, options, found->error_class));
  return found->make(validated);
}

Result<std::unique_ptr<Sink>> Registry::MakeSink(std::string_view format,
                                                 const std::map<std::string, std::string>& options) const {
  const SinkFormat* found = FindSinkFormat(format);
  if (found == nullptr) {
    std::lock_guard lock(mutex_);
    return Status::Error(errors::kDataSourceNotFound,
                         "no sink format named '" + std::string(format) + "'; known: " + KnownNames(sinks_));
  }
  SLUICE_ASSIGN_OR_RETURN(ValidatedOptions validated,
                          ValidateOptions(found->name + " sink", found->options, options, found->error_class));
  return found->make(validated, *this);
}

Result<ForeachBatchFunction> Registry::FindForeachBatch(std::string_view name) const {
  if (IsPluginFormat(name)) return FindPluginForeachBatch(name);
  std::lock_guard lock(mutex_);
  auto it = functions_.find(std::string(name));
  if (it == functions_.end()) {
    std::string known;
    for (const auto& [registered, function] : functions_) known += (known.empty() ? "" : ", ") + registered;
    return Status::Error(errors::kForeachBatchFunctionNotFound,
                         "no foreachBatch function registered as '" + std::string(name) + "'" +
                             (known.empty() ? std::string("; none is registered") : "; registered: " + known));
  }
  return it->second;
}

}  // namespace sluice::engine
