#include "sluice/engine/rocksdb_state_store.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "sluice/core/error_classes.h"
#include "sluice/core/clock.h"
#include "sluice/core/compute.h"
#include "sluice/core/options.h"
#include "sluice/engine/builtin_sinks.h"
#include "sluice/engine/hash_aggregation.h"
#include "sluice/engine/rate_source.h"
#include "sluice/engine/relational_operators.h"
#include "sluice/engine/state_store.h"
#include "sluice/engine/streaming_query.h"
#include "engine/query_state.h"
#include "engine/state_rows.h"
#include "testing/columns.h"
#include "testing/store_root.h"
#include "testing/temp_dir.h"

namespace sluice::engine {
namespace {

using testing::Fixed;
using testing::Strings;

// k string, f double (keys), v long.
TypePtr Schema() {
  return DataType::Struct({{"k", DataType::String()}, {"f", DataType::Double()}, {"v", DataType::Long()}}).value();
}

BatchPtr Rows(const std::vector<std::optional<std::string>>& k, const std::vector<std::optional<double>>& f,
              const std::vector<std::optional<int64_t>>& v) {
  return RecordBatch::Make(Schema(), {Strings(k), Fixed<double>(DataType::Double(), f), Fixed<int64_t>(DataType::Long(), v)},
                           static_cast<int64_t>(k.size()))
      .value();
}

std::vector<std::string> Text(const RecordBatch& rows) {
  std::vector<std::string> out;
  for (int64_t row = 0; row < rows.num_rows(); ++row) {
    std::string text;
    for (int c = 0; c < rows.num_columns(); ++c) text += (c > 0 ? "," : "") + FormatValue(*rows.column(c), row);
    out.push_back(std::move(text));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every row of the store's loaded version, as text, sorted.
std::vector<std::string> Everything(RocksDbStateStore& store) {
  std::vector<std::string> all;
  Status visited = store.ForEach([&](const RecordBatch& rows) {
    for (std::string& row : Text(rows)) all.push_back(std::move(row));
    return Status::OK();
  });
  EXPECT_TRUE(visited.ok()) << visited.ToString();
  std::sort(all.begin(), all.end());
  return all;
}

class RocksDbStateStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<RocksDbStateStore> Open(const std::string& folder = "state/0") {
    auto store = RocksDbStateStore::Open(LocalFileSystem(), dir_.Join(folder), Schema(), 2);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return std::move(store).value();
  }
  // Version v sets key ("k<v % 3>", v % 2) to v.
  static BatchPtr Change(int64_t v) { return Rows({"k" + std::to_string(v % 3)}, {double(v % 2)}, {v}); }

  testing::TempDir dir_;
};

// The state folder on the local disk, S3 or Azure: any kept version loads into a new working
// database from the folder alone.
class RocksDbStateStoreOnStoresTest : public ::testing::TestWithParam<testing::Store> {
 protected:
  std::unique_ptr<RocksDbStateStore> Open() {
    auto store = RocksDbStateStore::Open(root_.file_system(), root_.Join("state/0"), Schema(), 2);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return std::move(store).value();
  }
  bool Exists(const std::string& relative) { return root_.file_system()->Exists(root_.Join(relative)).value(); }

  testing::StoreRoot root_{GetParam()};
};

TEST_P(RocksDbStateStoreOnStoresTest, EveryVersionLoadsFromTheStateFolderAsItWasWrittenAndOldOnesArePurged) {
  auto store = Open();
  ASSERT_TRUE(store->Load(-1).ok());
  EXPECT_TRUE(Everything(*store).empty());
  // Version v sets key ("k<v % 3>", v % 2) to v.
  auto change = [](int64_t v) { return Rows({"k" + std::to_string(v % 3)}, {double(v % 2)}, {v}); };
  for (int64_t v = 0; v < 125; ++v) ASSERT_TRUE(store->Write(v, *change(v)).ok()) << v;
  EXPECT_EQ(store->num_rows(), 6);
  const std::vector<std::string> latest = {"k0,0.0,120", "k0,1.0,123", "k1,0.0,124",
                                           "k1,1.0,121", "k2,0.0,122", "k2,1.0,119"};
  EXPECT_EQ(Everything(*store), latest);

  // Another store (its own working database) reads any kept version from the folder alone.
  auto other = Open();
  ASSERT_TRUE(other->Load(124).ok());
  EXPECT_EQ(Everything(*other), latest);
  EXPECT_EQ(other->num_rows(), 6);
  ASSERT_TRUE(other->Load(25).ok());
  EXPECT_EQ(Everything(*other), (std::vector<std::string>{"k0,0.0,24", "k0,1.0,21", "k1,0.0,22", "k1,1.0,25",
                                                         "k2,0.0,20", "k2,1.0,23"}));
  // Version 0 is purged: the last 100 versions are kept (the purge at 120 kept 21..).
  EXPECT_EQ(other->Load(0).error_class(), errors::kCannotLoadStateStore);
  EXPECT_FALSE(Exists("state/0/20.rocksdb"));
  EXPECT_TRUE(Exists("state/0/21.rocksdb"));
  // A batch run again after a crash writes its version again, from the version before it.
  ASSERT_TRUE(other->Load(123).ok());
  ASSERT_TRUE(other->Write(124, *Rows({"k1"}, {0.0}, {-1})).ok());
  auto third = Open();
  ASSERT_TRUE(third->Load(124).ok());
  EXPECT_EQ(Everything(*third), (std::vector<std::string>{"k0,0.0,120", "k0,1.0,123", "k1,0.0,-1", "k1,1.0,121",
                                                         "k2,0.0,122", "k2,1.0,119"}));
  // Writing on top of another version than the one loaded is refused.
  EXPECT_EQ(third->Write(126, *change(126)).error_class(), errors::kInternalError);
}

INSTANTIATE_TEST_SUITE_P(Stores, RocksDbStateStoreOnStoresTest, ::testing::ValuesIn(testing::kAllStores),
                         testing::StoreName);

TEST_F(RocksDbStateStoreTest, PurgingLeavesOnlyTableFilesAKeptVersionNames) {
  auto store = Open();
  ASSERT_TRUE(store->Load(-1).ok());
  for (int64_t v = 0; v < 230; ++v) ASSERT_TRUE(store->Write(v, *Change(v)).ok()) << v;
  // Every table file left is named by a kept version (the purge at 220 kept 121..).
  std::set<std::string> named;
  for (int64_t v = 121; v < 230; ++v) {
    auto version = ParseRocksDbVersion(LocalFileSystem()->ReadFile(dir_.Join("state/0/" + std::to_string(v) + ".rocksdb")).value());
    ASSERT_TRUE(version.ok());
    for (const auto& [local, stored] : version->files) named.insert(stored);
  }
  int tables = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.Join("state/0/sst"))) {
    EXPECT_TRUE(named.contains("sst/" + entry.path().filename().string())) << entry.path();
    ++tables;
  }
  EXPECT_GT(tables, 0);
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("state/0/120.rocksdb")));
}

