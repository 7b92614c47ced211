#include "sluice/engine/hash_aggregation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "sluice/core/builder.h"
#include "sluice/core/clock.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "core/group_keys.h"

namespace sluice::engine {
namespace {

// --- accumulators: one per aggregate call, a state per group ---

class Accumulator {
 public:
  virtual ~Accumulator() = default;
  // Makes room for `groups` groups; new ones start empty.
  virtual void Grow(size_t groups) = 0;
  // Row i of the arguments belongs to group groups[i].
  virtual Status Update(std::span<const ColumnPtr> args, std::span<const int32_t> groups) = 0;
  virtual std::vector<Field> StateFields(const std::string& prefix) const = 0;
  virtual void AppendState(std::span<const int64_t> groups, std::vector<ColumnPtr>* columns) const = 0;
  // Sets group `group` from row `row` of the state columns starting at `columns`.
  virtual void LoadState(std::span<const ColumnPtr> columns, int64_t row, int32_t group) = 0;
  virtual Result<ColumnPtr> Finish(std::span<const int64_t> groups) const = 0;
  virtual int64_t bytes() const = 0;
};

bool AllValid(std::span<const ColumnPtr> args, int64_t row) {
  for (const ColumnPtr& arg : args) {
    if (arg->IsNull(row)) return false;
  }
  return true;
}

template <typename T>
ColumnPtr FixedColumn(const TypePtr& type, std::span<const int64_t> groups, const std::vector<T>& values,
                      const std::vector<uint8_t>* valid) {
  FixedWidthBuilder<T> builder(type);
  builder.Reserve(static_cast<int64_t>(groups.size()));
  for (int64_t g : groups) {
    if (valid != nullptr && !(*valid)[static_cast<size_t>(g)]) {
      builder.AppendNull();
    } else {
      builder.Append(values[static_cast<size_t>(g)]);
    }
  }
  return builder.Finish();
}

class CountAccumulator final : public Accumulator {
 public:
  void Grow(size_t groups) override { counts_.resize(groups, 0); }
  Status Update(std::span<const ColumnPtr> args, std::span<const int32_t> groups) override {
    for (size_t i = 0; i < groups.size(); ++i) {
      if (AllValid(args, static_cast<int64_t>(i))) ++counts_[static_cast<size_t>(groups[i])];
    }
    return Status::OK();
  }
  std::vector<Field> StateFields(const std::string& prefix) const override {
    return {Field{prefix + "count", DataType::Long(), false}};
  }
  void AppendState(std::span<const int64_t> groups, std::vector<ColumnPtr>* columns) const override {
    columns->push_back(FixedColumn(DataType::Long(), groups, counts_, nullptr));
  }
  void LoadState(std::span<const ColumnPtr> columns, int64_t row, int32_t group) override {
    counts_[static_cast<size_t>(group)] = columns[0]->Value<int64_t>(row);
  }
  Result<ColumnPtr> Finish(std::span<const int64_t> groups) const override {
    return FixedColumn(DataType::Long(), groups, counts_, nullptr);
  }
  int64_t bytes() const override { return static_cast<int64_t>(counts_.capacity() * sizeof(int64_t)); }

