// Differential conformance against a real Spark: every expression of src/expr/conformance/*.sql
// is evaluated by sluice and by Spark (tests/tools/spark_oracle.py, pyspark from the package
// index, local[1]), and the two outcomes must agree: the same result type and value, or both an
// error. Expressions read no columns (`SELECT <expr>`), so Spark's answer is the whole truth.
//
// The files are test data: one expression per line, `--` starts a comment, the file name is the
// function family the agreement figure is printed for. A difference sluice keeps on purpose is
// listed in src/expr/conformance/known_differences.txt with its reason and the modes it holds in
// (and docs/sql-expressions.md says so); the test fails for any other difference, and for a
// listed one that no longer differs.
//
// Every case runs in both of Spark's modes, ANSI (spark.sql.ansi.enabled, sluice's `sql.ansi`,
// the default of both) and non-ANSI, against one Spark session.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "sluice/core/compute.h"
#include "sluice/core/json_text.h"
#include "sluice/core/record_batch.h"
#include "sluice/expr/expression.h"
#include "expr/spark_oracle_testing.h"
#include "testing/paths.h"

namespace sluice::expr {
namespace {

namespace fs = std::filesystem;

const std::string kConformance = sluice::testing::SourceDir() + "/src/expr/conformance";

struct Case {
  std::string family;
  std::string expression;
};

std::vector<Case> LoadCases() {
  std::vector<Case> cases;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kConformance)) {
    if (entry.path().extension() == ".sql") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
      if (size_t comment = line.find("-- "); comment == 0 || line == "--") continue;
      line.erase(0, line.find_first_not_of(" \t"));
      line.erase(line.find_last_not_of(" \t\r") + 1);
      if (line.empty() || line.starts_with("--")) continue;
      cases.push_back({file.stem().string(), line});
    }
  }
  return cases;
}

struct Mode {
  std::string_view name;  // as the oracle and known_differences.txt name it
  bool ansi;
};
constexpr Mode kLegacy{"legacy", false};
constexpr Mode kAnsi{"ansi", true};

// expression -> reason, for the differences listed for `mode` (or for both modes).
std::map<std::string, std::string> KnownDifferences(const Mode& mode) {
  std::map<std::string, std::string> known;
  std::ifstream in(kConformance + "/known_differences.txt");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.starts_with("#")) continue;
    const size_t first = line.find('\t');
    const size_t second = first == std::string::npos ? first : line.find('\t', first + 1);
    EXPECT_NE(second, std::string::npos) << "known_differences.txt: not MODE<tab>EXPRESSION<tab>REASON: " << line;
    if (second == std::string::npos) continue;
    const std::string modes = line.substr(0, first);
    EXPECT_TRUE(modes == "both" || modes == "ansi" || modes == "legacy") << "known_differences.txt: mode " << modes;
    if (modes != "both" && modes != mode.name) continue;
    known[line.substr(first + 1, second - first - 1)] = line.substr(second + 1);
  }
  return known;
}

bool HasDatetime(const DataType& type) {
  switch (type.id()) {
    case TypeId::kDate:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return true;
    default: break;
  }
  for (const Field& field : type.id() == TypeId::kStruct ? type.fields() : std::vector<Field>{}) {
    if (HasDatetime(*field.type)) return true;
  }
  if (type.id() == TypeId::kArray) return HasDatetime(*type.element_type());
  if (type.id() == TypeId::kMap) return HasDatetime(*type.key_type()) || HasDatetime(*type.value_type());
  return false;
}

struct Outcome {
  std::string type;   // empty when it failed
  std::string value;  // the canonical text
  std::string error;  // the error class, when it failed
  bool failed() const { return !error.empty(); }
};

Result<ColumnPtr> EvaluateOnOneRow(const std::string& sql, const Mode& mode, TypePtr* type) {
  static const TypePtr empty = *DataType::Struct({});
  SLUICE_ASSIGN_OR_RETURN(Expression parsed, Expression::Parse(sql));
  SLUICE_ASSIGN_OR_RETURN(BoundExpression bound, Bind(parsed, empty, SqlOptions{.ansi = mode.ansi}));
  SLUICE_ASSIGN_OR_RETURN(BatchPtr row, RecordBatch::Make(empty, {}, 1));
  *type = bound.result_type();
  return bound.Evaluate(*row);
}

Outcome Sluice(const std::string& expression, const Mode& mode) {
  TypePtr type;
  Result<ColumnPtr> value = EvaluateOnOneRow(expression, mode, &type);
  if (!value.ok()) return {"", "", std::string(value.status().error_class())};
  Outcome outcome{type->ToString(), "", ""};
  if (HasDatetime(*type)) {
    if (type->id() != TypeId::kDate && type->id() != TypeId::kTimestamp && type->id() != TypeId::kTimestampNtz) {
      return {outcome.type, "", "NESTED_DATETIME_NOT_COMPARED"};
    }
    TypePtr text_type;
    Result<ColumnPtr> text = EvaluateOnOneRow("CAST((" + expression + ") AS STRING)", mode, &text_type);
    if (!text.ok()) return {outcome.type, "", std::string(text.status().error_class())};
    outcome.value = Render(**text, 0);
    return outcome;
  }
  outcome.value = Render(**value, 0);
  return outcome;
}

