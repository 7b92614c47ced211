// The JSON functions: get_json_object, from_json, to_json, schema_of_json, json_array_length,
// json_object_keys. from_json reads with the JSON reader the streams use (core/json_reader.h);
// to_json writes as Spark's JSON generator does (Jackson with Spark's defaults).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>
#include <simdjson.h>

#include "sluice/core/ascii.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/json_reader.h"
#include "sluice/core/json_text.h"
#include "expr/ast.h"
#include "expr/datetime.h"
#include "expr/json_functions.h"
#include "expr/json_path.h"
#include "expr/kernel_util.h"
#include "expr/kernels.h"

namespace sluice::expr {
namespace {

// `value` written again as Spark's get_json_object writes a JSON value it returns (Jackson's
// copyCurrentStructure): no whitespace, integers as written, other numbers as the double they
// parse to in Java's Double.toString form ("1.50" is 1.5, "1e10" is 1.0E10). False when the text
// is not valid JSON.
bool AppendCompactJson(simdjson::ondemand::value value, std::string* out) {
  simdjson::ondemand::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) return false;
  switch (type) {
    case simdjson::ondemand::json_type::object: {
      simdjson::ondemand::object object;
      if (value.get_object().get(object) != simdjson::SUCCESS) return false;
      *out += '{';
      bool first = true;
      for (auto field : object) {
        std::string_view key;
        simdjson::ondemand::value member;
        if (field.unescaped_key().get(key) != simdjson::SUCCESS || field.value().get(member) != simdjson::SUCCESS) {
          return false;
        }
        if (!first) *out += ',';
        first = false;
        AppendJsonString(out, key);
        *out += ':';
        if (!AppendCompactJson(member, out)) return false;
      }
      *out += '}';
      return true;
    }
    case simdjson::ondemand::json_type::array: {
      simdjson::ondemand::array array;
      if (value.get_array().get(array) != simdjson::SUCCESS) return false;
      *out += '[';
      bool first = true;
      for (auto element : array) {
        simdjson::ondemand::value item;
        if (element.get(item) != simdjson::SUCCESS) return false;
        if (!first) *out += ',';
        first = false;
        if (!AppendCompactJson(item, out)) return false;
      }
      *out += ']';
      return true;
    }
    case simdjson::ondemand::json_type::string: {
      std::string_view text;
      if (value.get_string().get(text) != simdjson::SUCCESS) return false;
      AppendJsonString(out, text);
      return true;
    }
    case simdjson::ondemand::json_type::number: {
      simdjson::ondemand::number_type kind;
      if (value.get_number_type().get(kind) != simdjson::SUCCESS) return false;
      if (kind == simdjson::ondemand::number_type::floating_point_number) {
        double number = 0;
        if (value.get_double().get(number) != simdjson::SUCCESS) return false;
        *out += JavaDoubleString(number);
        return true;
      }
      std::string_view raw = value.raw_json_token();
      while (!raw.empty() && std::isspace(static_cast<unsigned char>(raw.back()))) raw.remove_suffix(1);
      out->append(raw);
      return true;
    }
    case simdjson::ondemand::json_type::boolean: {
      bool flag = false;
      if (value.get_bool().get(flag) != simdjson::SUCCESS) return false;
      *out += flag ? "true" : "false";
      return true;
    }
    default: {
      bool is_null = false;
      if (value.is_null().get(is_null) != simdjson::SUCCESS || !is_null) return false;
      *out += "null";
      return true;
    }
  }
}

// Each row's JSON document, read on demand: only what `f` asks of it is parsed, and what follows
// the part it reads is not looked at (as Spark's streaming parser does not). `f(row, doc)` gets a
// null doc for a NULL row or text simdjson cannot start on.
template <typename F>
void ForEachDocument(const Datum& json, int64_t rows, F f) {
  StringReader text = ReadString(json);
  ValidityReader valid = ReadValidity(json);
  simdjson::ondemand::parser parser;
  std::string buffer;
  for (int64_t r = 0; r < rows; ++r) {
    if (!valid(r)) {
      f(r, nullptr);
      continue;
    }
    buffer.assign(text[r]);
    const size_t length = buffer.size();
    buffer.resize(length + simdjson::SIMDJSON_PADDING);
    simdjson::ondemand::document doc;
    if (parser.iterate(buffer.data(), length, buffer.size()).get(doc) != simdjson::SUCCESS) {
      f(r, nullptr);
      continue;
    }
    f(r, &doc);
  }
}

// Extracts one path from one JSON document; false when the path is missing, the value is null or
// the text is not JSON.
bool ExtractJson(simdjson::ondemand::document& doc, const std::vector<PathStep>& steps, std::string* out) {
  simdjson::ondemand::value current;
  if (doc.get_value().get(current) != simdjson::SUCCESS) return false;
  for (const PathStep& step : steps) {
    simdjson::ondemand::value next;
    if (step.index < 0) {
      simdjson::ondemand::object object;
      if (current.get_object().get(object) != simdjson::SUCCESS) return false;
      if (object.find_field_unordered(step.field).get(next) != simdjson::SUCCESS) return false;
    } else {
      simdjson::ondemand::array array;
      if (current.get_array().get(array) != simdjson::SUCCESS) return false;
      int64_t n = 0;
      bool found = false;
      for (auto element : array) {
        if (n++ == step.index) {
          if (element.get(next) != simdjson::SUCCESS) return false;
          found = true;
          break;
        }
      }
      if (!found) return false;
    }
    current = next;
  }
  simdjson::ondemand::json_type type;
  if (current.type().get(type) != simdjson::SUCCESS || type == simdjson::ondemand::json_type::null) return false;
  if (type == simdjson::ondemand::json_type::string) {
    std::string_view s;
    if (current.get_string().get(s) != simdjson::SUCCESS) return false;
    out->assign(s);
    return true;
  }
  out->clear();
  return AppendCompactJson(current, out);
}

// A path with a wildcard over the whole document (json_path.h); false when nothing matches or
// the text is not JSON.
bool ExtractWildcardJson(simdjson::dom::parser& parser, std::string_view text, const std::vector<PathStep>& steps,
                         std::string* out) {
  simdjson::dom::element document;
  if (parser.parse(text.data(), text.size()).get(document) != simdjson::SUCCESS) return false;
  return EvaluateWildcardPath(document, steps, out);
}

Result<Datum> GetJsonObject(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  StringReader json = ReadString(args[0]);
  StringReader path = ReadString(args[1]);
  ValidityReader vp = ReadValidity(args[1]);
  StringWriter writer(node.type, rows);
  std::string value, last_path;
  std::optional<std::vector<PathStep>> steps;
  bool parsed_once = false;
  bool wildcard = false;
  simdjson::dom::parser whole_documents;
  ForEachDocument(args[0], rows, [&](int64_t i, simdjson::ondemand::document* doc) {
    if (doc == nullptr || !vp(i)) {
      writer.AppendNull();
      return;
    }
    if (!parsed_once || path[i] != last_path) {
      last_path.assign(path[i]);
      steps = ParseJsonPath(last_path);
      wildcard = steps && HasWildcard(*steps);
      parsed_once = true;
    }
    if (steps && (wildcard ? ExtractWildcardJson(whole_documents, json[i], *steps, &value)
                           : ExtractJson(*doc, *steps, &value))) {
      writer.Append(value);
    } else {
      writer.AppendNull();
    }
  });
  return Datum{writer.Finish(), false};
}

// --- from_json ---

// Whether a document is empty or blank: from_json gives NULL for it, not a struct of nulls.
bool IsBlank(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

JsonReadOptions ReaderOptions(const JsonOptions& options) {
  JsonReadOptions read;
  read.malformed_as_null_fields = true;
  read.leniency = options.leniency;
  if (options.date_format.empty()) {
    read.parse_date = [](std::string_view text, int32_t* days) {
      std::optional<int32_t> parsed = ParseDate(text);
      if (parsed) *days = *parsed;
      return parsed.has_value();
    };
  } else {
    read.parse_date = [pattern = options.date_format](std::string_view text, int32_t* days) {
      std::optional<int64_t> parsed = ParseWithPattern(text, pattern);
      if (parsed) *days = static_cast<int32_t>(FloorDiv(*parsed, kMicrosPerDay));
      return parsed.has_value();
    };
  }
  read.parse_timestamp = [pattern = options.timestamp_format](std::string_view text, int64_t* micros) {
    std::optional<int64_t> parsed = pattern.empty() ? ParseTimestamp(text) : ParseWithPattern(text, pattern);
    if (parsed) *micros = *parsed;
    return parsed.has_value();
  };
  return read;
}

Result<Datum> FromJson(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  const auto& options = static_cast<const JsonOptions&>(*node.state);
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<JsonReader> reader, JsonReader::Make(node.type, ReaderOptions(options)));
  const ColumnPtr documents = Materialize(args[0], rows);
  DecodeStats stats;
  SLUICE_ASSIGN_OR_RETURN(ColumnPtr read, reader->Read(*documents, &stats));
  auto out = std::make_shared<Column>(*read);
  std::vector<uint8_t> valid(static_cast<size_t>(rows), 1);
  bool blank = false;
  for (int64_t r = 0; r < rows; ++r) {
    const bool is_blank = documents->IsValid(r) && IsBlank(documents->View(r));
    valid[static_cast<size_t>(r)] = out->IsValid(r) && !is_blank;
    blank = blank || is_blank;
  }
  if (blank) SetValidity(out.get(), std::move(valid));
  if (options.failfast && (stats.malformed > 0 || stats.mismatched_fields > 0)) {
    // The first row that did not read whole, for the message.
    for (int64_t r = 0; r < rows; ++r) {
      if (documents->IsNull(r) || IsBlank(documents->View(r))) continue;
      DecodeStats one;
      ColumnPtr single = Slice(documents, r, 1);
      SLUICE_RETURN_IF_ERROR(reader->Read(*single, &one).status());
      if (one.malformed == 0 && one.mismatched_fields == 0) continue;
      std::string_view text = documents->View(r);
      return Status::Error(errors::kMalformedRecordInParsing,
                           fmt::format("from_json in FAILFAST mode met a record that does not read as {}: {}{}",
                                       node.type->ToString(), text.substr(0, 100), text.size() > 100 ? "..." : ""));
    }
  }
  return Datum{out, false};
}

// --- to_json ---

// Java's BigDecimal.toString: plain, unless the exponent is below -6 ("1.0E-7").
void AppendJavaDecimal(int128_t unscaled, int scale, std::string* out) {
  std::string digits = DecimalText(unscaled < 0 ? -unscaled : unscaled, 0);
  const int adjusted = -scale + static_cast<int>(digits.size()) - 1;
  if (adjusted >= -6) {
    AppendDecimalText(unscaled, scale, out);
    return;
  }
  if (unscaled < 0) *out += '-';
  *out += digits[0];
  if (digits.size() > 1) *out += "." + digits.substr(1);
  *out += fmt::format("E{}", adjusted);
}

class JsonWriter {
 public:
  explicit JsonWriter(const JsonOptions& options) : options_(options) {}

