// The JSON reader. The type is compiled once into a tree of Nodes, each bound to the column
// builder it fills; each row is parsed with simdjson's DOM parser (reused, so its buffers are
// allocated once) and walked down the tree. A struct node first gathers its fields' values into a
// scratch array indexed by field (the last duplicate key wins, order does not matter), then
// appends them in field order. Builders cannot take a row back, so whatever must convert as a
// whole (an array's elements, a map's values, a field that may not be null) is checked with Fits()
// before anything of it is appended. Numbers a double cannot carry exactly reach the walk as marked
// strings (json_exact_numbers.h) when the type holds a decimal, or when the parser refuses an
// integer beyond 64 bits.
#include "sluice/core/json_reader.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <cctype>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "core/jackson_text.h"
#include "core/json_exact_numbers.h"
#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/decimal.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/iso_datetime.h"

namespace sluice {
namespace {

using simdjson::dom::element;

struct Node {
  const DataType* type = nullptr;
  bool nullable = true;
  ColumnBuilder* builder = nullptr;
  std::vector<Node> children;  // struct: one per field; array: the element; map: the value
  BinaryBuilder* map_keys = nullptr;
  // Struct only: field lookup and the per-row scratch of gathered values.
  std::unordered_map<std::string_view, int> field_index;
  std::vector<element> slots;
  std::vector<uint8_t> present;
};

Status Bind(const TypePtr& type, bool nullable, ColumnBuilder* builder, const std::string& path, Node* node) {
  node->type = type.get();
  node->nullable = nullable;
  node->builder = builder;
  switch (type->id()) {
    case TypeId::kStruct: {
      auto* struct_builder = static_cast<StructBuilder*>(builder);
      node->children.resize(type->num_fields());
      for (int i = 0; i < type->num_fields(); ++i) {
        const Field& field = type->field(i);
        SLUICE_RETURN_IF_ERROR(Bind(field.type, field.nullable, struct_builder->field_builder(i), path + "." + field.name,
                                    &node->children[i]));
        node->field_index.emplace(type->field(i).name, i);
      }
      node->slots.resize(type->num_fields());
      node->present.resize(type->num_fields());
      return Status::OK();
    }
    case TypeId::kArray: {
      auto* list = static_cast<ListBuilder*>(builder);
      node->children.resize(1);
      return Bind(type->element_type(), type->contains_null(), list->element_builder(), path + "[]", &node->children[0]);
    }
    case TypeId::kMap: {
      if (type->key_type()->id() != TypeId::kString) {
        return Status::Error(errors::kInvalidArgument, fmt::format("{}: JSON object keys are strings, not {}", path,
                                                                   type->key_type()->ToString()));
      }
      auto* list = static_cast<ListBuilder*>(builder);
      node->map_keys = static_cast<BinaryBuilder*>(list->key_builder());
      node->children.resize(1);
      return Bind(type->value_type(), type->value_contains_null(), list->value_builder(), path + "{}", &node->children[0]);
    }
    default:
      return Status::OK();
  }
}

// The number's text of a marked number (json_exact_numbers.h) in a row whose numbers were
// marked (`marked_row`); nullopt for any other string or value.
std::optional<std::string_view> MarkedText(std::string_view text, bool marked_row) {
  return marked_row ? MarkedNumber(text) : std::nullopt;
}
std::optional<std::string_view> MarkedNumberOf(element value, bool marked_row) {
  std::string_view text;
  if (!marked_row || value.get_string().get(text) != simdjson::SUCCESS) return std::nullopt;
  return MarkedNumber(text);
}

// An integer: a JSON integer, or a marked one.
bool ReadInt64(element value, bool marked_row, int64_t* out) {
  if (value.get_int64().get(*out) == simdjson::SUCCESS) return true;
  std::optional<std::string_view> marked = MarkedNumberOf(value, marked_row);
  if (!marked) return false;
  auto [end, error] = std::from_chars(marked->data(), marked->data() + marked->size(), *out);
  return error == std::errc() && end == marked->data() + marked->size();
}

template <typename T>
bool ReadIntegral(element value, bool marked_row, T* out) {
  int64_t v;
  if (!ReadInt64(value, marked_row, &v)) return false;
  if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) return false;
  *out = static_cast<T>(v);
  return true;
}

// Numbers (marked ones rounded from their text, as the parser rounds the others), and the
// non-numeric spellings Spark's JSON reader accepts by default.
bool ReadDouble(element value, bool marked_row, double* out) {
  if (value.get_double().get(*out) == simdjson::SUCCESS) return true;
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) return false;
  if (std::optional<std::string_view> marked = MarkedText(text, marked_row)) {
    auto [end, error] = std::from_chars(marked->data(), marked->data() + marked->size(), *out);
    return (error == std::errc() || error == std::errc::result_out_of_range) &&
           end == marked->data() + marked->size();
  }
  if (text == "NaN") {
    *out = std::numeric_limits<double>::quiet_NaN();
  } else if (text == "Infinity" || text == "+Infinity" || text == "+INF" || text == "INF") {
    *out = std::numeric_limits<double>::infinity();
  } else if (text == "-Infinity" || text == "-INF") {
    *out = -std::numeric_limits<double>::infinity();
  } else {
    return false;
  }
  return true;
}

