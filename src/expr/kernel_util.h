// Building blocks of the evaluation kernels. Internal to expr.
//
// Kernels read their inputs through readers that hide whether an input is a full column or a
// one-row constant: index `row & mask` with mask 0 for a constant and ~0 for a column, so one
// loop body serves both without a branch per row. Validity is kept as bytes (1 valid, 0 null).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "sluice/core/column.h"
#include "expr/bound.h"

namespace sluice::expr {

template <typename T>
struct FixedReader {
  const T* values;
  int64_t mask;
  T operator[](int64_t row) const { return values[row & mask]; }
};

template <typename T>
FixedReader<T> ReadFixed(const Datum& d) {
  return FixedReader<T>{d.column->values<T>() + d.offset, d.scalar ? 0 : ~int64_t{0}};
}

struct StringReader {
  const char* data;
  const int64_t* offsets;
  int64_t mask;
  std::string_view operator[](int64_t row) const {
    int64_t r = row & mask;
    return std::string_view(data + offsets[r], static_cast<size_t>(offsets[r + 1] - offsets[r]));
  }
};

inline StringReader ReadString(const Datum& d) {
  return StringReader{reinterpret_cast<const char*>(d.column->data.data()), d.column->offsets.data() + d.offset,
                      d.scalar ? 0 : ~int64_t{0}};
}

// Validity of a datum: valid(row) without a branch on the datum's shape.
struct ValidityReader {
  const uint8_t* valid;  // null when every row is valid
  int64_t mask;
  bool operator()(int64_t row) const { return valid == nullptr || valid[row & mask] != 0; }
};

inline ValidityReader ReadValidity(const Datum& d) {
  return ValidityReader{d.column->validity.empty() ? nullptr : d.column->validity.data() + d.offset,
                        d.scalar ? 0 : ~int64_t{0}};
}

inline bool IsAllNull(const Datum& d) { return d.scalar && d.column->IsNull(0); }

// Pointer to the first value row of a non-scalar datum.
template <typename T>
const T* ValuesOf(const Datum& d) {
  return d.column->values<T>() + d.offset;
}

// A new mutable column of `rows` rows of a fixed-width type, values zeroed, no validity.
std::shared_ptr<Column> NewFixedColumn(const TypePtr& type, int64_t rows);

// The AND of the inputs' validity as bytes, or an empty vector when every row is valid.
std::vector<uint8_t> CombinedValidity(const std::vector<Datum>& inputs, int64_t rows);

// Row i of the result is row indices[i] of `source` (of type `type`), or null where it is -1.
ColumnPtr GatherChild(const ColumnPtr& source, const TypePtr& type, std::vector<int64_t> indices);

// An array column of offsets.size() - 1 rows: row r holds `elements` rows [offsets[r],
// offsets[r + 1]); `validity` as SetValidity takes it.
Datum ArrayOf(const TypePtr& type, std::vector<int64_t> offsets, ColumnPtr elements, std::vector<uint8_t> validity);

// Builds an array (or map) column row by row from rows of source columns (-1 for a null element).
class GatherListBuilder {
 public:
  void Add(int64_t source_row) { indices_.push_back(source_row); }
  void EndRow(bool valid) {
    offsets_.push_back(static_cast<int64_t>(indices_.size()));
    validity_.push_back(valid ? 1 : 0);
  }
  // An array of `type` whose elements are rows of `source`.
  Datum Finish(const TypePtr& type, const ColumnPtr& source) { return Make(type, {source}); }
  // A map of `type` whose entries are rows of `keys` and `values` (no null key added).
  Datum FinishMap(const TypePtr& type, const ColumnPtr& keys, const ColumnPtr& values) { return Make(type, {keys, values}); }

 private:
  Datum Make(const TypePtr& type, const std::vector<ColumnPtr>& sources);