  void Write(const Column& c, int64_t row, std::string* out) const {
    if (c.IsNull(row)) {
      *out += "null";
      return;
    }
    const DataType& type = *c.type;
    switch (type.id()) {
      case TypeId::kBoolean: *out += c.Value<uint8_t>(row) ? "true" : "false"; return;
      case TypeId::kByte: *out += std::to_string(c.Value<int8_t>(row)); return;
      case TypeId::kShort: *out += std::to_string(c.Value<int16_t>(row)); return;
      case TypeId::kInteger: *out += std::to_string(c.Value<int32_t>(row)); return;
      case TypeId::kLong: *out += std::to_string(c.Value<int64_t>(row)); return;
      case TypeId::kFloat: WriteFloating(c.Value<float>(row), JavaFloatString(c.Value<float>(row)), out); return;
      case TypeId::kDouble: WriteFloating(c.Value<double>(row), JavaDoubleString(c.Value<double>(row)), out); return;
      case TypeId::kDecimal: AppendJavaDecimal(c.Value<int128_t>(row), type.scale(), out); return;
      case TypeId::kString: AppendJsonString(out, c.View(row)); return;
      case TypeId::kBinary: {
        std::string text;
        AppendBase64(c.View(row), &text);
        AppendJsonString(out, text);
        return;
      }
      case TypeId::kDate: {
        const int64_t days = c.Value<int32_t>(row);
        AppendJsonString(out, options_.date_format.empty()
                                  ? FormatDate(static_cast<int32_t>(days))
                                  : FormatWithPattern(days * kMicrosPerDay, options_.date_format).value_or(""));
        return;
      }
      case TypeId::kTimestamp:
      case TypeId::kTimestampNtz: {
        const int64_t micros = c.Value<int64_t>(row);
        std::string text;
        if (type.id() == TypeId::kTimestamp && !options_.timestamp_format.empty()) {
          text = FormatWithPattern(micros, options_.timestamp_format).value_or("");
        } else {
          text = FormatWithPattern(micros, "yyyy-MM-dd'T'HH:mm:ss.SSS").value_or("");
          if (type.id() == TypeId::kTimestamp) text += 'Z';  // the session time zone is UTC
        }
        AppendJsonString(out, text);
        return;
      }
      case TypeId::kStruct: {
        *out += '{';
        bool first = true;
        for (int f = 0; f < type.num_fields(); ++f) {
          const Column& field = *c.children[static_cast<size_t>(f)];
          if (options_.ignore_null_fields && field.IsNull(row)) continue;
          if (!first) *out += ',';
          first = false;
          AppendJsonString(out, type.field(f).name);
          *out += ':';
          Write(field, row, out);
        }
        *out += '}';
        return;
      }
      case TypeId::kArray: {
        *out += '[';
        for (int64_t i = c.offsets[static_cast<size_t>(row)]; i < c.offsets[static_cast<size_t>(row) + 1]; ++i) {
          if (i > c.offsets[static_cast<size_t>(row)]) *out += ',';
          Write(*c.children[0], i, out);
        }
        *out += ']';
        return;
      }
      case TypeId::kMap: {
        *out += '{';
        const Column& keys = *c.children[0];
        for (int64_t i = c.offsets[static_cast<size_t>(row)]; i < c.offsets[static_cast<size_t>(row) + 1]; ++i) {
          if (i > c.offsets[static_cast<size_t>(row)]) *out += ',';
          AppendJsonString(out, keys.type->id() == TypeId::kString ? std::string(keys.View(i)) : FormatValue(keys, i));
          *out += ':';
          Write(*c.children[1], i, out);
        }
        *out += '}';
        return;
      }
    }
  }