// Whether `c` may start (or, when not `first`, continue) a name without quotes: Jackson takes
// Java identifiers; the bytes of multi-byte UTF-8 characters are taken as letters.
bool IsNameByte(char c, bool first) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalpha(u) || c == '_' || c == '$' || u >= 0x80 || (!first && std::isdigit(u));
}

// The zeros a number starting at text[i] (after its minus) holds before its first significant
// digit or its only zero: 2 for 007, 1 for 00.5, 0 for 0.5 and 7.
size_t RedundantZeros(std::string_view text, size_t i) {
  if (i < text.size() && text[i] == '-') ++i;
  size_t zeros = 0;
  while (i + zeros + 1 < text.size() && text[i + zeros] == '0' && std::isdigit(static_cast<unsigned char>(text[i + zeros + 1]))) {
    ++zeros;
  }
  return zeros;
}

// Copies the string whose opening quote is text[i] into `out` as a double-quoted JSON string, with
// what `leniency` allows made JSON; the index after its closing quote. An unterminated string is
// copied without a closing quote, so that it stays malformed.
size_t CopyString(std::string_view text, size_t i, const JsonLeniency& leniency, std::string* out, bool* changed) {
  const char quote = text[i];
  *changed = *changed || quote != '"';
  out->push_back('"');
  for (++i; i < text.size() && text[i] != quote; ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      const char next = text[++i];
      if (std::string_view("\"\\/bfnrtu").find(next) != std::string_view::npos) {
        out->push_back('\\');
        out->push_back(next);
      } else if ((next == '\'' && leniency.allow_single_quotes) || leniency.allow_backslash_escaping_any_character) {
        *changed = true;  // the escaped character alone, as if it stood there unescaped
        if (static_cast<unsigned char>(next) < 0x20) {
          out->append(fmt::format("\\u{:04x}", static_cast<int>(next)));
        } else {
          out->push_back(next);
        }
      } else {
        out->push_back('\\');
        out->push_back(next);
      }
    } else if (c == '"') {  // inside a single-quoted string
      out->append("\\\"");
    } else if (static_cast<unsigned char>(c) < 0x20 && leniency.allow_unquoted_control_chars) {
      *changed = true;
      out->append(fmt::format("\\u{:04x}", static_cast<int>(c)));
    } else {
      out->push_back(c);
    }
  }
  if (i >= text.size()) return i;
  out->push_back('"');
  return i + 1;
}

// The bare non-numeric values of allow_non_numeric_numbers (Spark's parser takes no bare INF).
constexpr std::string_view kNonNumeric[] = {"+Infinity", "-Infinity", "Infinity", "NaN"};

// The bare non-numeric value at text[i], as a whole word; empty when there is none.
std::string_view NonNumericAt(std::string_view text, size_t i) {
  for (std::string_view token : kNonNumeric) {
    const size_t end = i + token.size();
    if (text.substr(i).starts_with(token) &&
        (end == text.size() || !std::isalnum(static_cast<unsigned char>(text[end])))) {
      return token;
    }
  }
  return {};
}