// The working folders of processes that are gone (killed with -9) are removed by the next store;
// those of live processes stay.
TEST_F(RocksDbStateStoreTest, AKilledProcesssWorkingFolderIsRemovedByTheNextStore) {
  const std::filesystem::path root = std::filesystem::temp_directory_path() / "sluice-state";
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  const std::filesystem::path abandoned = root / (std::to_string(gone) + "-abcdef");
  const std::filesystem::path live = root / (std::to_string(getppid()) + "-abcdef");
  const std::filesystem::path other = root / "not-a-store";
  for (const auto& folder : {abandoned, live, other}) std::filesystem::create_directories(folder / "db");
  auto store = Open();
  EXPECT_FALSE(std::filesystem::exists(abandoned));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_TRUE(std::filesystem::exists(other));
  std::filesystem::remove_all(live);
  std::filesystem::remove_all(other);
  // The store's own folder goes with it.
  ASSERT_TRUE(store->Load(-1).ok());
  int mine = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    mine += entry.path().filename().string().starts_with(std::to_string(getpid()) + "-");
  }
  EXPECT_GE(mine, 1);
  store.reset();
  mine = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    mine += entry.path().filename().string().starts_with(std::to_string(getpid()) + "-");
  }
  EXPECT_EQ(mine, 0);
}