 private:
  // Finite numbers bare, NaN and the infinities as strings, as Jackson writes them for Spark.
  template <typename F>
  static void WriteFloating(F value, const std::string& text, std::string* out) {
    if (std::isfinite(value)) {
      *out += text;
    } else {
      AppendJsonString(out, text);
    }
  }

  const JsonOptions& options_;
};

Result<Datum> ToJson(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  const JsonWriter writer(static_cast<const JsonOptions&>(*node.state));
  const ColumnPtr values = Materialize(args[0], rows);
  StringWriter out(node.type, rows);
  std::string text;
  for (int64_t r = 0; r < rows; ++r) {
    if (values->IsNull(r)) {
      out.AppendNull();
      continue;
    }
    text.clear();
    writer.Write(*values, r, &text);
    out.Append(text);
  }
  return Datum{out.Finish(), false};
}

// --- json_array_length, json_object_keys ---

Result<Datum> JsonArrayLength(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  auto out = NewFixedColumn(node.type, rows);
  int32_t* values = reinterpret_cast<int32_t*>(out->data.data());
  std::vector<uint8_t> valid(static_cast<size_t>(rows), 0);
  ForEachDocument(args[0], rows, [&](int64_t r, simdjson::ondemand::document* doc) {
    simdjson::ondemand::array array;
    if (doc == nullptr || doc->get_array().get(array) != simdjson::SUCCESS) return;
    size_t count = 0;
    if (array.count_elements().get(count) != simdjson::SUCCESS) return;  // a truncated array has no length
    values[r] = static_cast<int32_t>(count);
    valid[static_cast<size_t>(r)] = 1;
  });
  SetValidity(out.get(), std::move(valid));
  return Datum{out, false};
}

Result<Datum> JsonObjectKeys(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  auto out = std::make_shared<Column>();
  out->type = node.type;
  out->length = rows;
  out->offsets.push_back(0);
  std::vector<uint8_t> valid(static_cast<size_t>(rows), 0);
  StringWriter keys(DataType::String(), 0);
  int64_t count = 0;
  ForEachDocument(args[0], rows, [&](int64_t r, simdjson::ondemand::document* doc) {
    simdjson::ondemand::object object;
    std::vector<std::string> found;
    bool ok = doc != nullptr && doc->get_object().get(object) == simdjson::SUCCESS;
    if (ok) {
      for (auto field : object) {
        std::string_view key;
        if (field.error() != simdjson::SUCCESS || field.unescaped_key().get(key) != simdjson::SUCCESS) {
          ok = false;
          break;
        }
        found.emplace_back(key);
      }
    }
    if (ok) {
      for (const std::string& key : found) keys.Append(key);
      count += static_cast<int64_t>(found.size());
      valid[static_cast<size_t>(r)] = 1;
    }
    out->offsets.push_back(count);
  });
  out->children.push_back(keys.Finish());
  SetValidity(out.get(), std::move(valid));
  return Datum{out, false};
}

// --- schema_of_json ---

// A type as Spark's JSON inference sees it, before NullType becomes STRING.
struct Inferred {
  enum Kind { kNull, kBoolean, kLong, kDecimal, kDouble, kString, kArray, kStruct };
  Inferred(Kind k = kNull) : kind(k) {}  // NOLINT: a kind alone is a type
  Kind kind;
  int precision = 0;                       // kDecimal (scale 0)
  std::vector<Inferred> element;           // kArray: one
  std::map<std::string, Inferred> fields;  // kStruct, in name order
};

Inferred Merge(const Inferred& a, const Inferred& b) {
  if (a.kind == Inferred::kNull) return b;
  if (b.kind == Inferred::kNull) return a;
  auto numeric = [](Inferred::Kind k) { return k == Inferred::kLong || k == Inferred::kDecimal || k == Inferred::kDouble; };
  if (numeric(a.kind) && numeric(b.kind)) {
    if (a.kind == Inferred::kDouble || b.kind == Inferred::kDouble) return Inferred{Inferred::kDouble};
    if (a.kind == Inferred::kLong && b.kind == Inferred::kLong) return a;
    Inferred d{Inferred::kDecimal};
    d.precision = std::max(a.kind == Inferred::kLong ? 20 : a.precision, b.kind == Inferred::kLong ? 20 : b.precision);
    return d;
  }
  if (a.kind != b.kind) return Inferred{Inferred::kString};
  if (a.kind == Inferred::kArray) {
    Inferred merged{Inferred::kArray};
    merged.element.push_back(Merge(a.element[0], b.element[0]));
    return merged;
  }
  if (a.kind == Inferred::kStruct) {
    Inferred merged = a;
    for (const auto& [name, type] : b.fields) {
      auto it = merged.fields.find(name);
      merged.fields[name] = it == merged.fields.end() ? type : Merge(it->second, type);
    }
    return merged;
  }
  return a;
}

Inferred Infer(simdjson::dom::element value) {
  switch (value.type()) {
    case simdjson::dom::element_type::ARRAY: {
      Inferred array{Inferred::kArray};
      array.element.push_back(Inferred{});
      simdjson::dom::array items;
      if (value.get_array().get(items) != simdjson::SUCCESS) return array;
      for (simdjson::dom::element item : items) array.element[0] = Merge(array.element[0], Infer(item));
      return array;
    }
    case simdjson::dom::element_type::OBJECT: {
      Inferred object{Inferred::kStruct};
      simdjson::dom::object members;
      if (value.get_object().get(members) != simdjson::SUCCESS) return object;
      for (auto [key, item] : members) {
        std::string name(key);
        auto it = object.fields.find(name);
        object.fields[name] = it == object.fields.end() ? Infer(item) : Merge(it->second, Infer(item));
      }
      return object;
    }
    case simdjson::dom::element_type::INT64: return Inferred{Inferred::kLong};
    case simdjson::dom::element_type::UINT64: {
      Inferred d{Inferred::kDecimal};
      d.precision = 20;
      return d;
    }
    case simdjson::dom::element_type::DOUBLE: return Inferred{Inferred::kDouble};
    case simdjson::dom::element_type::STRING: return Inferred{Inferred::kString};
    case simdjson::dom::element_type::BOOL: return Inferred{Inferred::kBoolean};
    case simdjson::dom::element_type::NULL_VALUE: return Inferred{};
  }
  return Inferred{};
}

// Spark's quoteIfNeeded: a name of letters, digits and underscores (not only digits) is bare.
std::string SqlFieldName(const std::string& name) {
  const bool plain = !name.empty() &&
                     std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }) &&
                     !std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  return plain ? name : QuoteIdentifier(name);
}

