#include <fmt/format.h>

#include "sluice/core/column_path.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/dml.h"
#include "sluice/delta/snapshot.h"
#include "sluice/delta/table_writer.h"
#include "sluice/delta/writer.h"
#include "sluice/engine/batch_write.h"
#include "sluice/connectors/delta/formats.h"

namespace sluice::connectors {

using engine::BatchInfo;
using engine::BatchWriter;
using engine::OutputMode;
using engine::Sink;
using engine::SinkContext;
using engine::WholeBatchWriter;
using engine::WithWriteTransactionOptions;
using engine::WriteTransaction;
using engine::WriteTransactionOf;

namespace {

constexpr std::string_view kModes[] = {"append", "overwrite", "merge"};

std::string ColumnListProblem(std::string_view text) {
  Result<std::vector<std::string>> columns = ParseColumnList(text);
  return columns.ok() ? "" : std::string(columns.status().message());
}

constexpr OptionSpec kOwnOptions[] = {
    {"path", OptionType::kString, std::nullopt, true, "directory of the Delta table"},
    {"mergeSchema", OptionType::kBool, "false", false, "add new columns of the batches to the table schema"},
    {"partitionBy", OptionType::kString, std::nullopt, false,
     "partition columns of a table the sink creates, comma-separated (a name holding a comma in back quotes); "
     "into an existing table, its own or none",
     {}, std::nullopt, std::nullopt, ColumnListProblem},
    {"mode", OptionType::kEnum, std::nullopt, false, "append, overwrite or merge (each batch MERGEd into the table)",
     kModes},
    {"overwriteSchema", OptionType::kBool, "false", false,
     "with mode overwrite or the complete output mode: the table takes the data's schema and partitionBy's "
     "columns (none: unpartitioned)"},
    {"merge", OptionType::kString, std::nullopt, false,
     "with mode merge: the MERGE statement applied to each batch (its target is the table, its source the batch)"},
    {"delta.*", OptionType::kString, std::nullopt, false,
     "table properties of a table the sink creates (delta.enableDeletionVectors, delta.appendOnly, ...)"},
};
constexpr auto kOptions = WithWriteTransactionOptions(kOwnOptions);

class DeltaSink final : public Sink {
 public:
  // `mode` is empty for a streaming append. With `transaction`, every write records it instead of
  // the query's id and batch id (and is skipped when the table records it already).
  // `merge`, with mode merge: what each batch does to the table.
  // `partition_columns` and `properties`: those of a table the sink creates. `overwrite_schema`: an
  // overwrite gives the table the data's schema and `partition_columns`.
  DeltaSink(std::string path, bool merge_schema, bool overwrite_schema, std::string mode,
            std::optional<WriteTransaction> transaction, std::optional<delta::MergeSpec> merge,
            std::vector<std::string> partition_columns, delta::StringMap properties)
      : path_(std::move(path)),
        merge_schema_(merge_schema),
        overwrite_schema_(overwrite_schema),
        mode_(std::move(mode)),
        transaction_(std::move(transaction)),
        merge_(std::move(merge)),
        partition_columns_(std::move(partition_columns)),
        properties_(std::move(properties)) {}

  std::string description() const override { return "DeltaSink[" + path_ + "]"; }
  // `complete` (an aggregation's whole result every batch) replaces the table's rows in each
  // batch's commit, as Spark's Delta sink does.
  // A merging sink takes each batch's rows as changes: appended rows or an aggregation's updated
  // groups, never a whole result to replace.
  std::vector<OutputMode> supported_output_modes() const override {
    if (merge_) return {OutputMode::kAppend, OutputMode::kUpdate};
    return {OutputMode::kAppend, OutputMode::kComplete};
  }

  Status Open(const SinkContext& context) override {
    file_system_ = context.file_system;
    query_id_ = context.query_id;
    complete_ = context.output_mode == OutputMode::kComplete;
    return Status::OK();
  }