// Runs the oracle on every expression at once, in both modes (one Spark session): mode -> outcomes.
std::map<std::string, std::vector<Outcome>> Spark(const std::vector<Case>& cases) {
  std::string input = "[";
  for (size_t i = 0; i < cases.size(); ++i) input += (i ? "," : "") + JsonString(cases[i].expression);
  input += "]";
  const std::optional<std::string> output =
      RunSparkOracle("spark_oracle.py", input, fmt::format("{} {}", kLegacy.name, kAnsi.name));
  std::map<std::string, std::vector<Outcome>> outcomes;
  simdjson::dom::parser parser;
  simdjson::dom::object modes;
  if (!output || parser.parse(*output).get(modes) != simdjson::SUCCESS) {
    ADD_FAILURE() << "no results from the Spark oracle";
    return outcomes;
  }
  for (auto [mode, results] : modes) {
    simdjson::dom::array list;
    if (results.get(list) != simdjson::SUCCESS) continue;
    for (simdjson::dom::element result : list) {
      Outcome outcome;
      std::string_view text;
      if (result["error"].get(text) == simdjson::SUCCESS) outcome.error = text;
      if (result["type"].get(text) == simdjson::SUCCESS) outcome.type = text;
      if (result["value"].get(text) == simdjson::SUCCESS) outcome.value = text;
      outcomes[std::string(mode)].push_back(outcome);
    }
  }
  return outcomes;
}

// The cases and Spark's outcomes, computed once for both tests.
const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = LoadCases();
  return cases;
}
const std::vector<Outcome>& SparkOutcomes(const Mode& mode) {
  static const std::map<std::string, std::vector<Outcome>> outcomes = Spark(Cases());
  static const std::vector<Outcome> none;
  auto it = outcomes.find(std::string(mode.name));
  return it == outcomes.end() ? none : it->second;
}

bool Agree(const Outcome& sluice, const Outcome& spark) {
  if (sluice.failed() || spark.failed()) return sluice.failed() && spark.failed();
  return sluice.type == spark.type && sluice.value == spark.value;
}

std::string Describe(const Outcome& outcome) {
  return outcome.failed() ? "error " + outcome.error : outcome.type + " " + outcome.value;
}

void ExpectAgreement(const Mode& mode) {
  const std::vector<Case>& cases = Cases();
  ASSERT_GT(cases.size(), 100u);
  const std::map<std::string, std::string> known = KnownDifferences(mode);
  const std::vector<Outcome>& spark = SparkOutcomes(mode);
  ASSERT_EQ(spark.size(), cases.size());

  std::map<std::string, std::pair<int, int>> by_family;  // agreeing, all
  std::set<std::string> still_different;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const Outcome ours = Sluice(c.expression, mode);
    const bool agree = Agree(ours, spark[i]);
    auto& [agreeing, all] = by_family[c.family];
    ++all;
    if (agree) ++agreeing;
    auto listed = known.find(c.expression);
    if (listed != known.end()) {
      still_different.insert(c.expression);
      EXPECT_FALSE(agree) << mode.name << ", " << c.family << ": `" << c.expression
                          << "` now agrees with Spark: remove it from known_differences.txt";
      continue;
    }
    EXPECT_TRUE(agree) << mode.name << ", " << c.family << ": `" << c.expression << "`\n  sluice: " << Describe(ours)
                       << "\n  Spark:  " << Describe(spark[i]);
  }
  for (const auto& [expression, reason] : known) {
    EXPECT_TRUE(still_different.count(expression)) << "known_differences.txt lists `" << expression
                                                    << "` for " << mode.name << ", which no case file has";
  }
  int agreeing_total = 0, total = 0;
  std::string table = fmt::format("agreement with Spark ({}), by function family:\n", mode.ansi ? "ANSI" : "non-ANSI");
  for (const auto& [family, counts] : by_family) {
    table += fmt::format("  {:<12} {:>4}/{:<4} {:6.2f}%\n", family, counts.first, counts.second,
                         100.0 * counts.first / counts.second);
    agreeing_total += counts.first;
    total += counts.second;
  }
  table += fmt::format("  {:<12} {:>4}/{:<4} {:6.2f}%\n", "all", agreeing_total, total, 100.0 * agreeing_total / total);
  std::printf("%s", table.c_str());
}

TEST(SparkConformanceTest, EveryExpressionMeansWhatItMeansInSparksAnsiMode) { ExpectAgreement(kAnsi); }

TEST(SparkConformanceTest, EveryExpressionMeansWhatItMeansInSparksNonAnsiMode) { ExpectAgreement(kLegacy); }

}  // namespace
}  // namespace sluice::expr
