// MERGE, UPDATE and DELETE against DuckDB as the oracle: random tables and random statements
// (a fixed seed), each applied by sluice to a Delta table (copy-on-write, or with deletion vectors
// in every third round) and by DuckDB to the same rows in its own tables; the rows left must be
// the same. The Delta table is then read back through an
// independent replay of its log (tests/tools/delta_replay.mjs) by DuckDB's read_parquet, so the
// files a DML commit adds and removes are checked by a reader that is not sluice.
#include <algorithm>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "delta/delta_replay_testing.h"
#include "parquet/duckdb_testing.h"
#include "sluice/core/builder.h"
#include "sluice/delta/dml.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/writer.h"
#include "testing/temp_dir.h"

namespace sluice::delta {
namespace {

using parquet::testing::CanonicalRows;
using parquet::testing::DuckDbRows;
using parquet::testing::RequireDuckDb;

struct Row {
  int64_t id;
  int64_t grp;
  std::optional<int64_t> v;
  std::optional<std::string> s;
};

constexpr const char* kSchema = "struct<id:bigint,grp:bigint,v:bigint,s:string>";

BatchPtr Batch(const std::vector<Row>& rows) {
  Int64Builder ids(DataType::Long()), grps(DataType::Long()), vs(DataType::Long());
  BinaryBuilder ss(DataType::String());
  for (const Row& row : rows) {
    ids.Append(row.id);
    grps.Append(row.grp);
    row.v ? vs.Append(*row.v) : vs.AppendNull();
    row.s ? ss.Append(*row.s) : ss.AppendNull();
  }
  return RecordBatch::Make(ParseTypeString(kSchema).value(), {ids.Finish(), grps.Finish(), vs.Finish(), ss.Finish()},
                           static_cast<int64_t>(rows.size()))
      .value();
}

std::string SqlString(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// DuckDB statements creating table `name` with these rows.
std::vector<std::string> DuckDbTable(const std::string& name, const std::vector<Row>& rows) {
  std::vector<std::string> statements = {"CREATE TABLE " + name + " (id BIGINT, grp BIGINT, v BIGINT, s VARCHAR)"};
  std::string values;
  for (const Row& row : rows) {
    values += (values.empty() ? "" : ", ") + fmt::format("({}, {}, {}, {})", row.id, row.grp,
                                                         row.v ? std::to_string(*row.v) : "NULL",
                                                         row.s ? SqlString(*row.s) : "NULL");
  }
  if (!values.empty()) statements.push_back("INSERT INTO " + name + " VALUES " + values);
  return statements;
}

class RandomDml {
 public:
  explicit RandomDml(uint32_t seed) : random_(seed) {}

  std::vector<Row> Rows(int count, int64_t id_range, bool unique_ids) {
    std::vector<int64_t> ids;
    if (unique_ids) {
      for (int64_t id = 0; id < id_range; ++id) ids.push_back(id);
      std::shuffle(ids.begin(), ids.end(), random_);
      ids.resize(std::min<size_t>(ids.size(), static_cast<size_t>(count)));
    } else {
      for (int i = 0; i < count; ++i) ids.push_back(Uniform(0, id_range - 1));
    }
    static const std::optional<std::string> kStrings[] = {"a", "b", "it's", "ünï", "", std::nullopt};
    std::vector<Row> rows;
    for (int64_t id : ids) {
      Row row{id, Uniform(0, 2), std::nullopt, kStrings[Uniform(0, 5)]};
      if (Uniform(0, 9) > 0) row.v = Uniform(-200, 200);
      rows.push_back(row);
    }
    return rows;
  }

  // A MERGE, UPDATE or DELETE of target `t` (and source `s`), in the syntax both engines take.
  std::string Statement() {
    const int64_t kind = Uniform(0, 9);
    if (kind == 0) return "UPDATE t SET v = v * 2, s = s || '!' WHERE " + Pick(kPredicates);
    if (kind == 1) return "DELETE FROM t WHERE " + Pick(kPredicates);
    std::string sql = "MERGE INTO t USING s ON " + Pick(kJoins);
    const size_t before = sql.size();
    sql += Clauses(kMatched, kMatchedLast);
    sql += Clauses(kNotMatched, kNotMatchedLast);
    sql += Clauses(kBySource, kBySourceLast);
    if (sql.size() == before) sql += " WHEN NOT MATCHED THEN INSERT *";
    return sql;
  }

 private:
  int64_t Uniform(int64_t low, int64_t high) { return std::uniform_int_distribution<int64_t>(low, high)(random_); }
  template <size_t N>
  std::string Pick(const char* const (&options)[N]) {
    return options[Uniform(0, N - 1)];
  }
  // Some conditional clauses of a kind in random order, then maybe its unconditional one.
  template <size_t N, size_t M>
  std::string Clauses(const char* const (&conditional)[N], const char* const (&last)[M]) {
    std::vector<std::string> chosen(std::begin(conditional), std::end(conditional));
    std::shuffle(chosen.begin(), chosen.end(), random_);
    chosen.resize(static_cast<size_t>(Uniform(0, static_cast<int64_t>(N))));
    if (Uniform(0, 1)) chosen.push_back(Pick(last));
    std::string out;
    for (const std::string& clause : chosen) out += " " + clause;
    return out;
  }

  static constexpr const char* kPredicates[] = {"grp = 1 AND v > 50", "v IS NULL OR id % 3 = 0", "s = 'a'",
                                                "v BETWEEN -20 AND 20", "id < 10 AND grp <> 2", "s IS NULL"};
  static constexpr const char* kJoins[] = {"t.id = s.id", "t.id = s.id AND t.grp = s.grp",
                                           "s.id = t.id AND s.v IS NOT NULL", "t.id = s.id AND t.grp = 1"};
  static constexpr const char* kMatched[] = {
      "WHEN MATCHED AND s.v > t.v THEN UPDATE SET v = s.v, s = s.s",
      "WHEN MATCHED AND s.s IS NULL THEN DELETE",
      "WHEN MATCHED AND t.grp = 1 THEN UPDATE SET v = t.v + s.v",
      "WHEN MATCHED AND s.v IS NULL THEN UPDATE SET *",
  };
  static constexpr const char* kMatchedLast[] = {"WHEN MATCHED THEN UPDATE SET *", "WHEN MATCHED THEN DELETE",
                                                 "WHEN MATCHED THEN UPDATE SET s = t.s || '+' || s.s"};
  static constexpr const char* kNotMatched[] = {
      "WHEN NOT MATCHED AND s.v % 2 = 0 THEN INSERT (id, grp, v, s) VALUES (s.id, s.grp, s.v, s.s)",
      "WHEN NOT MATCHED AND s.grp = 0 THEN INSERT (id, v) VALUES (s.id, -s.v)",
  };
  static constexpr const char* kNotMatchedLast[] = {"WHEN NOT MATCHED THEN INSERT *"};
  static constexpr const char* kBySource[] = {
      "WHEN NOT MATCHED BY SOURCE AND t.v < 100 THEN DELETE",
      "WHEN NOT MATCHED BY SOURCE AND t.grp = 2 THEN UPDATE SET v = 0, s = 'gone'",
  };
  static constexpr const char* kBySourceLast[] = {"WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = t.v + 1"};

  std::mt19937 random_;
};

// Applies a parsed statement to the table at `path` with sluice.
Result<DmlResult> Apply(const std::shared_ptr<FileSystem>& fs, const std::string& path, const std::string& sql,
                        const std::vector<Row>& source) {
  SLUICE_ASSIGN_OR_RETURN(expr::DmlStatement statement, expr::ParseDml(sql));
  if (auto* merge = std::get_if<expr::MergeStatement>(&statement)) {
    MergeSpec spec{.target_alias = merge->target_alias, .source_alias = merge->source_alias, .on = merge->on,
                   .clauses = merge->clauses};
    return MergeInto(fs, path, {Batch(source)}, spec);
  }
  if (auto* update = std::get_if<expr::UpdateStatement>(&statement)) {
    return UpdateTable(fs, path, {.target_alias = update->target_alias, .assignments = update->assignments,
                                  .where = update->where});
  }
  const auto& del = std::get<expr::DeleteStatement>(statement);
  return DeleteFromTable(fs, path, {.target_alias = del.target_alias, .where = del.where});
}

std::vector<std::string> SluiceRows(const std::shared_ptr<FileSystem>& fs, const std::string& path) {
  std::vector<std::string> rows;
  auto scan = TableScan::Open(Snapshot::Load(fs, path).value());
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  while (scan.ok()) {
    auto batch = (*scan)->Next();
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    if (!batch.ok() || *batch == nullptr) break;
    for (std::string& row : CanonicalRows(**batch)) rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

TEST(DmlDuckDbIntegrationTest, RandomStatementsLeaveTheRowsDuckDbLeaves) {
  RequireDuckDb();
  auto fs = LocalFileSystem();
  sluice::testing::TempDir dir("delta-dml-duckdb");
  int merges_with_changes = 0;
  int rounds_with_vectors = 0;
  for (uint32_t round = 0; round < 40; ++round) {
    RandomDml random(20261204 + round);
    const std::string table = dir.Join(fmt::format("t{}", round));
    std::vector<Row> target = random.Rows(60 + static_cast<int>(round) * 7, 80, /*unique_ids=*/false);
    // The target in a few commits (so a few files), partitioned by grp in every other round.
    WriteOptions options;
    if (round % 2) options.partition_columns = {"grp"};
    // Every third round marks rows deleted with deletion vectors instead of rewriting files.
    const bool deletion_vectors = round % 3 == 2;
    if (deletion_vectors) options.table_properties = {{"delta.enableDeletionVectors", "true"}};
    // Every fourth round tracks row ids: rewritten rows carry theirs in materialized columns.
    const bool row_tracking = round % 4 == 3;
    if (row_tracking) options.table_properties["delta.enableRowTracking"] = "true";
    const size_t commits = 1 + round % 4;
    for (size_t c = 0; c < commits; ++c) {
      std::vector<Row> part(target.begin() + static_cast<std::ptrdiff_t>(target.size() * c / commits),
                            target.begin() + static_cast<std::ptrdiff_t>(target.size() * (c + 1) / commits));
      ASSERT_TRUE(WriteTable(fs, table, {Batch(part)}, options).ok());
    }
    std::vector<Row> source = random.Rows(static_cast<int>(round % 5) * 12, 100, /*unique_ids=*/true);
    const std::string sql = random.Statement();
    SCOPED_TRACE(sql);

    auto applied = Apply(fs, table, sql, source);
    ASSERT_TRUE(applied.ok()) << applied.status().ToString();
    if (applied->num_rows_updated + applied->num_rows_deleted + applied->num_rows_inserted > 0) ++merges_with_changes;

    std::vector<std::string> statements = DuckDbTable("t", target);
    for (std::string& s : DuckDbTable("s", source)) statements.push_back(std::move(s));
    statements.push_back(sql);
    statements.push_back("SELECT id, grp, v, s FROM t");
    bool ok = false;
    std::string error;
    std::vector<std::string> expected = DuckDbRows(statements, &ok, &error);
    ASSERT_TRUE(ok) << error;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(SluiceRows(fs, table), expected);
    if (row_tracking) {
      std::set<int64_t> row_ids;
      int64_t rows = 0;
      auto scan = TableScan::Open(Snapshot::Load(fs, table).value(), {.columns = {"id"}, .row_tracking = true});
      ASSERT_TRUE(scan.ok()) << scan.status().ToString();
      while (true) {
        auto batch = (*scan)->Next();
        ASSERT_TRUE(batch.ok()) << batch.status().ToString();
        if (*batch == nullptr) break;
        for (int64_t row = 0; row < (*batch)->num_rows(); ++row, ++rows) {
          row_ids.insert((*batch)->column(1)->Value<int64_t>(row));
        }
      }
      EXPECT_EQ(static_cast<int64_t>(row_ids.size()), rows) << "row ids stay unique";
    }

    if (deletion_vectors) {
      EXPECT_EQ(applied->num_rows_copied, 0);  // rows are marked deleted, never written again
      if (applied->num_deletion_vectors_added > 0) ++rounds_with_vectors;
      continue;  // read_parquet would read the rows the vectors delete
    }
    // The same rows through an independent replay of the log and DuckDB's Parquet reader.
    std::vector<std::string> replayed =
        DuckDbRows({"SELECT id, grp, v, s FROM read_parquet(" + testing::FileList(testing::Replay(table)) +
                    (round % 2 ? ", hive_partitioning = true, hive_types = {'grp': BIGINT})" : ")")},
                   &ok, &error);
    if (expected.empty()) continue;  // no live file left: nothing for read_parquet to read
    ASSERT_TRUE(ok) << error;
    std::sort(replayed.begin(), replayed.end());
    EXPECT_EQ(replayed, expected);
  }
  // The statements did change rows in most rounds (the comparison is not of untouched tables).
  EXPECT_GE(merges_with_changes, 25);
  EXPECT_GE(rounds_with_vectors, 5);
}

}  // namespace
}  // namespace sluice::delta