 private:
  std::vector<int64_t> counts_;
};

int128_t PowerOfTen(int n) {
  int128_t p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

// sum and avg. T is what the argument arrives as: int64_t (sum of integral values), double, or
// int128_t (decimals, unscaled at the argument's scale).
template <typename T>
class SumAccumulator final : public Accumulator {
 public:
  SumAccumulator(const expr::AggregateCall& call, bool ansi)
      : call_(call), average_(call.function == "avg"), ansi_(ansi) {
    if constexpr (std::is_same_v<T, int128_t>) input_scale_ = call.arguments[0].result_type()->scale();
  }
  void Grow(size_t groups) override {
    sums_.resize(groups, T{});
    counts_.resize(groups, 0);
    overflowed_.resize(groups, 0);
  }
  Status Update(std::span<const ColumnPtr> args, std::span<const int32_t> groups) override {
    const Column& values = *args[0];
    for (size_t i = 0; i < groups.size(); ++i) {
      const int64_t row = static_cast<int64_t>(i);
      if (values.IsNull(row)) continue;
      const size_t g = static_cast<size_t>(groups[i]);
      T value = values.Value<T>(row);
      ++counts_[g];
      if constexpr (std::is_same_v<T, double>) {
        sums_[g] += value;
      } else if constexpr (std::is_same_v<T, int64_t>) {
        if (__builtin_add_overflow(sums_[g], value, &sums_[g]) && ansi_) {
          return Status::Error(errors::kArithmeticOverflow,
                               fmt::format("{}: the bigint sum overflowed; use try_sum-free logic such as "
                                           "sum(CAST(x AS DECIMAL(38,0))), or turn off ANSI mode",
                                           call_.sql));
        }
      } else {
        // Unscaled decimals of at most 38 digits: a sum past 38 digits cannot come back into any
        // result type, and stays overflowed (NULL, or an error in ANSI mode), as in Spark.
        static const int128_t kLimit = PowerOfTen(38);
        if (overflowed_[g]) continue;
        // Two values of 38 digits can pass int128's range (about 1.7e38) before the check.
        if (__builtin_add_overflow(sums_[g], value, &sums_[g]) || sums_[g] >= kLimit || sums_[g] <= -kLimit) {
          overflowed_[g] = 1;
        }
      }
    }
    return Status::OK();
  }
  std::vector<Field> StateFields(const std::string& prefix) const override {
    return {Field{prefix + "sum", StateType(), true}, Field{prefix + "count", DataType::Long(), false}};
  }
  void AppendState(std::span<const int64_t> groups, std::vector<ColumnPtr>* columns) const override {
    // An overflowed decimal sum is stored as null with its count: it stays overflowed.
    std::vector<uint8_t> valid(sums_.size());
    for (size_t g = 0; g < valid.size(); ++g) valid[g] = !overflowed_[g];
    columns->push_back(FixedColumn(StateType(), groups, sums_, &valid));
    columns->push_back(FixedColumn(DataType::Long(), groups, counts_, nullptr));
  }
  void LoadState(std::span<const ColumnPtr> columns, int64_t row, int32_t group) override {
    const size_t g = static_cast<size_t>(group);
    counts_[g] = columns[1]->Value<int64_t>(row);
    overflowed_[g] = columns[0]->IsNull(row) ? 1 : 0;
    sums_[g] = columns[0]->IsNull(row) ? T{} : columns[0]->Value<T>(row);
  }
  Result<ColumnPtr> Finish(std::span<const int64_t> groups) const override {
    const TypePtr& type = call_.result_type;
    if constexpr (std::is_same_v<T, int128_t>) {
      DecimalBuilder builder(type);
      const int128_t limit = PowerOfTen(type->precision());
      for (int64_t group : groups) {
        const size_t g = static_cast<size_t>(group);
        if (counts_[g] == 0) {
          builder.AppendNull();
          continue;
        }
        std::optional<int128_t> value = overflowed_[g] ? std::nullopt : Scaled(g, type->scale());
        if (value && (*value >= limit || *value <= -limit)) value.reset();
        if (!value) {
          if (ansi_) {
            return Status::Error(errors::kNumericValueOutOfRange,
                                 fmt::format("{}: the result does not fit {}; cast the argument to a wider decimal, "
                                             "or turn off ANSI mode to get NULL",
                                             call_.sql, type->ToString()));
          }
          builder.AppendNull();
          continue;
        }
        builder.Append(*value);
      }
      return builder.Finish();
    } else {
      if (average_) {
        DoubleBuilder builder(type);
        for (int64_t group : groups) {
          const size_t g = static_cast<size_t>(group);
          if (counts_[g] == 0) {
            builder.AppendNull();
          } else {
            builder.Append(static_cast<double>(sums_[g]) / static_cast<double>(counts_[g]));
          }
        }
        return builder.Finish();
      }
      std::vector<uint8_t> valid(counts_.size());
      for (size_t g = 0; g < valid.size(); ++g) valid[g] = counts_[g] > 0;
      return FixedColumn(type, groups, sums_, &valid);
    }
  }
  int64_t bytes() const override {
    return static_cast<int64_t>(sums_.capacity() * sizeof(T) + counts_.capacity() * sizeof(int64_t) +
                                overflowed_.capacity());
  }

 private:
  TypePtr StateType() const {
    if constexpr (std::is_same_v<T, int128_t>) return DataType::Decimal(38, input_scale_).value();
    if constexpr (std::is_same_v<T, int64_t>) return DataType::Long();
    return DataType::Double();
  }
  // The group's sum (or average) at `scale`, rounded half up; nullopt when it overflows.
  std::optional<int128_t> Scaled(size_t g, int scale) const {
    const int128_t sum = sums_[g];
    const int shift = scale - input_scale_;
    if (!average_) return sum;  // a sum keeps the argument's scale
    const int128_t count = counts_[g];
    const int128_t factor = PowerOfTen(shift);
    int128_t quotient = sum / count;
    int128_t remainder = sum % count;
    int128_t scaled;
    if (__builtin_mul_overflow(quotient, factor, &scaled)) return std::nullopt;
    // remainder * factor < count * 10^38 cannot overflow: count < 2^63, factor <= 10^38 is not
    // reachable here (shift is at most 4 when the scale is not capped).
    int128_t fraction_numerator = remainder * factor;
    int128_t fraction = fraction_numerator / count;
    int128_t rest = fraction_numerator % count;
    scaled += fraction;
    if (rest != 0 && (rest < 0 ? -rest : rest) * 2 >= count) scaled += sum < 0 ? -1 : 1;
    return scaled;
  }

  const expr::AggregateCall& call_;
  bool average_;
  bool ansi_;
  int input_scale_ = 0;
  std::vector<T> sums_;
  std::vector<int64_t> counts_;
  std::vector<uint8_t> overflowed_;
};

// min, max, first, last. T is the physical type of the value (std::string for string and binary).
enum class Choice { kMin, kMax, kFirst, kLast };

template <typename T>
bool Less(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>) {
    // Spark orders NaN above every other value.
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

template <typename T>
class ValueAccumulator final : public Accumulator {
 public:
  ValueAccumulator(const expr::AggregateCall& call, Choice choice)
      : type_(call.arguments[0].result_type()),
        choice_(choice),
        ignore_nulls_(choice == Choice::kMin || choice == Choice::kMax || call.ignore_nulls) {}

  void Grow(size_t groups) override {
    values_.resize(groups, T{});
    set_.resize(groups, 0);
    valid_.resize(groups, 0);
  }
  Status Update(std::span<const ColumnPtr> args, std::span<const int32_t> groups) override {
    const Column& column = *args[0];
    for (size_t i = 0; i < groups.size(); ++i) {
      const int64_t row = static_cast<int64_t>(i);
      const bool valid = column.IsValid(row);
      if (!valid && ignore_nulls_) continue;
      const size_t g = static_cast<size_t>(groups[i]);
      if (choice_ == Choice::kFirst && set_[g]) continue;
      if (valid && set_[g] && valid_[g] && (choice_ == Choice::kMin || choice_ == Choice::kMax)) {
        T value = Read(column, row);
        if (choice_ == Choice::kMin ? Less(value, values_[g]) : Less(values_[g], value)) values_[g] = std::move(value);
        continue;
      }
      set_[g] = 1;
      valid_[g] = valid ? 1 : 0;
      values_[g] = valid ? Read(column, row) : T{};
    }
    return Status::OK();
  }
  std::vector<Field> StateFields(const std::string& prefix) const override {
    return {Field{prefix + "value", type_, true}, Field{prefix + "set", DataType::Boolean(), false}};
  }
  void AppendState(std::span<const int64_t> groups, std::vector<ColumnPtr>* columns) const override {
    columns->push_back(Values(groups));
    columns->push_back(FixedColumn(DataType::Boolean(), groups, set_, nullptr));
  }
  void LoadState(std::span<const ColumnPtr> columns, int64_t row, int32_t group) override {
    const size_t g = static_cast<size_t>(group);
    set_[g] = columns[1]->Value<uint8_t>(row);
    valid_[g] = columns[0]->IsValid(row) ? 1 : 0;
    values_[g] = valid_[g] ? Read(*columns[0], row) : T{};
  }
  Result<ColumnPtr> Finish(std::span<const int64_t> groups) const override { return Values(groups); }
  int64_t bytes() const override {
    int64_t bytes = static_cast<int64_t>(values_.capacity() * sizeof(T) + set_.capacity() + valid_.capacity());
    if constexpr (std::is_same_v<T, std::string>) {
      for (const std::string& v : values_) bytes += static_cast<int64_t>(v.capacity() > 15 ? v.capacity() : 0);
    }
    return bytes;
  }

 private:
  static T Read(const Column& column, int64_t row) {
    if constexpr (std::is_same_v<T, std::string>) {
      return std::string(column.View(row));
    } else {
      return column.Value<T>(row);
    }
  }
  ColumnPtr Values(std::span<const int64_t> groups) const {
    if constexpr (std::is_same_v<T, std::string>) {
      BinaryBuilder builder(type_);
      for (int64_t group : groups) {
        const size_t g = static_cast<size_t>(group);
        if (set_[g] && valid_[g]) {
          builder.Append(values_[g]);
        } else {
          builder.AppendNull();
        }
      }
      return builder.Finish();
    } else {
      std::vector<uint8_t> valid(set_.size());
      for (size_t g = 0; g < valid.size(); ++g) valid[g] = set_[g] && valid_[g];
      return FixedColumn(type_, groups, values_, &valid);
    }
  }

  TypePtr type_;
  Choice choice_;
  bool ignore_nulls_;
  std::vector<T> values_;
  std::vector<uint8_t> set_;
  std::vector<uint8_t> valid_;
};

// collect_list, collect_set and count(DISTINCT x): each group's values (nulls skipped), distinct
// ones only for the last two, at most kMaxCollected of them. T as for ValueAccumulator.
constexpr size_t kMaxCollected = 100'000;

template <typename T>
class CollectAccumulator final : public Accumulator {
 public:
  CollectAccumulator(const expr::AggregateCall& call, bool distinct, bool count_only)
      : call_(call), type_(call.arguments[0].result_type()), distinct_(distinct), count_only_(count_only) {}

  void Grow(size_t groups) override { values_.resize(groups); }
  Status Update(std::span<const ColumnPtr> args, std::span<const int32_t> groups) override {
    const Column& column = *args[0];
    for (size_t i = 0; i < groups.size(); ++i) {
      const int64_t row = static_cast<int64_t>(i);
      if (column.IsNull(row)) continue;
      SLUICE_RETURN_IF_ERROR(Insert(groups[i], column, row));
    }
    return Status::OK();
  }
  std::vector<Field> StateFields(const std::string& prefix) const override {
    return {Field{prefix + "values", DataType::Array(type_, false), false}};
  }
  void AppendState(std::span<const int64_t> groups, std::vector<ColumnPtr>* columns) const override {
    columns->push_back(Lists(groups));
  }
  void LoadState(std::span<const ColumnPtr> columns, int64_t row, int32_t group) override {
    const Column& lists = *columns[0];
    const Column& elements = *lists.children[0];
    // The row replaces the group's values (a later version holds all of an earlier one's); its
    // values are distinct already, and join the seen ones without being checked against them.
    values_[static_cast<size_t>(group)].clear();
    for (int64_t e = lists.offsets[row]; e < lists.offsets[row + 1]; ++e) (void)Insert(group, elements, e, true);
  }
  Result<ColumnPtr> Finish(std::span<const int64_t> groups) const override {
    if (!count_only_) return Lists(groups);
    Int64Builder counts(DataType::Long());
    for (int64_t g : groups) counts.Append(static_cast<int64_t>(values_[static_cast<size_t>(g)].size()));
    return counts.Finish();
  }
  int64_t bytes() const override {
    int64_t bytes = static_cast<int64_t>(values_.capacity() * sizeof(std::vector<T>));
    for (const auto& list : values_) bytes += static_cast<int64_t>(list.capacity() * sizeof(T));
    for (const std::string& key : seen_) bytes += static_cast<int64_t>(key.size() + 48);
    return bytes;
  }

 private:
  // Adds the value unless the group has it (distinct) or `loading`, which adds it anyway.
  Status Insert(int32_t group, const Column& column, int64_t row, bool loading = false) {
    std::vector<T>& list = values_[static_cast<size_t>(group)];
    if (distinct_) {
      std::string key(reinterpret_cast<const char*>(&group), sizeof(group));
      AppendKey(column, row, &key);
      if (!seen_.insert(std::move(key)).second && !loading) return Status::OK();
    }
    if (list.size() >= kMaxCollected) {
      return Status::Error(errors::kCollectionSizeLimitExceeded,
                           fmt::format("{}: a group collected more than {} values; aggregate a narrower key, or "
                                       "count instead of collecting",
                                       call_.sql, kMaxCollected));
    }
    if constexpr (std::is_same_v<T, std::string>) {
      list.emplace_back(column.View(row));
    } else {
      list.push_back(column.Value<T>(row));
    }
    return Status::OK();
  }
  ColumnPtr Lists(std::span<const int64_t> groups) const {
    ListBuilder builder(DataType::Array(type_, false));
    ColumnBuilder* elements = builder.element_builder();
    for (int64_t g : groups) {
      for (const T& value : values_[static_cast<size_t>(g)]) {
        if constexpr (std::is_same_v<T, std::string>) {
          static_cast<BinaryBuilder*>(elements)->Append(value);
        } else {
          static_cast<FixedWidthBuilder<T>*>(elements)->Append(value);
        }
      }
      builder.Append();
    }
    return builder.Finish();
  }

  const expr::AggregateCall& call_;
  TypePtr type_;
  bool distinct_;
  bool count_only_;
  std::vector<std::vector<T>> values_;
  std::unordered_set<std::string> seen_;  // group id bytes + the value's key bytes
};

// approx_count_distinct: a HyperLogLog sketch per group (2^p one-byte registers, p from the
// relative standard deviation as Spark derives it: 9 for the default 0.05), with linear counting
// for small cardinalities. Any type: values are hashed by their grouping bytes.
class SketchAccumulator final : public Accumulator {
 public:
  explicit SketchAccumulator(const expr::AggregateCall& call)
      : precision_(static_cast<int>(std::ceil(2.0 * std::log2(1.106 / call.relative_sd)))) {
    precision_ = std::clamp(precision_, 4, 18);
  }
  void Grow(size_t groups) override { registers_.resize(groups); }
  Status Update(std::span<const ColumnPtr> args, std::span<const int32_t> groups) override {
    const Column& column = *args[0];
    std::string key;
    for (size_t i = 0; i < groups.size(); ++i) {
      const int64_t row = static_cast<int64_t>(i);
      if (column.IsNull(row)) continue;
      key.clear();
      AppendKey(column, row, &key);
      Observe(Mix(std::hash<std::string_view>{}(key)), groups[i]);
    }
    return Status::OK();
  }
  std::vector<Field> StateFields(const std::string& prefix) const override {
    return {Field{prefix + "registers", DataType::Binary(), true}};
  }
  void AppendState(std::span<const int64_t> groups, std::vector<ColumnPtr>* columns) const override {
    BinaryBuilder builder(DataType::Binary());
    for (int64_t g : groups) {
      const std::string& registers = registers_[static_cast<size_t>(g)];
      if (registers.empty()) {
        builder.AppendNull();
      } else {
        builder.Append(registers);
      }
    }
    columns->push_back(builder.Finish());
  }
  void LoadState(std::span<const ColumnPtr> columns, int64_t row, int32_t group) override {
    std::string& registers = registers_[static_cast<size_t>(group)];
    registers = columns[0]->IsNull(row) ? std::string() : std::string(columns[0]->View(row));
    if (!registers.empty() && registers.size() != (size_t{1} << precision_)) registers.clear();
  }
  Result<ColumnPtr> Finish(std::span<const int64_t> groups) const override {
    Int64Builder estimates(DataType::Long());
    for (int64_t g : groups) estimates.Append(Estimate(registers_[static_cast<size_t>(g)]));
    return estimates.Finish();
  }
  int64_t bytes() const override {
    int64_t bytes = static_cast<int64_t>(registers_.capacity() * sizeof(std::string));
    for (const std::string& r : registers_) bytes += static_cast<int64_t>(r.capacity());
    return bytes;
  }

 private:
  // A finalizer of 64-bit hashes (splitmix64's), so that every bit of the index and the run of
  // zeros depends on every bit of the value.
  static uint64_t Mix(uint64_t h) {
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
  }
  void Observe(uint64_t hash, int32_t group) {
    std::string& registers = registers_[static_cast<size_t>(group)];
    if (registers.empty()) registers.assign(size_t{1} << precision_, '\0');
    const size_t index = static_cast<size_t>(hash >> (64 - precision_));
    const uint64_t rest = (hash << precision_) | (uint64_t{1} << (precision_ - 1));
    const char rank = static_cast<char>(__builtin_clzll(rest) + 1);
    if (registers[index] < rank) registers[index] = rank;
  }
  int64_t Estimate(const std::string& registers) const {
    if (registers.empty()) return 0;
    const double m = static_cast<double>(registers.size());
    double sum = 0;
    int zeros = 0;
    for (char r : registers) {
      sum += std::ldexp(1.0, -r);
      zeros += r == 0;
    }
    const double alpha = 0.7213 / (1 + 1.079 / m);
    double estimate = alpha * m * m / sum;
    if (estimate <= 2.5 * m && zeros > 0) estimate = m * std::log(m / zeros);
    return static_cast<int64_t>(std::llround(estimate));
  }

  int precision_;
  std::vector<std::string> registers_;  // empty until the group's first value
};

template <template <typename> class Acc, typename... Args>
Result<std::unique_ptr<Accumulator>> ForValueType(const DataType& type, const expr::AggregateCall& call,
                                                  Args... args) {
  switch (type.id()) {
    case TypeId::kBoolean: return std::unique_ptr<Accumulator>(new Acc<uint8_t>(call, args...));
    case TypeId::kByte: return std::unique_ptr<Accumulator>(new Acc<int8_t>(call, args...));
    case TypeId::kShort: return std::unique_ptr<Accumulator>(new Acc<int16_t>(call, args...));
    case TypeId::kInteger:
    case TypeId::kDate: return std::unique_ptr<Accumulator>(new Acc<int32_t>(call, args...));
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return std::unique_ptr<Accumulator>(new Acc<int64_t>(call, args...));
    case TypeId::kFloat: return std::unique_ptr<Accumulator>(new Acc<float>(call, args...));
    case TypeId::kDouble: return std::unique_ptr<Accumulator>(new Acc<double>(call, args...));
    case TypeId::kDecimal: return std::unique_ptr<Accumulator>(new Acc<int128_t>(call, args...));
    case TypeId::kString:
    case TypeId::kBinary: return std::unique_ptr<Accumulator>(new Acc<std::string>(call, args...));
    case TypeId::kStruct:
    case TypeId::kArray:
    case TypeId::kMap: break;
  }
  return Status::Error(errors::kDatatypeMismatch,
                       fmt::format("{}: a streaming aggregation cannot yet keep a {} value; aggregate a field of it",
                                   call.sql, type.ToString()));
}

Result<std::unique_ptr<Accumulator>> MakeAccumulator(const expr::AggregateCall& call, bool ansi) {
  const std::string& f = call.function;
  if (f == "count") return std::unique_ptr<Accumulator>(new CountAccumulator());
  const DataType& type = *call.arguments[0].result_type();
  if (f == "sum" || f == "avg") {
    if (type.id() == TypeId::kDecimal) return std::unique_ptr<Accumulator>(new SumAccumulator<int128_t>(call, ansi));
    if (type.id() == TypeId::kLong) return std::unique_ptr<Accumulator>(new SumAccumulator<int64_t>(call, ansi));
    return std::unique_ptr<Accumulator>(new SumAccumulator<double>(call, ansi));
  }
  if (f == "approx_count_distinct") return std::unique_ptr<Accumulator>(new SketchAccumulator(call));
  if (f == "collect_list" || f == "collect_set" || f == "count_distinct") {
    return ForValueType<CollectAccumulator>(type, call, f != "collect_list", f == "count_distinct");
  }
  Choice choice = f == "min" ? Choice::kMin : f == "max" ? Choice::kMax : f == "first" ? Choice::kFirst : Choice::kLast;
  return ForValueType<ValueAccumulator>(type, call, choice);
}

}  // namespace

class HashAggregation::Impl {
 public:
  Impl(expr::BoundAggregation plan, expr::SqlOptions options) : plan_(std::move(plan)), options_(options) {}

  Status Init() {
    std::vector<Field> fields;
    for (int k = 0; k < static_cast<int>(plan_.keys.size()); ++k) fields.push_back(plan_.grouped_schema->field(k));
    for (size_t a = 0; a < plan_.aggregates.size(); ++a) {
      SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Accumulator> accumulator,
                              MakeAccumulator(plan_.aggregates[a], options_.ansi));
      for (Field& field : accumulator->StateFields(fmt::format("{}#", a))) fields.push_back(std::move(field));
      accumulators_.push_back(std::move(accumulator));
    }
    SLUICE_ASSIGN_OR_RETURN(state_schema_, DataType::Struct(std::move(fields)));
    std::vector<Field> key_fields(state_schema_->fields().begin(), state_schema_->fields().begin() + plan_.keys.size());
    SLUICE_ASSIGN_OR_RETURN(TypePtr key_schema, DataType::Struct(std::move(key_fields)));
    keys_ = std::make_unique<GroupKeys>(std::move(key_schema));
    Reset();
    return Status::OK();
  }

  void Reset() {
    global_fetched_ = false;
    numbered_rows_ = 0;
    keys_->Clear();
    num_groups_ = 0;
    changed_flags_.clear();
    changed_.clear();
    for (auto& accumulator : accumulators_) accumulator->Grow(0);
    // A global aggregate has its one group from the start: complete mode shows it before any row.
    if (plan_.keys.empty()) Grow(1);
  }

  Status Add(const RecordBatch& given, int64_t now) {
    if (given.num_rows() == 0) return Status::OK();
    SLUICE_RETURN_IF_ERROR(FetchGlobalGroup());
    // Grouped by sliding windows, a row counts once in each window that holds it.
    const RecordBatch* batch = &given;
    BatchPtr expanded;
    ColumnPtr windows;
    for (const expr::BoundExpression& key : plan_.keys) {
      if (!expr::IsSlidingWindow(key)) continue;
      SLUICE_ASSIGN_OR_RETURN(expr::SlidingWindows sliding, expr::SlidingWindowsOf(key, given, now));
      std::vector<ColumnPtr> columns;
      for (const ColumnPtr& column : given.columns()) columns.push_back(Take(column, sliding.rows));
      SLUICE_ASSIGN_OR_RETURN(expanded, RecordBatch::Make(given.schema(), std::move(columns),
                                                          static_cast<int64_t>(sliding.rows.size())));
      windows = std::move(sliding.windows);
      batch = expanded.get();
      break;  // one time window per grouping (BindAggregation)
    }
    const RecordBatch& rows = *batch;
    const int64_t n = rows.num_rows();
    if (n == 0) return Status::OK();
    const int64_t first_row = numbered_rows_;
    numbered_rows_ += n;
    std::vector<ColumnPtr> keys;
    for (const expr::BoundExpression& key : plan_.keys) {
      if (windows && expr::IsSlidingWindow(key)) {
        keys.push_back(windows);
        continue;
      }
      SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, key.Evaluate(rows, now, first_row));
      keys.push_back(std::move(column));
    }
    std::vector<int32_t> groups;
    SLUICE_RETURN_IF_ERROR(AssignGroups(keys, n, &groups, /*from_backing=*/true));
    for (size_t a = 0; a < accumulators_.size(); ++a) {
      std::vector<ColumnPtr> args;
      for (const expr::BoundExpression& argument : plan_.aggregates[a].arguments) {
        SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, argument.Evaluate(rows, now, first_row));
        args.push_back(std::move(column));
      }
      SLUICE_RETURN_IF_ERROR(accumulators_[a]->Update(args, groups));
    }
    for (int32_t g : groups) MarkChanged(g);
    return Status::OK();
  }