TEST_F(RocksDbStateStoreTest, FindsKeysAsSparkGroupsThem) {
  auto store = Open();
  ASSERT_TRUE(store->Load(-1).ok());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ASSERT_TRUE(store->Write(0, *Rows({"a", std::nullopt, "a", "é\n"}, {nan, 0.0, std::nullopt, -1.5}, {1, 2, 3, 4})).ok());
  // NaN finds NaN, -0.0 finds 0.0, NULL finds NULL; "a" with another f is another key.
  BatchPtr wanted = Rows({"b", "a", std::nullopt, "a", "é\n", "a"}, {nan, nan, -0.0, 1.0, -1.5, std::nullopt},
                         {0, 0, 0, 0, 0, 0});
  std::vector<ColumnPtr> keys = {wanted->column(0), wanted->column(1)};
  std::vector<int64_t> found;
  auto rows = store->Find(keys, {0, 1, 2, 3, 4, 5}, &found);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(found, (std::vector<int64_t>{1, 2, 4, 5}));
  std::vector<int64_t> values;
  for (int64_t r = 0; r < (*rows)->num_rows(); ++r) values.push_back((*rows)->column(2)->Value<int64_t>(r));
  EXPECT_EQ(values, (std::vector<int64_t>{1, 2, 4, 3}));
  // Only the rows asked for.
  ASSERT_TRUE(store->Find(keys, {3, 4}, &found).ok());
  EXPECT_EQ(found, (std::vector<int64_t>{1}));
}

TEST_F(RocksDbStateStoreTest, AMissingDamagedOrOtherStoresFolderIsCannotLoadStateStore) {
  {
    auto store = Open();
    ASSERT_TRUE(store->Load(-1).ok());
    for (int64_t v = 0; v < 3; ++v) ASSERT_TRUE(store->Write(v, *Change(v)).ok());
  }
  EXPECT_EQ(Open()->Load(5).error_class(), errors::kCannotLoadStateStore);
  // A table file gone.
  auto version = ParseRocksDbVersion(LocalFileSystem()->ReadFile(dir_.Join("state/0/2.rocksdb")).value()).value();
  for (const auto& [local, stored] : version.files) {
    if (stored.starts_with("sst/")) std::filesystem::remove(dir_.Join("state/0/" + stored));
  }
  Status missing = Open()->Load(2);
  EXPECT_EQ(missing.error_class(), errors::kCannotLoadStateStore);
  EXPECT_NE(missing.message().find("sst/"), std::string::npos) << missing.ToString();
  // Version files cut short, with foreign lines, or names leaving the folder.
  for (const std::string text :
       {"sluice rocksdb state 1\nrows 3\n", "sluice rocksdb state 1\nrows 3\nfile CURRENT ../../etc/passwd\n",
        "sluice rocksdb state 1\nrows 3\nfile ../x 1.x\n", "sluice rocksdb state 1\nrows -1\n",
        "sluice rocksdb state 1\nrows 3", "sluice rocksdb state 2\nrows 3\n", "rows 3\n",
        "sluice rocksdb state 1\nrows 3\nfile CURRENT 1.CURRENT\nfile CURRENT 2.CURRENT\n"}) {
    auto parsed = ParseRocksDbVersion(text);
    if (text == "sluice rocksdb state 1\nrows 3\n") {
      EXPECT_TRUE(parsed.ok()) << text;
      continue;
    }
    EXPECT_EQ(parsed.status().error_class(), errors::kCannotLoadStateStore) << text;
  }
  ASSERT_TRUE(LocalFileSystem()->AtomicWrite(dir_.Join("state/0/1.rocksdb"), "sluice rocksdb state 1\nrows 3\nfile CURRENT ../../x\n").ok());
  EXPECT_EQ(Open()->Load(1).error_class(), errors::kCannotLoadStateStore);
  // Each store refuses the other's folder, naming the store that wrote it.
  Status parquet = StateStore(LocalFileSystem(), dir_.Join("state/0"), Schema()).Load(0).status();
  EXPECT_EQ(parquet.error_class(), errors::kCannotLoadStateStore);
  EXPECT_NE(parquet.message().find("rocksdb state store"), std::string::npos) << parquet.ToString();
  StateStore memory(LocalFileSystem(), dir_.Join("state/1"), Schema());
  ASSERT_TRUE(memory.Write(0, *Change(0), [] { return Change(0); }).ok());
  Status rocksdb = Open("state/1")->Load(0);
  EXPECT_EQ(rocksdb.error_class(), errors::kCannotLoadStateStore);
  EXPECT_NE(rocksdb.message().find("memory state store"), std::string::npos) << rocksdb.ToString();
}

