// A foreachBatch function in a plugin: `write_two_tables` writes each batch into a Delta table
// (the sink's `arg.delta` option) and a Parquet directory (`arg.parquet`), each write made
// idempotent by the batch id (txnAppId / txnVersion), so that a batch replayed after a failure
// between the two writes adds its rows to each target once.
//
//   sinks:
//     both:
//       format: foreachBatch
//       options:
//         function: plugin:/path/libsluice_two_tables_plugin.so:write_two_tables
//         arg.delta: /warehouse/main/copies/events
//         arg.parquet: /exports/events
#include <string>

#include "sluice/core/error_classes.h"
#include "sluice/engine/batch_write.h"
#include "sluice/engine/plugin.h"

namespace {

using sluice::Status;
using sluice::engine::BatchContext;
using sluice::engine::Registry;

Status WriteTwoTables(const sluice::RecordBatch& batch, const BatchContext& context) {
  auto delta = context.arguments.find("delta");
  auto parquet = context.arguments.find("parquet");
  if (delta == context.arguments.end() || parquet == context.arguments.end()) {
    return Status::Error(sluice::errors::kInvalidOptions, "write_two_tables needs the options arg.delta and arg.parquet");
  }
  if (context.registry == nullptr) {
    return Status::Error(sluice::errors::kInvalidArgument, "write_two_tables writes through the sink's registry");
  }
  // One app id per target and query: the version is the batch id, which a replay repeats.
  const std::string version = std::to_string(context.batch_id);
  SLUICE_RETURN_IF_ERROR(sluice::engine::WriteBatch(*context.registry, "delta",
                                                    {{"path", delta->second},
                                                     {"mode", "append"},
                                                     {"txnAppId", context.query_id + "-delta"},
                                                     {"txnVersion", version}},
                                                    batch));
  return sluice::engine::WriteBatch(*context.registry, "parquet",
                                    {{"path", parquet->second},
                                     {"mode", "append"},
                                     {"txnAppId", context.query_id + "-parquet"},
                                     {"txnVersion", version}},
                                    batch);
}

Status Register(Registry* registry) { return registry->RegisterForeachBatch("write_two_tables", WriteTwoTables); }

}  // namespace

SLUICE_PLUGIN("two_tables", Register)