  Result<BatchPtr> Output(OutputMode mode, int64_t now) {
    if (mode == OutputMode::kAppend) {
      return Status::Error(errors::kInvalidArgument, "an aggregation has no append output without a watermark");
    }
    SLUICE_RETURN_IF_ERROR(FetchGlobalGroup());
    if (mode == OutputMode::kComplete) SLUICE_RETURN_IF_ERROR(FetchEveryGroup());
    std::vector<int64_t> groups = mode == OutputMode::kComplete ? AllGroups() : ChangedGroups();
    SLUICE_ASSIGN_OR_RETURN(BatchPtr grouped, Grouped(groups));
    if (plan_.having) {
      std::vector<int64_t> kept;
      SLUICE_RETURN_IF_ERROR(plan_.having->Filter(*grouped, now, &kept));
      if (static_cast<int64_t>(kept.size()) != grouped->num_rows()) grouped = Take(grouped, kept);
    }
    std::vector<ColumnPtr> columns;
    for (const expr::BoundExpression& output : plan_.outputs) {
      SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, output.Evaluate(*grouped, now));
      columns.push_back(std::move(column));
    }
    return RecordBatch::Make(plan_.output_schema, std::move(columns), grouped->num_rows());
  }

  Result<BatchPtr> State(const std::vector<int64_t>& groups) {
    std::vector<ColumnPtr> columns;
    SLUICE_RETURN_IF_ERROR(KeysOf(groups, &columns));
    for (const auto& accumulator : accumulators_) accumulator->AppendState(groups, &columns);
    return RecordBatch::Make(state_schema_, std::move(columns), static_cast<int64_t>(groups.size()));
  }

  Status Load(const RecordBatch& state) {
    if (!state.schema()->Equals(*state_schema_)) {
      return Status::Error(errors::kCannotLoadStateStore,
                           fmt::format("the state rows are {}, but this aggregation keeps {}",
                                       state.schema()->ToString(), state_schema_->ToString()));
    }
    std::vector<ColumnPtr> keys(state.columns().begin(), state.columns().begin() + plan_.keys.size());
    std::vector<int32_t> groups;
    SLUICE_RETURN_IF_ERROR(AssignGroups(keys, state.num_rows(), &groups, /*from_backing=*/false));
    LoadStates(state, groups);
    return Status::OK();
  }

  void ClearChanges() {
    for (int64_t g : changed_) changed_flags_[static_cast<size_t>(g)] = 0;
    changed_.clear();
  }

  std::vector<int64_t> AllGroups() const {
    std::vector<int64_t> all(static_cast<size_t>(num_groups_));
    for (int64_t g = 0; g < num_groups_; ++g) all[static_cast<size_t>(g)] = g;
    return all;
  }
  std::vector<int64_t> ChangedGroups() const {
    std::vector<int64_t> groups = changed_;
    std::sort(groups.begin(), groups.end());
    return groups;
  }

  int64_t memory_bytes() const {
    int64_t bytes = keys_->memory_bytes();
    for (const auto& accumulator : accumulators_) bytes += accumulator->bytes();
    return bytes;
  }

  expr::BoundAggregation plan_;
  expr::SqlOptions options_;
  std::vector<std::unique_ptr<Accumulator>> accumulators_;
  TypePtr state_schema_;
  std::unique_ptr<GroupKeys> keys_;
  int64_t num_groups_ = 0;
  std::vector<uint8_t> changed_flags_;
  std::vector<int64_t> changed_;
  // The operator's backing (StatefulOperator::set_backing), read through its slot.
  StateBacking* const* backing_slot_ = nullptr;
  // The rows Add() evaluated since NewBatch(): the next row's number within its batch.
  int64_t numbered_rows_ = 0;
  // Whether a global aggregate's one group has been read from the backing since Reset().
  bool global_fetched_ = false;

 private:
  void Grow(int64_t groups) {
    num_groups_ = groups;
    changed_flags_.resize(static_cast<size_t>(groups), 0);
    for (auto& accumulator : accumulators_) accumulator->Grow(static_cast<size_t>(groups));
  }
  void MarkChanged(int64_t g) {
    if (changed_flags_[static_cast<size_t>(g)]) return;
    changed_flags_[static_cast<size_t>(g)] = 1;
    changed_.push_back(g);
  }

  StateBacking* backing() const { return backing_slot_ == nullptr ? nullptr : *backing_slot_; }

  // The group of each row's keys, creating groups for new keys; with `from_backing`, a new key the
  // backing holds starts from its stored state.
  Status AssignGroups(const std::vector<ColumnPtr>& keys, int64_t n, std::vector<int32_t>* groups,
                      bool from_backing) {
    std::vector<int64_t> new_rows;
    SLUICE_RETURN_IF_ERROR(keys_->Assign(keys, n, groups, &new_rows));
    if (new_rows.empty()) return Status::OK();
    Grow(num_groups_ + static_cast<int64_t>(new_rows.size()));
    if (backing() == nullptr || !from_backing) return Status::OK();
    std::vector<int64_t> found;
    SLUICE_ASSIGN_OR_RETURN(BatchPtr stored, backing()->Find(keys, new_rows, &found));
    std::vector<int32_t> stored_groups;
    for (int64_t i : found) stored_groups.push_back((*groups)[static_cast<size_t>(new_rows[static_cast<size_t>(i)])]);
    LoadStates(*stored, stored_groups);
    return Status::OK();
  }

  // Sets each group of `groups` from its row of `state` (state rows, one per group).
  void LoadStates(const RecordBatch& state, const std::vector<int32_t>& groups) {
    int column = static_cast<int>(plan_.keys.size());
    for (const auto& accumulator : accumulators_) {
      const int width = static_cast<int>(accumulator->StateFields("").size());
      std::span<const ColumnPtr> columns(state.columns().data() + column, static_cast<size_t>(width));
      for (int64_t row = 0; row < state.num_rows(); ++row) {
        accumulator->LoadState(columns, row, groups[static_cast<size_t>(row)]);
      }
      column += width;
    }
  }

  // A global aggregate's one group is there from the start: with a backing, its state is read
  // before the group is first used.
  Status FetchGlobalGroup() {
    if (backing() == nullptr || !plan_.keys.empty() || global_fetched_) return Status::OK();
    std::vector<int64_t> found;
    SLUICE_ASSIGN_OR_RETURN(BatchPtr stored, backing()->Find({}, {0}, &found));
    LoadStates(*stored, std::vector<int32_t>(found.size(), 0));
    global_fetched_ = true;
    return Status::OK();
  }

  // Every group the backing holds and memory does not, read into memory (not as changes): the
  // complete output mode shows every group.
  Status FetchEveryGroup() {
    if (backing() == nullptr) return Status::OK();
    const size_t key_count = plan_.keys.size();
    return backing()->ForEach([&](const RecordBatch& state) -> Status {
      std::vector<ColumnPtr> keys(state.columns().begin(), state.columns().begin() + key_count);
      std::vector<int32_t> held;
      SLUICE_RETURN_IF_ERROR(keys_->Find(keys, state.num_rows(), &held));
      std::vector<int64_t> absent;
      for (size_t row = 0; row < held.size(); ++row) {
        if (held[row] < 0) absent.push_back(static_cast<int64_t>(row));
      }
      if (absent.empty()) return Status::OK();
      BatchPtr rows = Take(std::make_shared<RecordBatch>(state), absent);
      return Load(*rows);
    });
  }

  // The key columns of `groups` appended to `columns`.
  Status KeysOf(const std::vector<int64_t>& groups, std::vector<ColumnPtr>* columns) {
    return keys_->Append(groups, columns);
  }

  // The grouped rows (keys, then aggregate results) of `groups`.
  Result<BatchPtr> Grouped(const std::vector<int64_t>& groups) {
    std::vector<ColumnPtr> columns;
    SLUICE_RETURN_IF_ERROR(KeysOf(groups, &columns));
    for (const auto& accumulator : accumulators_) {
      SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, accumulator->Finish(groups));
      columns.push_back(std::move(column));
    }
    return RecordBatch::Make(plan_.grouped_schema, std::move(columns), static_cast<int64_t>(groups.size()));
  }
};

