#include "sluice/connectors/pg_batch_source.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdio>

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
    {.name = "partitions_per_batch", .type = OptionType::kInt, .default_value = std::nullopt,
     .doc = "Partitions one batch reads (unset: all), so that a split read is written and resumed batch by batch.",
     .minimum = 1, .maximum = 256},
});



Status InvalidOption(std::string message) {
  return Status::Error(errors::kInvalidOptions, "postgresql source: " + std::move(message));
}

// A split read whose partitions are read a few per batch: its position is how many partitions
// have been read (`{"partitions_read":k}`), so each batch is written (and, after a crash, resumed)
// on its own. The partitions are fixed by the first run: the number of partitions and the table's
// size in blocks its block ranges divide are kept in the source's state directory and reused by
// every later run of the checkpoint. The batches of one run read under one snapshot; a run
// resumed after a crash reads the remaining partitions under a snapshot of its own.
class PartitionedPostgresSource final : public engine::Source {
 public:
  PartitionedPostgresSource(PgBatchReadOptions options, std::string what, int per_batch)
      : options_(std::move(options)), what_(std::move(what)), per_batch_(per_batch) {}

  std::string description() const override {
    return "PostgresBatchSource[" + what_ + ", " + std::to_string(per_batch_) + " partition(s) per batch]";
  }
  TypePtr schema() const override { return schema_; }

  Status Open(const engine::SourceContext& context) override {
    const std::string path = context.state_directory + "/partitions";
    SLUICE_ASSIGN_OR_RETURN(bool known, context.file_system->Exists(path));
    if (known) {
      SLUICE_ASSIGN_OR_RETURN(std::string state, context.file_system->ReadFile(path));
      SLUICE_RETURN_IF_ERROR(ReadState(path, state));
    }
    SLUICE_ASSIGN_OR_RETURN(reader_, PgBatchReader::Open(options_));
    schema_ = reader_->schema();
    if (known) {
      if (reader_->partition_count() != partitions_) {
        return Status::Error(errors::kInvalidOptions,
                             fmt::format("postgresql source: the checkpoint's read has {} partitions, these options "
                                         "give {}: a resumed read keeps the partitions it started with",
                                         partitions_, reader_->partition_count()));
      }
      return Status::OK();
    }
    partitions_ = reader_->partition_count();
    options_.table_blocks = reader_->table_blocks();
    return context.file_system->AtomicWrite(path, StateText());
  }

  Result<std::string> InitialOffset() override { return Offset(0); }

  Result<std::string> LatestOffset(const std::string& start, const engine::ReadLimit& limit) override {
    SLUICE_ASSIGN_OR_RETURN(size_t from, PartitionsRead(start));
    size_t end = limit.all_available ? partitions_ : std::min(partitions_, from + static_cast<size_t>(per_batch_));
    if (limit.not_beyond) {
      SLUICE_ASSIGN_OR_RETURN(size_t bound, PartitionsRead(*limit.not_beyond));
      end = std::min(end, bound);
    }
    return Offset(std::max(from, end));
  }

  Result<std::vector<BatchPtr>> Read(const std::string& start, const std::string& end) override {
    return engine::CollectPieces([&](const engine::PieceConsumer& consume) { return ReadPieces(start, end, consume); });
  }

  Status ReadPieces(const std::string& start, const std::string& end, const engine::PieceConsumer& consume) override {
    SLUICE_ASSIGN_OR_RETURN(size_t from, PartitionsRead(start));
    SLUICE_ASSIGN_OR_RETURN(size_t to, PartitionsRead(end));
    if (from >= to) return Status::OK();
    return reader_->ReadPartitions(from, to, consume);
  }

  Status Commit(const std::string&) override { return Status::OK(); }

 private:
  static std::string Offset(size_t partitions_read) {
    return "{\"partitions_read\":" + std::to_string(partitions_read) + "}";
  }

  Result<size_t> PartitionsRead(const std::string& offset) const {
    constexpr std::string_view kPrefix = "{\"partitions_read\":";
    size_t value = 0;
    const char* digits = offset.data() + std::min(offset.size(), kPrefix.size());
    const char* last = offset.data() + offset.size() - (offset.ends_with('}') ? 1 : 0);
    auto [stop, error] = std::from_chars(digits, last, value);
    if (!offset.starts_with(kPrefix) || !offset.ends_with('}') || error != std::errc() || stop != last ||
        value > partitions_) {
      return Status::Error(errors::kSourceOffsetInvalid,
                           fmt::format("postgresql source: `{}` is not a position of a read of {} partitions", offset,
                                       partitions_));
    }
    return value;
  }

  std::string StateText() const {
    return fmt::format("v1\n{} {}\n", partitions_, options_.table_blocks.value_or(-1));
  }

  Status ReadState(const std::string& path, const std::string& state) {
    long long partitions = 0, blocks = 0;
    if (std::sscanf(state.c_str(), "v1\n%lld %lld\n", &partitions, &blocks) != 2 || partitions < 1 || blocks < -1) {
      return Status::Error(errors::kCheckpointCorrupt, path + " is not the state of a postgresql source");
    }
    partitions_ = static_cast<size_t>(partitions);
    if (blocks >= 0) options_.table_blocks = blocks;
    return Status::OK();
  }

  PgBatchReadOptions options_;
  std::string what_;
  int per_batch_;
  size_t partitions_ = 0;
  TypePtr schema_;
  std::unique_ptr<PgBatchReader> reader_;
};

Result<std::unique_ptr<engine::Source>> MakePartitionedPostgresSource(PgBatchReadOptions options, std::string what,
                                                                      int per_batch) {
  return std::unique_ptr<engine::Source>(new PartitionedPostgresSource(std::move(options), std::move(what), per_batch));
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
    if (options.Has("partitions_per_batch")) {
      return MakePartitionedPostgresSource(std::move(read), std::move(what),
                                           static_cast<int>(options.GetInt64("partitions_per_batch")));
    }
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