  std::vector<int64_t> offsets_{0};
  std::vector<int64_t> indices_;
  std::vector<uint8_t> validity_;
};

// Installs `validity` on `column` (dropping it when nothing is null) and sets null_count.
void SetValidity(Column* column, std::vector<uint8_t> validity);

// A fixed-width result computed by f(row, &value) -> valid, on rows where all inputs are valid.
template <typename T, typename F>
Result<Datum> FixedKernel(const BoundNode& node, const std::vector<Datum>& args, int64_t rows, F f) {
  auto out = NewFixedColumn(node.type, rows);
  T* values = reinterpret_cast<T*>(out->data.data());
  std::vector<uint8_t> validity = CombinedValidity(args, rows);
  for (int64_t i = 0; i < rows; ++i) {
    if (!validity.empty() && validity[static_cast<size_t>(i)] == 0) continue;
    SLUICE_ASSIGN_OR_RETURN(bool valid, f(i, &values[i]));
    if (!valid) {
      if (validity.empty()) validity.assign(static_cast<size_t>(rows), 1);
      validity[static_cast<size_t>(i)] = 0;
    }
  }
  SetValidity(out.get(), std::move(validity));
  return Datum{out, false};
}

// Appends rows of string/binary output without a heap allocation per row.
class StringWriter {
 public:
  StringWriter(TypePtr type, int64_t rows) : column_(std::make_shared<Column>()) {
    column_->type = std::move(type);
    column_->offsets.reserve(static_cast<size_t>(rows) + 1);
    column_->offsets.push_back(0);
  }
  void Append(std::string_view value) {
    column_->data.insert(column_->data.end(), value.begin(), value.end());
    Close(true);
  }
  // Appends bytes to the current (unfinished) row.
  void AppendPart(std::string_view part) { column_->data.insert(column_->data.end(), part.begin(), part.end()); }
  void FinishRow() { Close(true); }
  void AppendNull() { Close(false); }
  std::shared_ptr<Column> Finish() {
    column_->length = static_cast<int64_t>(column_->offsets.size()) - 1;
    if (has_null_) SetValidity(column_.get(), std::move(validity_));
    return std::move(column_);
  }

 private:
  void Close(bool valid) {
    column_->offsets.push_back(static_cast<int64_t>(column_->data.size()));
    if (!valid && !has_null_) {
      has_null_ = true;
      validity_.assign(column_->offsets.size() - 2, 1);
    }
    if (has_null_) validity_.push_back(valid ? 1 : 0);
  }
  std::shared_ptr<Column> column_;
  std::vector<uint8_t> validity_;
  bool has_null_ = false;
};

// Calls f(T{}) with T the physical C++ type of a fixed-width type id.
template <typename F>
auto DispatchFixed(TypeId id, F&& f) {
  switch (id) {
    case TypeId::kBoolean: return f(uint8_t{});
    case TypeId::kByte: return f(int8_t{});
    case TypeId::kShort: return f(int16_t{});
    case TypeId::kInteger:
    case TypeId::kDate: return f(int32_t{});
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return f(int64_t{});
    case TypeId::kFloat: return f(float{});
    case TypeId::kDouble: return f(double{});
    default: return f(int128_t{});  // decimal
  }
}

// repeat, lpad, rpad and format_string make values of the size they are asked for: beyond this many
// bytes a value is refused (INVALID_PARAMETER_VALUE) before anything is allocated.
constexpr int64_t kMaxMadeValueBytes = int64_t{64} << 20;

// The UTF-8 bytes of `code_point` (at most U+10FFFF) appended to `out`.
void AppendUtf8(uint32_t code_point, std::string* out);
// `text` upper- or lower-cased into `out` (replacing it) by Unicode's full case mappings of the
// root locale, as upper() and lower() do in Spark (ICU's): ß → SS, ﬁ → FI, ᾳ → ΑΙ, İ → i̇, and Σ
// → ς at the end of a word. Bytes that are not well-formed UTF-8 are copied unchanged.
void ChangeCase(std::string_view text, bool upper, std::string* out);
// `word` with its first character title-cased (ß → Ss, ǆ → ǅ) and the rest lower-cased, the same
// way: a word of initcap(). Into `out`, replacing it.
void TitleCaseWord(std::string_view word, std::string* out);

// Java's Double.toString of `value` ("1.5", "100.0", "1.0E10", "NaN"), as Spark prints doubles.
std::string JavaDoubleString(double value);
// Java's Float.toString of `value`, as Spark prints floats.
std::string JavaFloatString(float value);

}  // namespace sluice::expr