  // Each piece goes into the table's data files as it comes; the commit comes once at the end.
  // A MERGE needs the whole batch.
  Result<std::unique_ptr<BatchWriter>> BeginBatch(const BatchInfo& info) override {
    if (merge_) {
      return std::unique_ptr<BatchWriter>(new WholeBatchWriter(
          info.schema, [this, batch_id = info.batch_id](const std::vector<BatchPtr>& pieces) { return Merge(batch_id, pieces); }));
    }
    return std::unique_ptr<BatchWriter>(new PieceWriter(this, info.batch_id, info.schema));
  }

 private:
  // The table write starts with the first piece, whose schema it takes (an empty batch has the
  // source's schema).
  class PieceWriter final : public BatchWriter {
   public:
    PieceWriter(DeltaSink* sink, int64_t batch_id, TypePtr schema)
        : sink_(sink), batch_id_(batch_id), schema_(std::move(schema)) {}

    Status Add(BatchPtr piece) override {
      if (!table_) SLUICE_RETURN_IF_ERROR(Start(piece->schema()));
      return Context(table_->Write(piece));
    }

    Status Commit() override {
      if (!table_) SLUICE_RETURN_IF_ERROR(Start(schema_));
      SLUICE_RETURN_IF_ERROR(Context(table_->Commit().status()));
      sink_->overwritten_ = true;
      return Status::OK();
    }

   private:
    Status Start(TypePtr schema) {
      Result<std::unique_ptr<delta::TableWriter>> started = delta::TableWriter::Start(
          sink_->file_system_, sink_->path_, std::move(schema), sink_->WriteOptionsFor(batch_id_));
      SLUICE_RETURN_IF_ERROR(Context(started.status()));
      table_ = std::move(*started);
      return Status::OK();
    }
    Status Context(Status status) const { return status.ok() ? status : status.WithContext(sink_->description()); }

    DeltaSink* sink_;
    int64_t batch_id_;
    TypePtr schema_;
    std::unique_ptr<delta::TableWriter> table_;
  };

  delta::SetTransaction TransactionOf(int64_t batch_id) const {
    return transaction_ ? delta::SetTransaction{transaction_->app_id, transaction_->version, std::nullopt}
                        : delta::SetTransaction{query_id_, batch_id, std::nullopt};
  }

  // One MERGE commit per batch, recording the batch's txn (a replay is skipped). A missing table
  // is created first, with the batch's schema and no rows. An existing table's partitioning is
  // checked against partitionBy once.
  Status Merge(int64_t batch_id, const std::vector<BatchPtr>& pieces) {
    if (!partition_columns_.empty() && !partitioning_checked_) {
      Result<delta::SnapshotPtr> table = delta::Snapshot::Load(file_system_, path_);
      if (table.ok()) {
        SLUICE_RETURN_IF_ERROR(
            delta::CheckPartitionColumns((*table)->metadata().partition_columns, partition_columns_)
                .WithContext(description()));
      } else if (table.status().error_class() != errors::kDeltaTableNotFound) {
        return table.status().WithContext(description());
      }
      partitioning_checked_ = true;
    }
    delta::MergeSpec spec = *merge_;
    spec.transactions = {TransactionOf(batch_id)};
    Result<delta::DmlResult> merged = delta::MergeInto(file_system_, path_, pieces, spec);
    if (!merged.ok() && merged.status().error_class() == errors::kDeltaTableNotFound && !pieces.empty()) {
      Result<delta::WriteResult> created =
          delta::WriteTable(file_system_, path_, {RecordBatch::Empty(pieces[0]->schema())},
                            {.partition_columns = partition_columns_, .table_properties = properties_});
      if (!created.ok()) return created.status().WithContext(description());
      merged = delta::MergeInto(file_system_, path_, pieces, spec);
    }
    return merged.ok() ? Status::OK() : merged.status().WithContext(description());
  }

