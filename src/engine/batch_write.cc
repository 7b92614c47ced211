// WriteBatch and the transaction options of batch writes.
#include "sluice/engine/batch_write.h"

#include "sluice/core/error_classes.h"
#include "sluice/core/file_system.h"
#include "sluice/engine/checkpoint.h"
#include "sluice/storage/file_systems.h"

namespace sluice::engine {

Result<std::optional<WriteTransaction>> WriteTransactionOf(const ValidatedOptions& options) {
  const bool app_id = options.Has("txnAppId"), version = options.Has("txnVersion");
  if (app_id != version) {
    return Status::Error(errors::kInvalidOptions,
                         "txnAppId and txnVersion go together: give both to make the write idempotent, or neither");
  }
  if (!app_id) return std::optional<WriteTransaction>();
  if (options.GetString("txnAppId").empty()) return Status::Error(errors::kInvalidOptions, "txnAppId is empty");
  return std::optional<WriteTransaction>(WriteTransaction{options.GetString("txnAppId"), options.GetInt64("txnVersion")});
}

Status WriteBatch(const Registry& registry, std::string_view format, const std::map<std::string, std::string>& options,
                  const RecordBatch& batch) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Sink> sink, registry.MakeSink(format, options));
  SinkContext context;
  // A write of its own: without transaction options nothing ties it to another.
  context.query_id = NewUuid();
  context.query_name = "batch write";
  context.file_system = storage::DefaultFileSystem();
  SLUICE_RETURN_IF_ERROR(sink->Open(context));
  return AddBatch(*sink, 0, batch);
}

}  // namespace sluice::engine
