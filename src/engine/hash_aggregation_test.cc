#include "sluice/engine/hash_aggregation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <future>
#include <map>
#include <limits>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/fault_injection.h"
#include "sluice/engine/deduplication.h"
#include "sluice/engine/state_store.h"
#include "testing/columns.h"
#include "testing/temp_dir.h"

namespace sluice::engine {
namespace {

using testing::Fixed;
using testing::Strings;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// k string, x int, d decimal(10,2), f double: rows with nulls in every column.
TypePtr InputSchema() {
  return DataType::Struct({{"k", DataType::String()},
                           {"x", DataType::Integer()},
                           {"d", DataType::Decimal(10, 2).value()},
                           {"f", DataType::Double()}})
      .value();
}

BatchPtr Input(const std::vector<std::optional<std::string>>& k, const std::vector<std::optional<int32_t>>& x,
               const std::vector<std::optional<int128_t>>& d, const std::vector<std::optional<double>>& f) {
  return RecordBatch::Make(InputSchema(),
                           {Strings(k), Fixed<int32_t>(DataType::Integer(), x),
                            Fixed<int128_t>(DataType::Decimal(10, 2).value(), d), Fixed<double>(DataType::Double(), f)},
                           static_cast<int64_t>(k.size()))
      .value();
}

BatchPtr SampleRows() {
  return Input({"a", "b", "a", std::nullopt, "b", "a", std::nullopt},
               {1, 2, std::nullopt, 4, 5, 6, std::nullopt},
               {int128_t{150}, int128_t{-25}, std::nullopt, int128_t{1}, int128_t{99999999}, int128_t{3}, std::nullopt},
               {1.5, kNaN, -0.0, 0.0, std::nullopt, kNaN, 2.0});
}

// Each row as "v1|v2|...", sorted.
std::vector<std::string> Rows(const RecordBatch& batch) {
  std::vector<std::string> rows;
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    std::string row;
    for (int c = 0; c < batch.num_columns(); ++c) row += (c ? "|" : "") + FormatValue(*batch.column(c), r);
    rows.push_back(row);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

Result<std::unique_ptr<HashAggregation>> Aggregation(const std::string& sql, bool ansi = true) {
  SLUICE_ASSIGN_OR_RETURN(expr::SelectStatement select, expr::ParseSelect(sql));
  SLUICE_ASSIGN_OR_RETURN(expr::BoundAggregation plan, expr::BindAggregation(select, InputSchema(), {.ansi = ansi}));
  return HashAggregation::Make(std::move(plan), {.ansi = ansi});
}

// Every aggregate function, each with state columns of its own kind, over two keys.
constexpr const char* kEveryAggregate =
    "SELECT k, f, count(*), sum(x), avg(d), sum(d), min(k), max(f), first(x), last(x, true), avg(x), "
    "collect_list(d), collect_set(k), count(DISTINCT x), approx_count_distinct(x) FROM t GROUP BY k, f";

struct AggregateCase {
  std::string sql;
  std::vector<std::string> rows;  // the complete output over SampleRows(), sorted
};

TEST(HashAggregationTest, EachAggregateOverEachGroupMatchesSpark) {
  const AggregateCase cases[] = {
      {"SELECT k, count(*), count(x), count(x, d), sum(x), min(x), max(x) FROM t GROUP BY k",
       {"a|3|2|2|7|1|6", "b|2|2|2|7|2|5", "null|2|1|1|4|4|4"}},
      {"SELECT k, avg(x) AS mean_x, mean(f) FROM t GROUP BY k", {"a|3.5|NaN", "b|3.5|NaN", "null|4.0|1.0"}},
      // decimal(10,2): sum is decimal(20,2), avg decimal(14,6) rounded half up
      {"SELECT k, sum(d), avg(d) FROM t GROUP BY k", {"a|1.53|0.765000", "b|999999.74|499999.870000", "null|0.01|0.010000"}},
      // NaN groups with NaN, -0.0 with 0.0, NULL is a group; NaN is the greatest double
      {"SELECT f, count(*) AS n FROM t GROUP BY f", {"0.0|2", "1.5|1", "2.0|1", "NaN|2", "null|1"}},
      {"SELECT k, min(f), max(f) FROM t GROUP BY k", {"a|-0.0|NaN", "b|NaN|NaN", "null|0.0|2.0"}},
      {"SELECT k, first(x), last(x), first(x, true), last(x, true) FROM t GROUP BY k",
       {"a|1|6|1|6", "b|2|5|2|5", "null|4|null|4|4"}},
      {"SELECT k, first(d), last(f) FROM t GROUP BY k", {"a|1.50|NaN", "b|-0.25|null", "null|0.01|2.0"}},
      {"SELECT count(*), count(k), sum(x), max(k) FROM t", {"7|5|18|b"}},
      {"SELECT k, count(*) FROM t GROUP BY k HAVING count(*) > 2 OR k IS NULL", {"a|3", "null|2"}},
      // HAVING reads the items' aliases, and a key's own name stays the column
      {"SELECT k, sum(x) AS total FROM t GROUP BY k HAVING total > 4 AND k <> 'b'", {"a|7"}},
      {"SELECT upper(k) AS key, sum(x) * 2 + 1 AS y, max(x) - min(x) AS spread FROM t GROUP BY k",
       {"A|15|5", "B|15|3", "null|9|0"}},
      {"SELECT x % 2 AS parity, count(*) FROM t WHERE x IS NOT NULL GROUP BY x % 2", {"0|3", "1|2"}},
      {"SELECT k, sum(CASE WHEN x > 1 THEN -x ELSE x END) AS s FROM t GROUP BY k", {"a|-5", "b|-7", "null|-4"}},
      {"SELECT k, count(*) AS n FROM t GROUP BY k, x > 1", {"a|1", "a|1", "a|1", "b|2", "null|1", "null|1"}},
      // collections skip nulls; DISTINCT keeps the first of equal values (NaN equals NaN)
      {"SELECT x IS NULL AS missing, count(DISTINCT k), collect_set(k), collect_list(k), array_agg(x) FROM t "
       "GROUP BY x IS NULL",
       {R"(false|2|["a","b"]|["a","b","b","a"]|[1,2,4,5,6])", R"(true|1|["a"]|["a"]|[])"}},
      {"SELECT count(DISTINCT f), collect_set(f), min(DISTINCT x), approx_count_distinct(k) FROM t",
       {R"(4|[1.5,NaN,-0.0,2.0]|1|2)"}},
  };
  for (const AggregateCase& c : cases) {
    SCOPED_TRACE(c.sql);
    auto aggregation = Aggregation(c.sql);
    ASSERT_TRUE(aggregation.ok()) << aggregation.status().ToString();
    // WHERE is the flow's business; here only the sample's non-null x rows pass for the one case.
    BatchPtr rows = SampleRows();
    if (c.sql.find("WHERE") != std::string::npos) rows = Take(rows, std::vector<int64_t>{0, 1, 3, 4, 5});
    ASSERT_TRUE((*aggregation)->Add(*Slice(rows, 0, 3)).ok());
    ASSERT_TRUE((*aggregation)->Add(*Slice(rows, 3, rows->num_rows() - 3)).ok());
    auto out = (*aggregation)->Output(OutputMode::kComplete);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Rows(**out), c.rows);
  }
}

TEST(HashAggregationTest, AGlobalAggregateHasItsRowBeforeAnyInput) {
  auto aggregation = Aggregation("SELECT count(*) AS n, sum(x) AS s, min(k) FROM t");
  ASSERT_TRUE(aggregation.ok());
  auto out = (*aggregation)->Output(OutputMode::kComplete);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Rows(**out), std::vector<std::string>{"0|null|null"});
  auto changed = (*aggregation)->Output(OutputMode::kUpdate);
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ((*changed)->num_rows(), 0);
}

TEST(HashAggregationTest, UpdateModeGivesTheGroupsChangedSinceTheLastBatch) {
  auto aggregation = Aggregation("SELECT k, count(*) AS n, sum(x) AS s FROM t GROUP BY k");
  ASSERT_TRUE(aggregation.ok());
  HashAggregation& groups = **aggregation;
  ASSERT_TRUE(groups.Add(*Input({"a", "b"}, {1, 2}, {int128_t{0}, int128_t{0}}, {0.0, 0.0})).ok());
  EXPECT_EQ(Rows(*groups.Output(OutputMode::kUpdate).value()), (std::vector<std::string>{"a|1|1", "b|1|2"}));
  groups.ClearChanges();
  ASSERT_TRUE(groups.Add(*Input({"b", "c", "b"}, {10, 20, std::nullopt}, {int128_t{0}, int128_t{0}, std::nullopt},
                                {0.0, 0.0, 0.0}))
                  .ok());
  EXPECT_EQ(groups.num_changed(), 2);
  EXPECT_EQ(Rows(*groups.Output(OutputMode::kUpdate).value()), (std::vector<std::string>{"b|3|12", "c|1|20"}));
  EXPECT_EQ(Rows(*groups.Output(OutputMode::kComplete).value()),
            (std::vector<std::string>{"a|1|1", "b|3|12", "c|1|20"}));
  EXPECT_EQ(groups.Output(OutputMode::kAppend).status().error_class(), errors::kInvalidArgument);
}

// Sliding windows: a row counts in every window holding its time (10-minute windows every 5
// minutes: a time in two), a null time in none, and a later batch updates the windows it reaches.
// Anywhere but a grouping key a sliding window is refused.
TEST(HashAggregationTest, SlidingWindowsCountARowInEveryWindowHoldingIt) {
  auto aggregation = Aggregation(
      "SELECT CAST(unix_seconds(window.start) / 60 AS INT) AS m, count(*) AS n, sum(x) AS s FROM t "
      "GROUP BY window(timestamp_seconds(x * 60), '10 minutes', '5 minutes')");
  ASSERT_TRUE(aggregation.ok()) << aggregation.status().ToString();
  HashAggregation& groups = **aggregation;
  auto minutes = [](const std::vector<std::optional<int32_t>>& x) {
    return Input(std::vector<std::optional<std::string>>(x.size(), "a"), x,
                 std::vector<std::optional<int128_t>>(x.size(), int128_t{0}), std::vector<std::optional<double>>(x.size(), 0.0));
  };
  ASSERT_TRUE(groups.Add(*minutes({1, 6, 12, std::nullopt})).ok());
  EXPECT_EQ(Rows(*groups.Output(OutputMode::kComplete).value()),
            (std::vector<std::string>{"-5|1|1", "0|2|7", "10|1|12", "5|2|18"}));
  groups.ClearChanges();
  ASSERT_TRUE(groups.Add(*minutes({14})).ok());
  EXPECT_EQ(Rows(*groups.Output(OutputMode::kUpdate).value()), (std::vector<std::string>{"10|2|26", "5|3|32"}));

  // A window duration that is not a multiple of the slide: 7 minutes every 3, from minute 1.
  auto uneven = Aggregation(
      "SELECT CAST(unix_seconds(window.start) / 60 AS INT) AS m, count(*) AS n FROM t "
      "GROUP BY window(timestamp_seconds(x * 60), '7 minutes', '3 minutes', '1 minute')");
  ASSERT_TRUE(uneven.ok()) << uneven.status().ToString();
  ASSERT_TRUE((*uneven)->Add(*minutes({10})).ok());  // in [4, 11), [7, 14) and [10, 17)
  EXPECT_EQ(Rows(*(*uneven)->Output(OutputMode::kComplete).value()), (std::vector<std::string>{"10|1", "4|1", "7|1"}));

  auto projected = expr::Bind(expr::Expression::Parse("window(timestamp_seconds(x * 60), '10 minutes', '5 minutes')").value(),
                              InputSchema());
  ASSERT_TRUE(projected.ok()) << projected.status().ToString();
  EXPECT_EQ(projected->Evaluate(*minutes({1})).status().error_class(), errors::kNotImplemented);
}

TEST(HashAggregationTest, StateRowsRestoreEveryAggregateExactly) {
  auto first = Aggregation(kEveryAggregate);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE((*first)->Add(*SampleRows()).ok());
  BatchPtr state = (*first)->State().value();
  EXPECT_EQ(state->num_rows(), (*first)->num_groups());

  auto second = Aggregation(kEveryAggregate);
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE((*second)->Load(*state).ok());
  EXPECT_EQ(Rows(*(*second)->Output(OutputMode::kComplete).value()),
            Rows(*(*first)->Output(OutputMode::kComplete).value()));
  // Both go on alike.
  for (HashAggregation* groups : {first->get(), second->get()}) ASSERT_TRUE(groups->Add(*SampleRows()).ok());
  EXPECT_EQ(Rows(*(*second)->Output(OutputMode::kComplete).value()),
            Rows(*(*first)->Output(OutputMode::kComplete).value()));

  auto other = Aggregation("SELECT k, count(*) FROM t GROUP BY k");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ((*other)->Load(*state).error_class(), errors::kCannotLoadStateStore);
}

TEST(HashAggregationTest, ApproxCountDistinctIsWithinItsErrorAndExactWhenSmall) {
  for (int64_t distinct : {0, 1, 10, 200, 20'000, 300'000}) {
    SCOPED_TRACE(distinct);
    auto aggregation = Aggregation("SELECT approx_count_distinct(x) AS a, approx_count_distinct(x, 0.01) AS b FROM t");
    ASSERT_TRUE(aggregation.ok()) << aggregation.status().ToString();
    // Every value three times, in three pieces.
    for (int round = 0; round < 3; ++round) {
      std::vector<std::optional<std::string>> k;
      std::vector<std::optional<int32_t>> x;
      std::vector<std::optional<int128_t>> d;
      std::vector<std::optional<double>> f;
      for (int64_t v = 0; v < distinct; ++v) {
        k.push_back("k");
        x.push_back(static_cast<int32_t>(v * 7919));
        d.push_back(std::nullopt);
        f.push_back(std::nullopt);
      }
      ASSERT_TRUE((*aggregation)->Add(*Input(k, x, d, f)).ok());
    }
    BatchPtr out = (*aggregation)->Output(OutputMode::kComplete).value();
    const double a = static_cast<double>(out->column(0)->Value<int64_t>(0));
    const double b = static_cast<double>(out->column(1)->Value<int64_t>(0));
    const double n = static_cast<double>(distinct);
    if (distinct <= 10) {
      EXPECT_EQ(a, n);
      EXPECT_EQ(b, n);
    } else {
      // Three standard deviations: 5% and 1%.
      EXPECT_NEAR(a, n, 0.15 * n);
      EXPECT_NEAR(b, n, 0.03 * n);
    }
  }
}

TEST(HashAggregationTest, OverflowFailsInAnsiModeAndIsNullOrWrapsOtherwise) {
  auto big = [] {
    return Input({"a", "a"}, {std::numeric_limits<int32_t>::max(), 1}, {int128_t{9'999'999'999}, int128_t{1}},
                 {0.0, 0.0});
  };
  // sum(x * 2^32) overflows bigint after a few rows; decimal(10,2) sums fit decimal(20,2) always,
  // so the decimal overflow is provoked through a decimal(38,0) argument.
  for (bool ansi : {true, false}) {
    SCOPED_TRACE(ansi);
    auto longs = Aggregation("SELECT sum(CAST(x AS BIGINT) * 4294967296 * 2) AS s FROM t", ansi);
    ASSERT_TRUE(longs.ok()) << longs.status().ToString();
    Status added = (*longs)->Add(*big());
    if (ansi) {
      EXPECT_EQ(added.error_class(), errors::kArithmeticOverflow);
    } else {
      ASSERT_TRUE(added.ok());
      int64_t wrapped =
          static_cast<int64_t>(uint64_t{2147483647} * 4294967296 * 2 + uint64_t{1} * 4294967296 * 2);
      EXPECT_EQ(Rows(*(*longs)->Output(OutputMode::kComplete).value()),
                std::vector<std::string>{std::to_string(wrapped)});
    }
    auto decimals = Aggregation(
        "SELECT sum(CAST('99999999999999999999999999999999999999' AS DECIMAL(38,0)) - CAST(x % 2 AS DECIMAL(1,0))) "
        "AS s FROM t",
        ansi);
    ASSERT_TRUE(decimals.ok()) << decimals.status().ToString();
    ASSERT_TRUE((*decimals)->Add(*big()).ok());
    auto out = (*decimals)->Output(OutputMode::kComplete);
    if (ansi) {
      EXPECT_EQ(out.status().error_class(), errors::kNumericValueOutOfRange);
    } else {
      ASSERT_TRUE(out.ok());
      EXPECT_EQ(Rows(**out), std::vector<std::string>{"null"});
    }
  }
}

TEST(HashAggregationTest, BindingRefusesWhatSparkRefuses) {
  const std::pair<std::string, std::string_view> cases[] = {
      {"SELECT k, x FROM t GROUP BY k", errors::kMissingAggregation},
      {"SELECT k, count(*) FROM t GROUP BY k HAVING x > 1", errors::kMissingAggregation},
      {"SELECT k, sum(max(x)) FROM t GROUP BY k", errors::kNestedAggregateFunction},
      {"SELECT k, count(*) FROM t WHERE sum(x) > 1 GROUP BY k", errors::kInvalidWhereCondition},
      {"SELECT count(*) FROM t GROUP BY sum(x)", errors::kUnsupportedGroupingExpression},
      {"SELECT k, sum(k) FROM t GROUP BY k", ""},  // a string sums as double
      {"SELECT k, sum(true) FROM t GROUP BY k", errors::kDatatypeMismatch},
      {"SELECT k, first(x, 'yes') FROM t GROUP BY k", errors::kDatatypeMismatch},
      {"SELECT k, sum(DISTINCT x) FROM t GROUP BY k", errors::kNotImplemented},
      {"SELECT k, approx_count_distinct(x, 0.5) FROM t GROUP BY k", errors::kInvalidParameterValue},
      {"SELECT k, nope(x) FROM t GROUP BY k", errors::kUnresolvedRoutine},
      {"SELECT k, count(*) FROM t GROUP BY missing", errors::kUnresolvedColumn},
      {"SELECT k AS a, count(*) AS a FROM t GROUP BY k", errors::kInvalidSchema},
  };
  for (const auto& [sql, code] : cases) {
    SCOPED_TRACE(sql);
    Result<std::unique_ptr<HashAggregation>> aggregation = Aggregation(sql);
    EXPECT_EQ(aggregation.status().error_class(), code) << aggregation.status().ToString();
  }
}

// --- the state store ---

class StateStoreTest : public ::testing::Test {
 protected:
  StateStoreTest() : store_(LocalFileSystem(), dir_.Join("state/0"), Schema()) {}
  static TypePtr Schema() { return DataType::Struct({{"k", DataType::Long()}, {"v", DataType::Long()}}).value(); }
  static BatchPtr Rows(const std::vector<int64_t>& keys, int64_t value) {
    std::vector<std::optional<int64_t>> k(keys.begin(), keys.end()), v(keys.size(), value);
    return RecordBatch::Make(Schema(), {Fixed<int64_t>(DataType::Long(), k), Fixed<int64_t>(DataType::Long(), v)},
                             static_cast<int64_t>(keys.size()))
        .value();
  }
  // The state as of `version` folded by key: "k=v" sorted.
  std::vector<std::string> Folded(int64_t version) {
    auto parts = store_.Load(version);
    EXPECT_TRUE(parts.ok()) << parts.status().ToString();
    std::map<int64_t, int64_t> state;
    for (const BatchPtr& part : *parts) {
      for (int64_t r = 0; r < part->num_rows(); ++r) {
        state[part->column(0)->Value<int64_t>(r)] = part->column(1)->Value<int64_t>(r);
      }
    }
    std::vector<std::string> out;
    for (auto [k, v] : state) out.push_back(std::to_string(k) + "=" + std::to_string(v));
    return out;
  }
  // Version v changes key v % 3 to v.
  Status WriteVersion(int64_t v) {
    return store_.Write(v, *Rows({v % 3}, v), [&]() -> Result<BatchPtr> {
      std::vector<int64_t> keys;
      std::map<int64_t, int64_t> latest;
      for (int64_t u = 0; u <= v; ++u) latest[u % 3] = u;
      std::vector<std::optional<int64_t>> k, val;
      for (auto [key, value] : latest) {
        k.push_back(key);
        val.push_back(value);
      }
      return RecordBatch::Make(Schema(), {Fixed<int64_t>(DataType::Long(), k), Fixed<int64_t>(DataType::Long(), val)},
                               static_cast<int64_t>(k.size()));
    });
  }

  testing::TempDir dir_;
  StateStore store_;
};

TEST_F(StateStoreTest, EveryVersionLoadsAsItWasWrittenAndOldOnesArePurged) {
  EXPECT_TRUE(store_.Load(-1).value().empty());
  for (int64_t v = 0; v < 125; ++v) ASSERT_TRUE(WriteVersion(v).ok());
  EXPECT_EQ(Folded(124), (std::vector<std::string>{"0=123", "1=124", "2=122"}));
  EXPECT_EQ(Folded(25), (std::vector<std::string>{"0=24", "1=25", "2=23"}));
  // 124 loads from the snapshot of 120 and four deltas.
  EXPECT_EQ(store_.Load(124).value().size(), 5u);
  // Versions 25.. stay loadable (the last 100); the files before the snapshot of 20 are gone.
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("state/0/19.delta.parquet")));
  EXPECT_TRUE(std::filesystem::exists(dir_.Join("state/0/20.snapshot.parquet")));
  // Writing a version again replaces it: a batch run again after a crash.
  ASSERT_TRUE(WriteVersion(124).ok());
  EXPECT_EQ(Folded(124), (std::vector<std::string>{"0=123", "1=124", "2=122"}));
}

// Every kind of state column (decimals, booleans, strings, arrays, sketches, nulls) goes through
// the store's Parquet files and comes back exactly.
TEST_F(StateStoreTest, EveryAggregatesStateSurvivesTheFiles) {
  auto first = Aggregation(kEveryAggregate);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE((*first)->Add(*SampleRows()).ok());
  StateStore store(LocalFileSystem(), dir_.Join("state/agg"), (*first)->state_schema());
  ASSERT_TRUE(store.Write(0, *(*first)->ChangedState().value(), [&] { return (*first)->State(); }).ok());
  (*first)->ClearChanges();
  ASSERT_TRUE((*first)->Add(*Slice(SampleRows(), 2, 3)).ok());
  ASSERT_TRUE(store.Write(1, *(*first)->ChangedState().value(), [&] { return (*first)->State(); }).ok());

  auto second = Aggregation(kEveryAggregate);
  ASSERT_TRUE(second.ok());
  auto parts = store.Load(1);
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 2u);
  for (const BatchPtr& part : *parts) ASSERT_TRUE((*second)->Load(*part).ok());
  EXPECT_EQ(engine::Rows(*(*second)->Output(OutputMode::kComplete).value()),
            engine::Rows(*(*first)->Output(OutputMode::kComplete).value()));
}