// `text` with what `leniency` allows beyond JSON made JSON (JsonLeniency). nullopt when there was
// nothing to change. The result is checked by parsing it.
std::optional<std::string> StrictJson(std::string_view text, const JsonLeniency& leniency) {
  std::string out;
  out.reserve(text.size() + 8);
  bool changed = false;
  char last = 0;     // the last character outside strings and blanks: where a name or value may start
  std::string open;  // the containers around the position, '{' or '['
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const bool in_object = !open.empty() && open.back() == '{';
    const bool at_name = in_object && (last == '{' || last == ',');
    const bool at_value = last == 0 || last == ':' || last == '[' || (last == ',' && !in_object);
    size_t zeros = 0;
    std::string_view token;
    if (c == '"' || (c == '\'' && leniency.allow_single_quotes)) {
      i = CopyString(text, i, leniency, &out, &changed);
      last = '"';
    } else if (c == '/' && leniency.allow_comments && i + 1 < text.size() && (text[i + 1] == '*' || text[i + 1] == '/')) {
      const bool block = text[i + 1] == '*';
      const size_t end = text.find(block ? "*/" : "\n", i + 2);
      if (block && end == std::string_view::npos) {  // unterminated: left to fail
        out.append(text.substr(i));
        break;
      }
      i = end == std::string_view::npos ? text.size() : end + (block ? 2 : 1);
      out.push_back(' ');
      changed = true;
    } else if (at_name && leniency.allow_unquoted_field_names && IsNameByte(c, true)) {
      size_t end = i + 1;
      while (end < text.size() && IsNameByte(text[end], false)) ++end;
      out.push_back('"');
      out.append(text.substr(i, end - i));
      out.push_back('"');
      i = end;
      last = '"';
      changed = true;
    } else if (at_value && leniency.allow_non_numeric_numbers && !(token = NonNumericAt(text, i)).empty()) {
      out.push_back('"');
      out.append(token);
      out.push_back('"');
      i += token.size();
      last = '"';
      changed = true;
    } else if (at_value && leniency.allow_numeric_leading_zeros && (zeros = RedundantZeros(text, i)) > 0) {
      if (c == '-') out.push_back('-');
      i += zeros + (c == '-' ? 1 : 0);
      last = '0';  // inside the number now
      changed = true;
    } else {
      out.push_back(c);
      if (c == '{' || c == '[') open.push_back(c);
      if ((c == '}' || c == ']') && !open.empty()) open.pop_back();
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') last = c;
      ++i;
    }
  }
  if (!changed) return std::nullopt;
  return out;
}

// A number's text: integers exactly, other numbers in their shortest round-trip form (the text
// written for every number of up to 15 significant digits).
bool NumberText(element value, std::string* out) {
  char buf[64];
  std::to_chars_result r{};
  int64_t i;
  uint64_t u;
  double d;
  if (value.get_int64().get(i) == simdjson::SUCCESS) {
    r = std::to_chars(buf, buf + sizeof(buf), i);
  } else if (value.get_uint64().get(u) == simdjson::SUCCESS) {
    r = std::to_chars(buf, buf + sizeof(buf), u);
  } else if (value.get_double().get(d) == simdjson::SUCCESS) {
    r = std::to_chars(buf, buf + sizeof(buf), d);
  } else {
    return false;
  }
  out->assign(buf, r.ptr);
  return true;
}

bool HoldsDecimal(const DataType& type) {
  if (type.id() == TypeId::kDecimal) return true;
  switch (type.id()) {
    case TypeId::kStruct:
      for (const Field& field : type.fields()) {
        if (HoldsDecimal(*field.type)) return true;
      }
      return false;
    case TypeId::kArray:
      return HoldsDecimal(*type.element_type());
    case TypeId::kMap:
      return HoldsDecimal(*type.value_type());
    default:
      return false;
  }
}

class Reader final : public JsonReader {
 public:
  Reader(TypePtr type, JsonReadOptions options)
      : type_(std::move(type)), options_(std::move(options)), builder_(ColumnBuilder::Make(type_)) {
    if (!options_.parse_date) options_.parse_date = [](std::string_view text, int32_t* days) { return ParseIsoDate(text, days); };
    if (!options_.parse_timestamp) {
      options_.parse_timestamp = [](std::string_view text, int64_t* micros) { return ParseIsoTimestamp(text, micros); };
    }
  }

  Status Init() {
    marks_numbers_ = HoldsDecimal(*type_);
    return Bind(type_, true, builder_.get(), "value", &root_);
  }

  const TypePtr& type() const override { return type_; }

  Result<ColumnPtr> Read(const Column& documents, DecodeStats* stats) override;