std::string SqlType(const Inferred& type) {
  switch (type.kind) {
    case Inferred::kNull:
    case Inferred::kString: return "STRING";
    case Inferred::kBoolean: return "BOOLEAN";
    case Inferred::kLong: return "BIGINT";
    case Inferred::kDecimal: return fmt::format("DECIMAL({},0)", type.precision);
    case Inferred::kDouble: return "DOUBLE";
    case Inferred::kArray: return "ARRAY<" + SqlType(type.element[0]) + ">";
    case Inferred::kStruct: {
      std::string out = "STRUCT<";
      bool first = true;
      for (const auto& [name, field] : type.fields) {
        if (!first) out += ", ";
        first = false;
        out += SqlFieldName(name) + ": " + SqlType(field);
      }
      return out + ">";
    }
  }
  return "STRING";
}

Result<Datum> SchemaOfJson(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  StringReader text = ReadString(args[0]);
  ValidityReader valid = ReadValidity(args[0]);
  StringWriter out(node.type, rows);
  for (int64_t r = 0; r < rows; ++r) {
    if (!valid(r)) {
      out.AppendNull();
      continue;
    }
    SLUICE_ASSIGN_OR_RETURN(std::string schema, InferJsonSchema(text[r]));
    out.Append(schema);
  }
  return Datum{out.Finish(), false};
}

}  // namespace

