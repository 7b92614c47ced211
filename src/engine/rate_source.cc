#include "sluice/engine/rate_source.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "sluice/core/builder.h"
#include "sluice/core/clock.h"
#include "sluice/core/error_classes.h"

namespace sluice::engine {
namespace {

constexpr OptionSpec kOptions[] = {
    {"rowsPerSecond", OptionType::kLong, "1", false, "rows generated per second", {}, 1},
    {"maxRowsPerBatch", OptionType::kLong, std::nullopt, false, "most rows in one batch", {}, 1},
    {"startTimestamp", OptionType::kLong, std::nullopt, false,
     "timestamp of row 0 in milliseconds since the epoch (default: when the query first runs)"},
};

constexpr std::string_view kStateVersion = "v1";

class RateSource final : public Source {
 public:
  RateSource(int64_t rows_per_second, std::optional<int64_t> max_rows_per_batch,
             std::optional<int64_t> start_timestamp_ms)
      : rows_per_second_(rows_per_second),
        max_rows_per_batch_(max_rows_per_batch),
        start_timestamp_ms_(start_timestamp_ms) {
    schema_ = DataType::Struct({Field{"timestamp", DataType::Timestamp(), false},
                                Field{"value", DataType::Long(), false}})
                  .value();
  }

  std::string description() const override {
    return "RateSource[rowsPerSecond=" + std::to_string(rows_per_second_) + "]";
  }
  TypePtr schema() const override { return schema_; }

  Status Open(const SourceContext& context) override {
    clock_ = context.clock;
    // The start time is fixed on the first run and read back on every later one, so that row i
    // always has the same timestamp and becomes available at the same moment.
    std::string path = context.state_directory + "/0";
    int64_t start_ms = start_timestamp_ms_.value_or(clock_->NowMicros() / 1000);
    std::string state = std::string(kStateVersion) + "\n" + std::to_string(start_ms);
    Status written = context.file_system->PutIfAbsent(path, state);
    if (!written.ok() && written.error_class() != errors::kFileAlreadyExists) return written;
    if (!written.ok()) {
      SLUICE_ASSIGN_OR_RETURN(state, context.file_system->ReadFile(path));
    }
    if (state.size() <= kStateVersion.size() + 1 || state.compare(0, kStateVersion.size() + 1, "v1\n") != 0) {
      return Status::Error(errors::kCheckpointCorrupt, path + " is not rate source state");
    }
    std::string_view digits = std::string_view(state).substr(kStateVersion.size() + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), start_ms);
    if (ec != std::errc() || end != digits.data() + digits.size()) {
      return Status::Error(errors::kCheckpointCorrupt, path + " does not hold a start timestamp");
    }
    start_micros_ = start_ms * 1000;
    return Status::OK();
  }

  Result<std::string> InitialOffset() override { return Format(0); }

  Result<std::string> LatestOffset(const std::string& start, const ReadLimit& limit) override {
    SLUICE_ASSIGN_OR_RETURN(int64_t from, Parse(start));
    int64_t end = AvailableRows();
    if (!limit.all_available && max_rows_per_batch_) end = std::min(end, from + *max_rows_per_batch_);
    if (limit.not_beyond) {
      SLUICE_ASSIGN_OR_RETURN(int64_t bound, Parse(*limit.not_beyond));
      end = std::min(end, bound);
    }
    return Format(std::max(end, from));
  }

  Result<std::vector<BatchPtr>> Read(const std::string& start, const std::string& end) override {
    SLUICE_ASSIGN_OR_RETURN(int64_t from, Parse(start));
    SLUICE_ASSIGN_OR_RETURN(int64_t to, Parse(end));
    if (to <= from) return std::vector<BatchPtr>{};
    Int64Builder timestamps(DataType::Timestamp());
    Int64Builder values(DataType::Long());
    timestamps.Reserve(to - from);
    values.Reserve(to - from);
    for (int64_t row = from; row < to; ++row) {
      timestamps.Append(RowMicros(row));
      values.Append(row);
    }
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, RecordBatch::Make(schema_, {timestamps.Finish(), values.Finish()}, to - from));
    return std::vector<BatchPtr>{std::move(batch)};
  }

  Status Commit(const std::string&) override { return Status::OK(); }

 private:
  // Row i is due at start + i * 1e6 / rate microseconds (128-bit: no overflow for any rate).
  int64_t RowMicros(int64_t row) const {
    return start_micros_ + static_cast<int64_t>(static_cast<int128_t>(row) * 1'000'000 / rows_per_second_);
  }
  // Rows whose time has passed: row i once elapsed > i / rate seconds, so a whole second after
  // the start holds exactly rowsPerSecond rows.
  int64_t AvailableRows() const {
    int64_t elapsed = clock_->NowMicros() - start_micros_;
    if (elapsed <= 0) return 0;
    return static_cast<int64_t>((static_cast<int128_t>(elapsed) * rows_per_second_ - 1) / 1'000'000 + 1);
  }

  static std::string Format(int64_t rows) { return "{\"rows\":" + std::to_string(rows) + "}"; }

  Result<int64_t> Parse(const std::string& offset) const {
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    int64_t rows = 0;
    if (parser.parse(simdjson::padded_string(offset)).get(doc) != simdjson::SUCCESS ||
        doc["rows"].get(rows) != simdjson::SUCCESS || rows < 0) {
      return Status::Error(errors::kSourceOffsetInvalid, "not a rate source offset: " + offset);
    }
    return rows;
  }

  int64_t rows_per_second_;
  std::optional<int64_t> max_rows_per_batch_;
  std::optional<int64_t> start_timestamp_ms_;
  TypePtr schema_;
  std::shared_ptr<Clock> clock_;
  int64_t start_micros_ = 0;
};

}  // namespace

const std::span<const OptionSpec> kRateSourceOptions = kOptions;

Result<std::unique_ptr<Source>> MakeRateSource(const ValidatedOptions& options) {
  // The option table bounds both counts from below.
  int64_t rows_per_second = options.GetInt64("rowsPerSecond");
  std::optional<int64_t> max_rows;
  if (options.Has("maxRowsPerBatch")) max_rows = options.GetInt64("maxRowsPerBatch");
  std::optional<int64_t> start;
  if (options.Has("startTimestamp")) start = options.GetInt64("startTimestamp");
  return std::unique_ptr<Source>(new RateSource(rows_per_second, max_rows, start));
}

}  // namespace sluice::engine