TEST(StateRowsTest, EveryKindOfColumnRoundTripsAndDamageIsRefused) {
  // An aggregation's own state rows: decimals, doubles, strings, arrays, sketches, nulls.
  auto aggregation = [&] {
    expr::SelectStatement select = expr::ParseSelect(
        "SELECT k, count(*), sum(v), avg(CAST(v AS DECIMAL(10,2))), min(k), max(f), first(v), last(v, true), "
        "collect_list(k), collect_set(f), count(DISTINCT v), approx_count_distinct(k) FROM t GROUP BY k").value();
    expr::BoundAggregation plan = expr::BindAggregation(select, Schema(), {}).value();
    return HashAggregation::Make(std::move(plan), {}).value();
  }();
  ASSERT_TRUE(aggregation->Add(*Rows({"a", std::nullopt, "a", "", "b"}, {1.5, std::nullopt, -0.0, 2.0, 3.0},
                                     {1, 2, std::nullopt, 4, 5}))
                  .ok());
  BatchPtr state = aggregation->State().value();
  std::vector<std::string> encoded(static_cast<size_t>(state->num_rows()));
  std::vector<std::string_view> views;
  for (int64_t row = 0; row < state->num_rows(); ++row) {
    EncodeStateRow(*state, row, &encoded[static_cast<size_t>(row)]);
    views.push_back(encoded[static_cast<size_t>(row)]);
  }
  auto decoded = DecodeStateRows(state->schema(), views);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(Text(**decoded), Text(*state));
  // Every cut of a row, and a byte more, is refused.
  const std::string& row = encoded[0];
  for (size_t cut = 0; cut < row.size(); ++cut) {
    EXPECT_EQ(DecodeStateRows(state->schema(), {std::string_view(row).substr(0, cut)}).status().error_class(),
              errors::kCannotLoadStateStore)
        << cut;
  }
  EXPECT_EQ(DecodeStateRows(state->schema(), {row + "x"}).status().error_class(), errors::kCannotLoadStateStore);
  // Bytes that decode but break a column's rules (a map with a null key) are damage as well.
  TypePtr map = DataType::Struct({{"m", DataType::Map(DataType::Integer(), DataType::Long())}}).value();
  const std::string null_key = std::string("\1", 1) + std::string("\1\0\0\0\0\0\0\0", 8) + std::string("\0", 1) +
                               std::string("\1", 1) + std::string(8, '\0');
  Status damaged = DecodeStateRows(map, {null_key}).status();
  EXPECT_EQ(damaged.error_class(), errors::kCannotLoadStateStore) << damaged.ToString();
  const std::string good_key = std::string("\1", 1) + std::string("\1\0\0\0\0\0\0\0", 8) + std::string("\1", 1) +
                               std::string(4, '\0') + std::string("\1", 1) + std::string(8, '\0');
  EXPECT_TRUE(DecodeStateRows(map, {good_key}).ok());
}

// ---- Queries on the rocksdb state store -------------------------------------------------------

