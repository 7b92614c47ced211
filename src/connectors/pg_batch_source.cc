#include "sluice/connectors/pg_batch_source.h"

#include "sluice/connectors/pg_batch_reader.h"
#include "sluice/connectors/pg_connection.h"
#include "sluice/core/error_classes.h"
#include "sluice/engine/read_once_source.h"

namespace sluice::connectors {

namespace {


constexpr auto kOptions = WithPgConnectionOptions({
    {"query", OptionType::kString, std::nullopt, false, "SQL query run by the database; exactly one of query, dbtable."},
    {"dbtable", OptionType::kString, std::nullopt, false, "Table read whole, `table` or `schema.table`."},
    {"partition_column", OptionType::kString, std::nullopt, false, "Numeric column to split a parallel read on."},
    {"lower_bound", OptionType::kLong, std::nullopt, false, "Start of the partition strides (not a filter)."},
    {"upper_bound", OptionType::kLong, std::nullopt, false, "End of the partition strides (not a filter)."},
    {.name = "num_partitions", .type = OptionType::kInt, .default_value = "1", .doc = "Parallel partitions, one connection each.",
     .minimum = 1, .maximum = 256},
    {.name = "batch_size", .type = OptionType::kLong, .default_value = "65536", .doc = "Most rows per record batch.",
     .minimum = 1},
});



Status InvalidOption(std::string message) {
  return Status::Error(errors::kInvalidOptions, "postgresql source: " + std::move(message));
}

class PostgresBatchSource final : public engine::ReadOnceSource {
 public:
  static Result<std::unique_ptr<engine::Source>> Make(const ValidatedOptions& options) {
    PgBatchReadOptions read;
    if (options.Has("query") == options.Has("dbtable")) {
      return InvalidOption("give exactly one of `query` (a SQL query) and `dbtable` (a table)");
    }
    if (options.Has("query")) read.query = options.GetString("query");
    if (options.Has("dbtable")) read.dbtable = options.GetString("dbtable");
    int partition_options = options.Has("partition_column") + options.Has("lower_bound") + options.Has("upper_bound");
    if (partition_options != 0 && partition_options != 3) {
      return InvalidOption("`partition_column`, `lower_bound` and `upper_bound` go together: give all three or none");
    }
    if (partition_options == 3) {
      read.partition_column = options.GetString("partition_column");
      read.lower_bound = options.GetInt64("lower_bound");
      read.upper_bound = options.GetInt64("upper_bound");
    }
    read.num_partitions = static_cast<int>(options.GetInt64("num_partitions"));
    if (read.num_partitions > 1 && partition_options == 0 && read.query) {
      return InvalidOption("`num_partitions` above 1 with a `query` needs `partition_column`, `lower_bound` and "
                           "`upper_bound` (a `dbtable` is split by block ranges without them)");
    }
    read.batch_size = options.GetInt64("batch_size");
    read.conninfo = PgConninfo(options, options.GetString("database"));
    std::string what = read.query ? "query" : "dbtable=" + *read.dbtable;
    return std::unique_ptr<engine::Source>(new PostgresBatchSource(std::move(read), std::move(what)));
  }

  std::string description() const override { return "PostgresBatchSource[" + what_ + "]"; }
  TypePtr schema() const override { return schema_; }

  // Connects and learns the result's schema, so a bad query or credentials fail before any batch.
  Status Open(const engine::SourceContext&) override {
    SLUICE_ASSIGN_OR_RETURN(reader_, PgBatchReader::Open(options_));
    schema_ = reader_->schema();
    return Status::OK();
  }

  // The reader serializes its partitions' calls of `consume`, as ReadPieces requires.
  Status ReadAllPieces(const engine::PieceConsumer& consume) override {
    if (!reader_) {
      SLUICE_ASSIGN_OR_RETURN(reader_, PgBatchReader::Open(options_));
    }
    std::unique_ptr<PgBatchReader> reader = std::move(reader_);
    return reader->Read(consume);
  }

 private:
  PostgresBatchSource(PgBatchReadOptions options, std::string what)
      : options_(std::move(options)), what_(std::move(what)) {}

  PgBatchReadOptions options_;
  std::string what_;
  TypePtr schema_;
  std::unique_ptr<PgBatchReader> reader_;  // opened, not yet read
};

class PostgresBatchSink final : public engine::Sink {
 public:
  PostgresBatchSink(std::string conninfo, std::string dbtable, PgWriteMode mode)
      : options_{std::move(conninfo), std::move(dbtable), mode} {}

  std::string description() const override { return "PostgresBatchSink[" + options_.dbtable + "]"; }
  std::vector<engine::OutputMode> supported_output_modes() const override { return {engine::OutputMode::kAppend}; }
  Status Open(const engine::SinkContext&) override { return Status::OK(); }

  Result<std::unique_ptr<engine::BatchWriter>> BeginBatch(const engine::BatchInfo& info) override {
    return std::unique_ptr<engine::BatchWriter>(
        new engine::WholeBatchWriter(info.schema, [this](const std::vector<BatchPtr>& pieces) {
          SLUICE_ASSIGN_OR_RETURN(auto writer, PgBatchWriter::Open(options_, pieces[0]->schema()));
          for (const BatchPtr& piece : pieces) SLUICE_RETURN_IF_ERROR(writer->Write(*piece));
          SLUICE_RETURN_IF_ERROR(writer->Commit());
          options_.mode = PgWriteMode::kAppend;
          return Status::OK();
        }));
  }

 private:
  PgBatchWriteOptions options_;
};

}  // namespace

Status RegisterPostgresBatchSource(engine::Registry* registry) {
  engine::SourceFormat format;
  format.name = "postgresql";
  format.options = kOptions;
  format.make = [](const ValidatedOptions& options) { return PostgresBatchSource::Make(options); };
  return registry->RegisterSource(std::move(format));
}

std::unique_ptr<engine::Sink> MakePostgresBatchSink(std::string conninfo, std::string dbtable, PgWriteMode mode) {
  return std::make_unique<PostgresBatchSink>(std::move(conninfo), std::move(dbtable), mode);
}

}  // namespace sluice::connectors
