// One batch written through a sink as a batch job writes it, and the `txnAppId` / `txnVersion`
// options that make such a write idempotent: what a foreachBatch callback uses to write its batch
// into one or more tables exactly once.
//
//   Status WriteTwoTables(const RecordBatch& batch, const BatchContext& context) {
//     std::string version = std::to_string(context.batch_id);
//     SLUICE_RETURN_IF_ERROR(WriteBatch(*context.registry, "delta", {{"path", "/w/a"}, {"mode", "append"},
//         {"txnAppId", context.query_id + "-a"}, {"txnVersion", version}}, batch));
//     return WriteBatch(*context.registry, "parquet", {{"path", "/w/b"}, {"mode", "append"},
//         {"txnAppId", context.query_id + "-b"}, {"txnVersion", version}}, batch);
//   }
//
// When the callback fails between the two writes, the batch is replayed with the same id: the
// Delta table already records version N for its app id and skips the write; the file sink does
// the one it missed.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sluice/core/options.h"
#include "sluice/core/record_batch.h"
#include "sluice/engine/registry.h"

namespace sluice::engine {

// The options `txnAppId` (an application's name for its writes) and `txnVersion` (a number that
// grows with each write of that application, such as a batch id), both or neither, as the option
// tables of the `delta`, `parquet`, `csv` and `json` sinks hold them. A write whose version is not
// above the last one recorded for its app id is skipped: a Delta table records them as its
// `txn` actions, a file sink directory in `_sluice_transactions/<txnAppId>` beside its files
// (the app id is then 1 to 255 ASCII letters, digits, `_` and `-`).
inline constexpr OptionSpec kWriteTransactionOptions[] = {
    {.name = "txnAppId", .doc = "with txnVersion: the application whose writes are made idempotent"},
    {.name = "txnVersion",
     .type = OptionType::kLong,
     .doc = "with txnAppId: the write is skipped unless above the last version recorded for the app id",
     .minimum = 0},
};

// A sink's option table `options` followed by kWriteTransactionOptions.
template <size_t N>
constexpr std::array<OptionSpec, N + std::size(kWriteTransactionOptions)> WithWriteTransactionOptions(
    const OptionSpec (&options)[N]) {
  std::array<OptionSpec, N + std::size(kWriteTransactionOptions)> all{};
  size_t i = 0;
  for (const OptionSpec& option : options) all[i++] = option;
  for (const OptionSpec& option : kWriteTransactionOptions) all[i++] = option;
  return all;
}

struct WriteTransaction {
  std::string app_id;
  int64_t version = 0;
};

// The transaction the options name; nullopt when neither is given. INVALID_OPTIONS when only one
// is. `options` must have been validated against a table holding kWriteTransactionOptions.
Result<std::optional<WriteTransaction>> WriteTransactionOf(const ValidatedOptions& options);

// Writes `batch` through the sink `format` of `registry` with `options` (the sink's own, `mode`
// and the transaction options included), as one batch of a batch job. The options are validated
// first (the format's error class); the sink's write errors otherwise. Thread-safe as the sink
// is: writes to different destinations may run at once.
Status WriteBatch(const Registry& registry, std::string_view format, const std::map<std::string, std::string>& options,
                  const RecordBatch& batch);

}  // namespace sluice::engine