std::unique_ptr<Source> Rate(int64_t rows_per_second) {
  std::map<std::string, std::string> given = {{"rowsPerSecond", std::to_string(rows_per_second)},
                                              {"startTimestamp", "0"}};
  return MakeRateSource(ValidateOptions("rate source", kRateSourceOptions, given).value()).value();
}

std::unique_ptr<Operator> MakeOperator(const std::string& sql, OutputMode mode) {
  if (sql.starts_with("dedupe ")) {
    return std::make_unique<DeduplicateOperator>(std::vector<std::string>{sql.substr(7)}, expr::SqlOptions{}, "dedup");
  }
  return std::make_unique<AggregateOperator>(expr::ParseSelect(sql).value(), mode, expr::SqlOptions{}, "sql");
}

struct QueryCase {
  std::string sql;
  OutputMode mode;
};

// Runs `runs` queries one after the other on one checkpoint (Trigger once, the clock a second
// further each time, so each batch reads the rate source's next rows); run `failing` fails its
// batch in the sink after the operators took its rows. Every batch's rows as "batch:values",
// sorted within the batch, and the progress of the state's rows.
struct Outcome {
  std::vector<std::string> batches;
  std::vector<int64_t> state_rows;
};

Outcome RunQueries(const std::string& checkpoint, StateStoreKind kind, const QueryCase& query, int runs, int failing) {
  Outcome outcome;
  auto clock = std::make_shared<ManualClock>(0);
  for (int run = 0; run < runs; ++run) {
    clock->AdvanceBy(std::chrono::seconds(1));
    std::vector<std::string> rows;
    QueryConfig config;
    config.name = "q";
    config.checkpoint_location = checkpoint;
    config.trigger = Trigger::Once();
    config.clock = clock;
    config.state_store = kind;
    config.output_mode = query.mode;
    config.operators.push_back(MakeOperator(query.sql, query.mode));
    config.on_progress = [&](const QueryProgress& progress) {
      for (const StateOperatorProgress& state : progress.state_operators) outcome.state_rows.push_back(state.num_rows_total);
    };
    auto sink = MakeForeachBatchSink("record", [&](const RecordBatch& batch, const BatchContext& context) -> Status {
      if (run == failing) return Status::Error(errors::kIoError, "disk full");
      for (std::string& row : Text(batch)) rows.push_back(std::to_string(context.batch_id) + ":" + row);
      return Status::OK();
    });
    auto started = StreamingQuery::Start(Rate(40), std::move(sink), std::move(config));
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (!started.ok()) return outcome;
    Status ran = (*started)->Run();
    EXPECT_EQ(ran.ok(), run != failing) << ran.ToString();
    std::string joined;
    for (const std::string& row : rows) joined += row + " ";
    outcome.batches.push_back(joined);
  }
  return outcome;
}