 private:
  // Converts a scalar; appends it only when kAppend. False when the value does not convert.
  template <bool kAppend>
  bool ConvertScalar(Node& node, element value);
  // Whether `value` can be appended to `node` as a whole: no failure inside it that would null
  // more than a field of a struct within it.
  bool Fits(Node& node, element value);
  // Appends `value` (null when `present` is false); a value that does not fit becomes null.
  void Append(Node& node, element value, bool present);
  void AppendMismatch(Node& node) {
    node.builder->AppendNull();
    ++mismatched_;
  }
  void Gather(Node& node, simdjson::dom::object object);
  // Whether every field of a gathered struct that may not be null has a value that fits.
  bool RequiredFieldsFit(Node& node);
  // Appends a struct row from its gathered slots; requires RequiredFieldsFit(node).
  void AppendGathered(Node& node);
  // Appends an array of the elements (all of which fit).
  template <typename Items>
  void AppendElements(Node& node, const Items& items);
  // Appends a malformed row of the root.
  void AppendMalformedRoot();

  TypePtr type_;
  JsonReadOptions options_;
  std::unique_ptr<ColumnBuilder> builder_;
  Node root_;
  // Parses `text` into `document`, through padded_.
  simdjson::error_code Parse(std::string_view text, element* document);
  // Parse() with the inexact numbers marked first when marks_numbers_, or when the parser refuses
  // a number (an integer beyond 64 bits); sets row_marked_.
  simdjson::error_code ParseMarked(std::string_view text, element* document);

  simdjson::dom::parser parser_;
  std::vector<uint8_t> padded_;  // one row plus simdjson's padding
  std::string scratch_;
  // Whether the type holds a decimal: every row's inexact numbers are then marked before parsing.
  bool marks_numbers_ = false;
  bool row_marked_ = false;  // whether the row being read was marked
  int64_t mismatched_ = 0;
};