std::vector<ColumnPtr> JsonTupleColumns(const ColumnPtr& json, const std::vector<std::string>& fields) {
  std::vector<ColumnPtr> columns;
  std::string value;
  for (const std::string& field : fields) {
    const std::vector<PathStep> steps = {PathStep{field}};
    StringWriter writer(DataType::String(), json->length);
    ForEachDocument(Datum{json}, json->length, [&](int64_t, simdjson::ondemand::document* doc) {
      if (doc != nullptr && ExtractJson(*doc, steps, &value)) {
        writer.Append(value);
      } else {
        writer.AppendNull();
      }
    });
    columns.push_back(writer.Finish());
  }
  return columns;
}

Result<std::string> InferJsonSchema(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element document;
  if (parser.parse(std::string(json)).get(document) != simdjson::SUCCESS) {
    return Status::Error(errors::kMalformedRecordInParsing,
                         fmt::format("schema_of_json cannot infer a schema from text that is not JSON: {}{}",
                                     json.substr(0, 100), json.size() > 100 ? "..." : ""));
  }
  return SqlType(Infer(document));
}

// from_json's options of leniency, by Spark's names (JsonLeniency).
constexpr std::pair<std::string_view, bool JsonLeniency::*> kLeniencyOptions[] = {
    {"allowSingleQuotes", &JsonLeniency::allow_single_quotes},
    {"allowNonNumericNumbers", &JsonLeniency::allow_non_numeric_numbers},
    {"allowComments", &JsonLeniency::allow_comments},
    {"allowUnquotedFieldNames", &JsonLeniency::allow_unquoted_field_names},
    {"allowNumericLeadingZeros", &JsonLeniency::allow_numeric_leading_zeros},
    {"allowBackslashEscapingAnyCharacter", &JsonLeniency::allow_backslash_escaping_any_character},
    {"allowUnquotedControlChars", &JsonLeniency::allow_unquoted_control_chars},
};