// The local file system, except that opening a snapshot for writing waits until `open` is set.
class GatedFileSystem final : public FileSystem {
 public:
  explicit GatedFileSystem(std::shared_future<void> open) : open_(std::move(open)) {}
  Result<std::string> ReadFile(const std::string& path) override { return base_->ReadFile(path); }
  Result<std::unique_ptr<RandomAccessFile>> OpenForRead(const std::string& path) override {
    return base_->OpenForRead(path);
  }
  Result<std::unique_ptr<WritableFile>> OpenForWrite(const std::string& path) override {
    if (path.find("snapshot") != std::string::npos) open_.wait();
    return base_->OpenForWrite(path);
  }
  Status AtomicWrite(const std::string& path, std::string_view data) override { return base_->AtomicWrite(path, data); }
  Status PutIfAbsent(const std::string& path, std::string_view data) override { return base_->PutIfAbsent(path, data); }
  Result<FileInfo> Stat(const std::string& path) override { return base_->Stat(path); }
  Result<bool> Exists(const std::string& path) override { return base_->Exists(path); }
  Result<std::vector<FileInfo>> List(const std::string& directory, std::string_view prefix,
                                     std::string_view start_after) override {
    return base_->List(directory, prefix, start_after);
  }
  Status Delete(const std::string& path) override { return base_->Delete(path); }
  Status DeleteRecursively(const std::string& path) override { return base_->DeleteRecursively(path); }
  Status CreateDirectories(const std::string& path) override { return base_->CreateDirectories(path); }
  Status Rename(const std::string& from, const std::string& to, bool no_replace) override {
    return base_->Rename(from, to, no_replace);
  }
  Result<std::unique_ptr<FileLock>> Lock(const std::string& path) override { return base_->Lock(path); }