template <bool kAppend>
bool Reader::ConvertScalar(Node& node, element value) {
  switch (node.type->id()) {
    case TypeId::kBoolean: {
      bool v;
      if (value.get_bool().get(v) != simdjson::SUCCESS) return false;
      if constexpr (kAppend) static_cast<BooleanBuilder*>(node.builder)->Append(v ? 1 : 0);
      return true;
    }
#define SLUICE_INTEGRAL(ID, T, BUILDER)                                      \
  case TypeId::ID: {                                                         \
    T v;                                                                     \
    if (!ReadIntegral(value, row_marked_, &v)) return false;                              \
    if constexpr (kAppend) static_cast<BUILDER*>(node.builder)->Append(v);   \
    return true;                                                             \
  }
    SLUICE_INTEGRAL(kByte, int8_t, Int8Builder)
    SLUICE_INTEGRAL(kShort, int16_t, Int16Builder)
    SLUICE_INTEGRAL(kInteger, int32_t, Int32Builder)
    SLUICE_INTEGRAL(kLong, int64_t, Int64Builder)
#undef SLUICE_INTEGRAL
    case TypeId::kFloat:
    case TypeId::kDouble: {
      double v;
      if (!ReadDouble(value, row_marked_, &v)) return false;
      if constexpr (kAppend) {
        if (node.type->id() == TypeId::kFloat) {
          static_cast<FloatBuilder*>(node.builder)->Append(static_cast<float>(v));
        } else {
          static_cast<DoubleBuilder*>(node.builder)->Append(v);
        }
      }
      return true;
    }
    case TypeId::kDecimal: {
      std::string_view text;
      if (value.get_string().get(text) != simdjson::SUCCESS) {
        if (!NumberText(value, &scratch_)) return false;
        text = scratch_;
      } else if (std::optional<std::string_view> marked = MarkedText(text, row_marked_)) {
        text = *marked;
      }
      std::optional<int128_t> v = ParseDecimal(text, node.type->precision(), node.type->scale());
      if (!v) return false;
      if constexpr (kAppend) static_cast<DecimalBuilder*>(node.builder)->Append(*v);
      return true;
    }
    case TypeId::kString: {
      if constexpr (kAppend) {
        auto* builder = static_cast<BinaryBuilder*>(node.builder);
        std::string_view text;
        if (value.get_string().get(text) == simdjson::SUCCESS && !MarkedText(text, row_marked_)) {
          builder->Append(text);
        } else {
          scratch_.clear();
          AppendJacksonText(value, row_marked_, &scratch_);
          builder->Append(scratch_);
        }
      }
      return true;
    }
    case TypeId::kBinary: {
      std::string_view text;
      if (value.get_string().get(text) != simdjson::SUCCESS) return false;
      if constexpr (kAppend) return AppendBase64Decoded(static_cast<BinaryBuilder*>(node.builder), text);
      return IsBase64(text);
    }
    case TypeId::kDate: {
      std::string_view text;
      int32_t days;
      if (value.get_string().get(text) != simdjson::SUCCESS || !options_.parse_date(text, &days)) return false;
      if constexpr (kAppend) static_cast<Int32Builder*>(node.builder)->Append(days);
      return true;
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: {
      std::string_view text;
      int64_t micros;
      int64_t seconds;
      if (MarkedNumberOf(value, row_marked_)) {
        if (node.type->id() != TypeId::kTimestamp || !ReadInt64(value, row_marked_, &seconds) ||
            __builtin_mul_overflow(seconds, int64_t{1'000'000}, &micros)) {
          return false;
        }
      } else if (value.get_string().get(text) == simdjson::SUCCESS) {
        bool has_zone = false;
        bool ok = node.type->id() == TypeId::kTimestamp ? options_.parse_timestamp(text, &micros)
                                                         : ParseIsoTimestamp(text, &micros, &has_zone) && !has_zone;
        if (!ok) return false;
      } else if (node.type->id() == TypeId::kTimestamp && value.get_int64().get(seconds) == simdjson::SUCCESS) {
        if (__builtin_mul_overflow(seconds, int64_t{1'000'000}, &micros)) return false;
      } else {
        return false;
      }
      if constexpr (kAppend) static_cast<Int64Builder*>(node.builder)->Append(micros);
      return true;
    }
    default:
      return false;
  }
}

void Reader::Gather(Node& node, simdjson::dom::object object) {
  std::fill(node.present.begin(), node.present.end(), 0);
  for (auto [key, value] : object) {
    auto it = node.field_index.find(key);
    if (it == node.field_index.end()) continue;
    node.slots[it->second] = value;
    node.present[it->second] = 1;
  }
}

bool Reader::RequiredFieldsFit(Node& node) {
  for (size_t i = 0; i < node.children.size(); ++i) {
    Node& child = node.children[i];
    if (!child.nullable && (!node.present[i] || !Fits(child, node.slots[i]))) return false;
  }
  return true;
}

void Reader::AppendGathered(Node& node) {
  for (size_t i = 0; i < node.children.size(); ++i) {
    // Fits() may have re-gathered a child struct's slots, never this node's own.
    Append(node.children[i], node.slots[i], node.present[i] != 0);
  }
  static_cast<StructBuilder*>(node.builder)->Append();
}

bool Reader::Fits(Node& node, element value) {
  if (value.is_null()) return node.nullable;
  switch (node.type->id()) {
    case TypeId::kStruct: {
      simdjson::dom::object object;
      if (value.get_object().get(object) != simdjson::SUCCESS) return false;
      Gather(node, object);
      return RequiredFieldsFit(node);
    }
    case TypeId::kArray: {
      simdjson::dom::array array;
      if (value.get_array().get(array) != simdjson::SUCCESS) return false;
      for (element item : array) {
        if (!Fits(node.children[0], item)) return false;
      }
      return true;
    }
    case TypeId::kMap: {
      simdjson::dom::object object;
      if (value.get_object().get(object) != simdjson::SUCCESS) return false;
      for (auto [key, item] : object) {
        if (!Fits(node.children[0], item)) return false;
      }
      return true;
    }
    default:
      return ConvertScalar<false>(node, value);
  }
}

template <typename Items>
void Reader::AppendElements(Node& node, const Items& items) {
  for (element item : items) Append(node.children[0], item, true);
  static_cast<ListBuilder*>(node.builder)->Append();
}

void Reader::Append(Node& node, element value, bool present) {
  if (!present || value.is_null()) {
    node.builder->AppendNull();
    return;
  }
  switch (node.type->id()) {
    case TypeId::kStruct: {
      simdjson::dom::object object;
      if (value.get_object().get(object) != simdjson::SUCCESS) return AppendMismatch(node);
      Gather(node, object);
      if (!RequiredFieldsFit(node)) return AppendMismatch(node);
      AppendGathered(node);
      return;
    }
    case TypeId::kArray: {
      simdjson::dom::array array;
      if (value.get_array().get(array) != simdjson::SUCCESS || !Fits(node, value)) return AppendMismatch(node);
      AppendElements(node, array);
      return;
    }
    case TypeId::kMap: {
      simdjson::dom::object object;
      if (value.get_object().get(object) != simdjson::SUCCESS || !Fits(node, value)) return AppendMismatch(node);
      for (auto [key, item] : object) {
        node.map_keys->Append(key);
        Append(node.children[0], item, true);
      }
      static_cast<ListBuilder*>(node.builder)->Append();
      return;
    }
    default:
      if (!ConvertScalar<true>(node, value)) AppendMismatch(node);
      return;
  }
}

void Reader::AppendMalformedRoot() {
  if (options_.malformed_as_null_fields && root_.type->id() == TypeId::kStruct) {
    std::fill(root_.present.begin(), root_.present.end(), 0);
    AppendGathered(root_);
  } else {
    root_.builder->AppendNull();
  }
}

simdjson::error_code Reader::Parse(std::string_view text, element* document) {
  if (padded_.size() < text.size() + simdjson::SIMDJSON_PADDING) padded_.resize(text.size() + simdjson::SIMDJSON_PADDING);
  if (!text.empty()) std::memcpy(padded_.data(), text.data(), text.size());  // an empty row may have no data pointer
  return parser_.parse(padded_.data(), text.size(), false).get(*document);
}

simdjson::error_code Reader::ParseMarked(std::string_view text, element* document) {
  std::optional<std::string> marked = marks_numbers_ ? MarkInexactNumbers(text) : std::nullopt;
  simdjson::error_code parsed = Parse(marked ? *marked : text, document);
  if (parsed == simdjson::NUMBER_ERROR && !marked && (marked = MarkInexactNumbers(text))) {
    parsed = Parse(*marked, document);
  }
  row_marked_ = marked.has_value();
  return parsed;
}

Result<ColumnPtr> Reader::Read(const Column& documents, DecodeStats* stats) {
  if (!documents.type->is_binary_like()) {
    return Status::Error(errors::kInvalidArgument,
                         fmt::format("JSON is read from a binary or string column, not {}", documents.type->ToString()));
  }
  DecodeStats local;
  DecodeStats& out = stats != nullptr ? *stats : local;
  mismatched_ = 0;
  builder_->Reserve(documents.length);
  for (int64_t row = 0; row < documents.length; ++row) {
    if (documents.IsNull(row)) {
      root_.builder->AppendNull();
      continue;
    }
    const std::string_view bytes = documents.View(row);
    element document;
    simdjson::error_code parsed = ParseMarked(bytes, &document);
    if (parsed != simdjson::SUCCESS && options_.leniency.any()) {
      if (std::optional<std::string> strict = StrictJson(bytes, options_.leniency)) {
        parsed = ParseMarked(*strict, &document);
      }
    }
    bool fits = parsed == simdjson::SUCCESS;
    if (fits && root_.type->id() == TypeId::kArray && root_.children[0].type->id() == TypeId::kStruct &&
        document.is_object()) {
      // An object where an array of structs is expected reads as an array of that one object.
      Node& element_node = root_.children[0];
      fits = Fits(element_node, document);
      if (fits) {
        AppendElements(root_, std::array<element, 1>{document});
        continue;
      }
    }
    fits = fits && !document.is_null() && Fits(root_, document);
    if (!fits) {
      AppendMalformedRoot();
      out.RecordMalformed(row);
      continue;
    }
    if (root_.type->id() == TypeId::kStruct) {
      AppendGathered(root_);  // Fits() gathered it
    } else {
      Append(root_, document, true);
    }
  }
  out.rows += documents.length;
  out.mismatched_fields += mismatched_;
  return builder_->Finish();
}

}  // namespace

JsonReader::~JsonReader() = default;

Result<std::unique_ptr<JsonReader>> JsonReader::Make(const TypePtr& type, JsonReadOptions options) {
  if (type == nullptr) return Status::Error(errors::kInvalidArgument, "a JSON reader needs a type");
  auto reader = std::make_unique<Reader>(type, std::move(options));
  SLUICE_RETURN_IF_ERROR(reader->Init());
  return std::unique_ptr<JsonReader>(std::move(reader));
}

}  // namespace sluice