Result<std::shared_ptr<const JsonOptions>> ReadJsonOptions(std::string_view function, const Column* options) {
  static const std::map<std::string_view, std::vector<std::string_view>> kTaken = [] {
    std::vector<std::string_view> from_json = {"mode", "dateFormat", "timestampFormat"};
    for (const auto& [name, flag] : kLeniencyOptions) from_json.push_back(name);
    return std::map<std::string_view, std::vector<std::string_view>>{
        {"from_json", from_json}, {"to_json", {"dateFormat", "timestampFormat", "ignoreNullFields"}}, {"schema_of_json", {}}};
  }();
  const std::vector<std::string_view>& taken = kTaken.at(function);
  auto out = std::make_shared<JsonOptions>();
  if (options == nullptr || options->IsNull(0)) return std::shared_ptr<const JsonOptions>(out);
  const Column& keys = *options->children[0];
  const Column& values = *options->children[1];
  for (int64_t i = options->offsets[0]; i < options->offsets[1]; ++i) {
    const std::string key(keys.View(i));
    const std::string value = values.IsNull(i) ? "" : std::string(values.View(i));
    auto known = std::find_if(taken.begin(), taken.end(), [&](std::string_view name) { return EqualsIgnoreCase(name, key); });
    if (known == taken.end()) {
      std::string list;
      for (std::string_view name : taken) list += (list.empty() ? "" : ", ") + std::string(name);
      return Status::Error(errors::kInvalidOptions,
                           fmt::format("{} does not take the option '{}'; it takes {}", function, key,
                                       list.empty() ? "none" : list));
    }
    if (*known == "mode") {
      if (!EqualsIgnoreCase(value, "PERMISSIVE") && !EqualsIgnoreCase(value, "FAILFAST")) {
        return Status::Error(errors::kInvalidParameterValue,
                             fmt::format("{} does not support the mode '{}': PERMISSIVE or FAILFAST", function, value));
      }
      out->failfast = EqualsIgnoreCase(value, "FAILFAST");
    } else if (auto lenient = std::find_if(std::begin(kLeniencyOptions), std::end(kLeniencyOptions),
                                           [&](const auto& option) { return option.first == *known; });
               *known == "ignoreNullFields" || lenient != std::end(kLeniencyOptions)) {
      if (!EqualsIgnoreCase(value, "true") && !EqualsIgnoreCase(value, "false")) {
        return Status::Error(errors::kInvalidParameterValue,
                             fmt::format("{}'s option {} is true or false, not '{}'", function, *known, value));
      }
      bool& flag = lenient == std::end(kLeniencyOptions) ? out->ignore_null_fields : out->leniency.*(lenient->second);
      flag = EqualsIgnoreCase(value, "true");
    } else {
      if (!FormatWithPattern(0, value)) {
        return Status::Error(errors::kInvalidParameterValue,
                             fmt::format("{}'s option {} has a pattern letter that is not supported: '{}'", function,
                                         *known, value));
      }
      (*known == "dateFormat" ? out->date_format : out->timestamp_format) = value;
    }
  }
  return std::shared_ptr<const JsonOptions>(out);
}