 private:
  std::shared_ptr<FileSystem> base_ = LocalFileSystem();
  std::shared_future<void> open_;
};

// A snapshot is written after Write returns; until then, and when it fails, every version loads
// from the deltas.
TEST_F(StateStoreTest, SnapshotsAreWrittenOffTheBatchAndAFailedOneLeavesEveryVersionLoadable) {
  std::promise<void> open;
  {
    StateStore store(std::make_shared<GatedFileSystem>(open.get_future().share()), dir_.Join("state/gated"), Schema());
    for (int64_t v = 0; v <= 10; ++v) {
      ASSERT_TRUE(store.Write(v, *Rows({v % 3}, v), [&] { return Result<BatchPtr>(Rows({0, 1, 2}, v)); }).ok());
    }
    // Write(10) returned with its snapshot still waiting to be written: version 10 loads from deltas.
    EXPECT_FALSE(std::filesystem::exists(dir_.Join("state/gated/10.snapshot.parquet")));
    EXPECT_EQ(store.Load(10).value().size(), 11u);
    open.set_value();
  }  // the destructor waits for the snapshot
  EXPECT_TRUE(std::filesystem::exists(dir_.Join("state/gated/10.snapshot.parquet")));
  EXPECT_EQ(StateStore(LocalFileSystem(), dir_.Join("state/gated"), Schema()).Load(10).value().size(), 1u);

  auto faulty = std::make_shared<FaultInjectionFileSystem>(LocalFileSystem());
  faulty->InjectFault({.op = FileOp::kOpenForWrite, .sticky = true, .path_substring = "snapshot"});
  StateStore store(faulty, dir_.Join("state/0"), Schema());
  for (int64_t v = 0; v <= 12; ++v) {
    ASSERT_TRUE(store.Write(v, *Rows({v % 3}, v), [&] { return Result<BatchPtr>(Rows({0, 1, 2}, v)); }).ok());
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("state/0/10.snapshot.parquet")));
  EXPECT_EQ(faulty->InjectedFailures(), 1);
  std::vector<BatchPtr> parts = store.Load(12).value();
  EXPECT_EQ(parts.size(), 13u);
  EXPECT_EQ(parts.back()->column(1)->Value<int64_t>(0), 12);
}