Result<std::unique_ptr<HashAggregation>> HashAggregation::Make(expr::BoundAggregation plan, expr::SqlOptions options) {
  auto impl = std::make_unique<Impl>(std::move(plan), options);
  SLUICE_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<HashAggregation>(new HashAggregation(std::move(impl)));
}

HashAggregation::HashAggregation(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  impl_->backing_slot_ = &backing_;
}
HashAggregation::~HashAggregation() = default;

const expr::BoundAggregation& HashAggregation::plan() const { return impl_->plan_; }
const TypePtr& HashAggregation::state_schema() const { return impl_->state_schema_; }
Status HashAggregation::Add(const RecordBatch& rows) { return impl_->Add(rows, SystemClock()->NowMicros()); }
Status HashAggregation::Add(const RecordBatch& rows, int64_t now_micros) { return impl_->Add(rows, now_micros); }
void HashAggregation::NewBatch() { impl_->numbered_rows_ = 0; }
Result<BatchPtr> HashAggregation::Output(OutputMode mode) { return impl_->Output(mode, SystemClock()->NowMicros()); }
Result<BatchPtr> HashAggregation::Output(OutputMode mode, int64_t now_micros) {
  return impl_->Output(mode, now_micros);
}
Result<BatchPtr> HashAggregation::State() { return impl_->State(impl_->AllGroups()); }
Result<BatchPtr> HashAggregation::ChangedState() { return impl_->State(impl_->ChangedGroups()); }
Status HashAggregation::Load(const RecordBatch& state) { return impl_->Load(state); }
void HashAggregation::ClearChanges() { impl_->ClearChanges(); }
void HashAggregation::Reset() { impl_->Reset(); }
int HashAggregation::num_key_columns() const { return static_cast<int>(impl_->plan_.keys.size()); }
int64_t HashAggregation::num_groups() const { return impl_->num_groups_; }
int64_t HashAggregation::num_changed() const { return static_cast<int64_t>(impl_->changed_.size()); }
int64_t HashAggregation::memory_bytes() const { return impl_->memory_bytes(); }

}  // namespace sluice::engine