  delta::WriteOptions WriteOptionsFor(int64_t batch_id) const {
    delta::WriteOptions options;
    options.merge_schema = merge_schema_;
    options.overwrite_schema = overwrite_schema_;
    options.partition_columns = partition_columns_;
    options.table_properties = properties_;
    options.transactions = {TransactionOf(batch_id)};
    if (mode_.empty()) {
      options.operation = std::string(delta::kOperationStreamingUpdate);
      options.operation_parameters = {{"outputMode", complete_ ? "Complete" : "Append"},
                                      {"queryId", query_id_},
                                      {"epochId", std::to_string(batch_id)}};
      if (complete_) options.mode = delta::WriteMode::kOverwrite;
    } else if (mode_ == "overwrite" && !overwritten_) {
      options.mode = delta::WriteMode::kOverwrite;
    }
    return options;
  }

  std::string path_;
  bool merge_schema_;
  bool overwrite_schema_;
  std::string mode_;
  std::optional<WriteTransaction> transaction_;
  std::optional<delta::MergeSpec> merge_;
  std::vector<std::string> partition_columns_;
  delta::StringMap properties_;
  bool overwritten_ = false;
  bool partitioning_checked_ = false;
  bool complete_ = false;
  std::shared_ptr<FileSystem> file_system_;
  std::string query_id_;
};

}  // namespace

const std::span<const OptionSpec> kDeltaSinkOptions = kOptions;

Result<std::optional<delta::MergeSpec>> MergeSpecOf(const ValidatedOptions& options) {
  const bool merging = options.Has("mode") && options.GetString("mode") == "merge";
  if (merging != options.Has("merge")) {
    return Status::Error(errors::kInvalidOptions,
                         merging ? "delta sink: mode merge needs the option `merge`, the MERGE statement to apply"
                                 : "delta sink: the option `merge` needs mode merge");
  }
  if (!merging) return std::optional<delta::MergeSpec>();
  Result<expr::DmlStatement> parsed = expr::ParseDml(options.GetString("merge"));
  if (!parsed.ok()) return parsed.status().WithContext("delta sink option `merge`");
  const auto* merge = std::get_if<expr::MergeStatement>(&*parsed);
  if (merge == nullptr) {
    return Status::Error(errors::kInvalidOptions, "delta sink option `merge`: expected a MERGE statement");
  }
  delta::MergeSpec spec{.target_alias = merge->target_alias,
                        .source_alias = merge->source_alias,
                        .on = merge->on,
                        .clauses = merge->clauses,
                        .merge_schema = merge->with_schema_evolution || options.GetBool("mergeSchema")};
  return std::optional<delta::MergeSpec>(std::move(spec));
}

// The `delta.*` options as table properties, named in full ("delta.enableDeletionVectors").
delta::StringMap DeltaProperties(const ValidatedOptions& options) {
  delta::StringMap properties;
  for (const auto& [rest, value] : options.WithPrefix("delta.")) properties["delta." + rest] = value;
  return properties;
}

Result<std::unique_ptr<Sink>> MakeDeltaSink(const ValidatedOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(std::optional<WriteTransaction> transaction, WriteTransactionOf(options));
  SLUICE_ASSIGN_OR_RETURN(std::optional<delta::MergeSpec> merge, MergeSpecOf(options));
  if (options.GetBool("overwriteSchema") && merge) {
    return Status::Error(errors::kInvalidOptions,
                         "delta sink: overwriteSchema needs mode overwrite or the complete output mode, not merge");
  }
  return std::unique_ptr<Sink>(new DeltaSink(options.GetString("path"), options.GetBool("mergeSchema"),
                                             options.GetBool("overwriteSchema"),
                                             options.Has("mode") ? options.GetString("mode") : std::string(),
                                             std::move(transaction), std::move(merge),
                                             options.Has("partitionBy") ? *ParseColumnList(options.GetString("partitionBy"))
                                                                        : std::vector<std::string>(),
                                             DeltaProperties(options)));
}

}  // namespace sluice::connectors