TEST_F(StateStoreTest, AMissingOrDamagedFileIsCannotLoadStateStoreNamingIt) {
  for (int64_t v = 0; v < 5; ++v) ASSERT_TRUE(WriteVersion(v).ok());
  std::filesystem::remove(dir_.Join("state/0/2.delta.parquet"));
  Result<std::vector<BatchPtr>> missing = store_.Load(4);
  EXPECT_EQ(missing.status().error_class(), errors::kCannotLoadStateStore);
  EXPECT_NE(missing.status().message().find("2.delta.parquet"), std::string::npos);
  EXPECT_TRUE(store_.Load(1).ok());

  std::filesystem::resize_file(dir_.Join("state/0/1.delta.parquet"), 20);
  Result<std::vector<BatchPtr>> truncated = store_.Load(1);
  EXPECT_EQ(truncated.status().error_class(), errors::kCannotLoadStateStore);
  EXPECT_NE(truncated.status().message().find("1.delta.parquet"), std::string::npos);

  StateStore other(LocalFileSystem(), dir_.Join("state/0"),
                   DataType::Struct({{"k", DataType::String()}, {"v", DataType::Long()}}).value());
  EXPECT_EQ(other.Load(0).status().error_class(), errors::kCannotLoadStateStore);
}

}  // namespace
}  // namespace sluice::engine