Result<TypePtr> ReadJsonSchema(std::string_view text) {
  std::string_view trimmed = text;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.front()))) trimmed.remove_prefix(1);
  Result<TypePtr> parsed = !trimmed.empty() && trimmed.front() == '{' ? ParseTypeJson(text) : ParseTypeString(text);
  if (!parsed.ok()) return Status::Error(errors::kInvalidSchema, std::string(parsed.status().message()));
  const TypePtr& type = *parsed;
  if (type->id() != TypeId::kStruct && type->id() != TypeId::kArray && type->id() != TypeId::kMap) {
    return Status::Error(errors::kDatatypeMismatch,
                         fmt::format("from_json reads into a struct, an array or a map, not {}", type->ToString()));
  }
  // Keys of maps anywhere inside must be strings: JSON object keys are.
  std::vector<const DataType*> pending = {type.get()};
  while (!pending.empty()) {
    const DataType* t = pending.back();
    pending.pop_back();
    if (t->id() == TypeId::kMap) {
      if (t->key_type()->id() != TypeId::kString) {
        return Status::Error(errors::kDatatypeMismatch,
                             fmt::format("from_json reads maps with string keys only, not {}", t->ToString()));
      }
      pending.push_back(t->value_type().get());
    } else if (t->id() == TypeId::kArray) {
      pending.push_back(t->element_type().get());
    } else if (t->id() == TypeId::kStruct) {
      for (const Field& f : t->fields()) pending.push_back(f.type.get());
    }
  }
  return AsNullable(type);
}

Result<Datum> EvalJsonFunction(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  switch (node.op) {
    case Op::kGetJsonObject: return GetJsonObject(node, args, rows);
    case Op::kFromJson: return FromJson(node, args, rows);
    case Op::kToJson: return ToJson(node, args, rows);
    case Op::kSchemaOfJson: return SchemaOfJson(node, args, rows);
    case Op::kJsonArrayLength: return JsonArrayLength(node, args, rows);
    default: return JsonObjectKeys(node, args, rows);
  }
}

}  // namespace sluice::expr
