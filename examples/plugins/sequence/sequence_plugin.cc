// An example sluice plugin: the `sequence` source, the numbers start, start + step, ... below end,
// as one column `id` (long). Load it as format `plugin:/path/libsluice_sequence_plugin.so`:
//
//   sluice copy --from "plugin:$PWD/libsluice_sequence_plugin.so:start=1,end=1000001" --to main.demo.numbers
//
// Offsets are {"next":N}, the next number to produce, so the source is replayable: reading the
// same range twice yields the same rows. `rowsPerBatch` bounds a batch (ignored by trigger once).
#include <algorithm>
#include <charconv>
#include <string>

#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/engine/plugin.h"

namespace {

using sluice::BatchPtr;
using sluice::OptionSpec;
using sluice::OptionType;
using sluice::Result;
using sluice::Status;

constexpr OptionSpec kOptions[] = {
    {"start", OptionType::kLong, "0", false, "the first number"},
    {"end", OptionType::kLong, std::nullopt, true, "the number the sequence stops before"},
    {.name = "step", .type = OptionType::kLong, .default_value = "1", .doc = "the distance between numbers",
     .minimum = 1},
    {.name = "rowsPerBatch", .type = OptionType::kLong, .default_value = "65536", .doc = "most numbers per batch",
     .minimum = 1},
};

class SequenceSource final : public sluice::engine::Source {
 public:
  SequenceSource(int64_t start, int64_t end, int64_t step, int64_t rows_per_batch)
      : start_(start),
        // The position after the last number: the first multiple of step from start at or past end.
        end_(start + (std::max(start, end) - start + step - 1) / step * step),
        step_(step),
        rows_per_batch_(rows_per_batch) {}

  std::string description() const override {
    return "SequenceSource[" + std::to_string(start_) + ".." + std::to_string(end_) + "]";
  }
  sluice::TypePtr schema() const override { return schema_; }
  Status Open(const sluice::engine::SourceContext&) override { return Status::OK(); }
  Result<std::string> InitialOffset() override { return Offset(start_); }

  Result<std::string> LatestOffset(const std::string& start, const sluice::engine::ReadLimit& limit) override {
    SLUICE_ASSIGN_OR_RETURN(int64_t next, Parse(start));
    int64_t remaining = (end_ - next + step_ - 1) / step_;
    int64_t rows = limit.all_available ? remaining : std::min(remaining, rows_per_batch_);
    return Offset(next + rows * step_);
  }

  Result<std::vector<BatchPtr>> Read(const std::string& start, const std::string& end) override {
    SLUICE_ASSIGN_OR_RETURN(int64_t from, Parse(start));
    SLUICE_ASSIGN_OR_RETURN(int64_t to, Parse(end));
    std::vector<BatchPtr> batches;
    while (from < to) {
      int64_t rows = std::min(rows_per_batch_, (to - from + step_ - 1) / step_);
      sluice::Int64Builder ids(sluice::DataType::Long());
      ids.Reserve(rows);
      for (int64_t i = 0; i < rows; ++i) ids.Append(from + i * step_);
      SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, sluice::RecordBatch::Make(schema_, {ids.Finish()}, rows));
      batches.push_back(std::move(batch));
      from += rows * step_;
    }
    return batches;
  }

  Status Commit(const std::string&) override { return Status::OK(); }

 private:
  static std::string Offset(int64_t next) { return "{\"next\":" + std::to_string(next) + "}"; }

  Result<int64_t> Parse(const std::string& offset) const {
    constexpr std::string_view kPrefix = "{\"next\":";
    int64_t next = 0;
    if (offset.size() > kPrefix.size() + 1 && offset.starts_with(kPrefix) && offset.back() == '}') {
      const char* digits = offset.data() + kPrefix.size();
      auto [end, error] = std::from_chars(digits, offset.data() + offset.size() - 1, next);
      if (error == std::errc() && end == offset.data() + offset.size() - 1 && next >= start_ && next <= end_) {
        return next;
      }
    }
    return Status::Error(sluice::errors::kSourceOffsetInvalid, description() + ": offset `" + offset + "` is not {\"next\":N}");
  }

  int64_t start_, end_, step_, rows_per_batch_;
  sluice::TypePtr schema_ = sluice::DataType::Struct({{"id", sluice::DataType::Long(), false}}).value();
};

Status RegisterFormats(sluice::engine::Registry* registry) {
  return registry->RegisterSource(
      {"sequence", kOptions, sluice::errors::kInvalidOptions,
       [](const sluice::ValidatedOptions& options) -> Result<std::unique_ptr<sluice::engine::Source>> {
         return std::unique_ptr<sluice::engine::Source>(
             new SequenceSource(options.GetInt64("start"), options.GetInt64("end"), options.GetInt64("step"),
                                options.GetInt64("rowsPerBatch")));
       }});
}

}  // namespace

SLUICE_PLUGIN("sequence", RegisterFormats)