namespace sluice::engine {
namespace {

TEST(DeduplicationTest, KeepsTheFirstRowOfEachKeyAcrossPiecesAndState) {
  auto dedup = Deduplication::Make({"k", "f"}, InputSchema(), {});
  ASSERT_TRUE(dedup.ok()) << dedup.status().ToString();
  // SampleRows: (a,1.5) (b,NaN) (a,-0.0) (null,0.0) (b,null) (a,NaN) (null,2.0), then again with
  // NaN and -0.0 written otherwise: every key of the second piece was seen.
  auto kept = (*dedup)->Filter(SampleRows());
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ((*kept)->num_rows(), 7);
  auto again = (*dedup)->Filter(Input({"b", "a", std::nullopt, "c"}, {1, 2, 3, 4}, {int128_t{0}, int128_t{0}, int128_t{0},
                                      int128_t{0}},
                                      {-kNaN, 0.0, -0.0, 1.0}));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Rows(**again), (std::vector<std::string>{"c|4|0.00|1.0"}));
  EXPECT_EQ((*dedup)->num_rows(), 8);
  EXPECT_EQ((*dedup)->num_changed(), 8);

  // The state restores the keys; the next piece's duplicates stay out.
  (*dedup)->ClearChanges();
  BatchPtr state = (*dedup)->State().value();
  EXPECT_EQ((*dedup)->ChangedState().value()->num_rows(), 0);
  auto restored = Deduplication::Make({"k", "f"}, InputSchema(), {});
  ASSERT_TRUE((*restored)->Load(*state).ok());
  auto third = (*restored)->Filter(Input({"c", "c"}, {0, 0}, {int128_t{0}, int128_t{0}}, {1.0, 5.0}));
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(Rows(**third), (std::vector<std::string>{"c|0|0.00|5.0"}));
  EXPECT_EQ(Rows(*(*restored)->ChangedState().value()), (std::vector<std::string>{"c|5.0"}));

  EXPECT_EQ(Deduplication::Make({"nope"}, InputSchema(), {}).status().error_class(), errors::kUnresolvedColumn);
  EXPECT_EQ(Deduplication::Make({}, InputSchema(), {}).status().error_class(), errors::kInvalidArgument);
  auto other = Deduplication::Make({"k"}, InputSchema(), {});
  EXPECT_EQ((*other)->Load(*state).error_class(), errors::kCannotLoadStateStore);
}

}  // namespace
}  // namespace sluice::engine