// The same queries over the same rows give the same batches, state row counts included, with
// either state store — across restarts, and a batch that failed after its groups took its rows.
TEST(RocksDbStateQueryTest, EveryAggregateAndDeduplicationGiveWhatTheMemoryStoreGives) {
  const std::vector<QueryCase> cases = {
      {"SELECT CASE WHEN value % 5 = 0 THEN NULL ELSE value % 7 END AS k, CAST(value % 3 AS STRING) AS s, count(*), "
       "sum(value), avg(value), min(value), max(CAST(value AS DOUBLE) / 3), first(value), last(value), "
       "collect_list(value % 4), collect_set(CAST(value % 5 AS STRING)), count(DISTINCT value % 6), "
       "approx_count_distinct(value), sum(CAST(value AS DECIMAL(10,2))) FROM t "
       "GROUP BY CASE WHEN value % 5 = 0 THEN NULL ELSE value % 7 END, CAST(value % 3 AS STRING)",
       OutputMode::kUpdate},
      {"SELECT value % 11 AS k, count(*) AS n, max(value) AS top FROM t GROUP BY value % 11 HAVING count(*) > 3",
       OutputMode::kComplete},
      {"SELECT count(*), sum(value), collect_set(value % 3) FROM t", OutputMode::kUpdate},
      {"SELECT count(*), min(value) FROM t", OutputMode::kComplete},
      {"dedupe value % 170", OutputMode::kAppend},
  };
  testing::TempDir dir;
  int n = 0;
  for (const QueryCase& query : cases) {
    SCOPED_TRACE(query.sql);
    const std::string name = std::to_string(n++);
    Outcome memory = RunQueries(dir.Join("memory" + name), StateStoreKind::kMemory, query, 5, 2);
    Outcome rocksdb = RunQueries(dir.Join("rocksdb" + name), StateStoreKind::kRocksDb, query, 5, 2);
    EXPECT_EQ(rocksdb.batches, memory.batches);
    EXPECT_FALSE(memory.batches.at(4).empty());
    // Spark's numRowsTotal: the keys held after each batch (memory: in memory; rocksdb: stored).
    EXPECT_EQ(rocksdb.state_rows, memory.state_rows);
    EXPECT_TRUE(std::filesystem::exists(dir.Join("rocksdb" + name + "/state/0/4.rocksdb")));
    EXPECT_FALSE(std::filesystem::exists(dir.Join("rocksdb" + name + "/state/0/4.delta.parquet")));
  }
}

// With rocksdb an operator holds a batch's keys only: after its version is written, none.
TEST(RocksDbStateQueryTest, TheOperatorHoldsOnlyTheKeysOfTheBatchAtHand) {
  testing::TempDir dir;
  TypePtr schema = DataType::Struct({{"value", DataType::Long()}}).value();
  std::vector<std::unique_ptr<Operator>> operators;
  operators.push_back(MakeOperator("SELECT value, count(*) FROM t GROUP BY value", OutputMode::kUpdate));
  OperatorChain chain(std::move(operators));
  ASSERT_TRUE(chain.Bind(schema).ok());
  QueryState state(LocalFileSystem(), dir.Join("checkpoint"), StateStoreKind::kRocksDb);
  auto* groups = static_cast<HashAggregation*>(chain.stateful().at(0));
  for (int64_t batch = 0; batch < 10; ++batch) {
    ASSERT_TRUE(state.Load(chain, batch - 1).ok());
    EXPECT_EQ(groups->num_groups(), 0);
    ASSERT_TRUE(chain.BeginBatch(BatchStart{batch, 0}).ok());
    // 1000 new keys, and 10 of the last batch's again.
    std::vector<std::optional<int64_t>> values;
    for (int64_t v = batch * 1000; v < (batch + 1) * 1000; ++v) values.push_back(v);
    for (int64_t v = batch * 1000 - 10; v < batch * 1000 && batch > 0; ++v) values.push_back(v);
    BatchPtr piece = RecordBatch::Make(schema, {Fixed<int64_t>(DataType::Long(), values)},
                                       static_cast<int64_t>(values.size())).value();
    int64_t output_rows = 0;
    int64_t counted_twice = 0;
    auto emit = [&](BatchPtr out) {
      output_rows += out->num_rows();
      for (int64_t r = 0; r < out->num_rows(); ++r) counted_twice += out->column(1)->Value<int64_t>(r) == 2;
      return Status::OK();
    };
    ASSERT_TRUE(chain.Push(piece, emit).ok());
    ASSERT_TRUE(chain.Finish(emit).ok());
    EXPECT_EQ(groups->num_groups(), static_cast<int64_t>(values.size()));
    EXPECT_EQ(output_rows, static_cast<int64_t>(values.size()));
    EXPECT_EQ(counted_twice, batch > 0 ? 10 : 0);
    ASSERT_TRUE(state.Save(chain, batch).ok());
    EXPECT_EQ(groups->num_groups(), 0);
    EXPECT_EQ(state.progress().at(0).num_rows_total, (batch + 1) * 1000);
    EXPECT_EQ(state.progress().at(0).num_rows_updated, static_cast<int64_t>(values.size()));
  }
}

}  // namespace
}  // namespace sluice::engine
