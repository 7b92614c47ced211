// JSON lines to columns and back, and JSON values into builders of any type (also for the
// nested columns of csv files). Parsing uses simdjson's on-demand API on the file's own bytes:
// numbers are read from their text, so decimals keep every digit.
#include <simdjson.h>

#include <limits>

#include <fmt/format.h>

#include "connectors/files/file_codecs.h"
#include "connectors/files/file_text.h"
#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/json_text.h"

namespace sluice::connectors {
namespace {

namespace od = simdjson::ondemand;

bool Fail(std::string* why, std::string_view what) {
  *why = std::string(what);
  return false;
}

std::string_view TrimRight(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

const char* JsonTypeName(od::json_type type) {
  switch (type) {
    case od::json_type::array: return "an array";
    case od::json_type::object: return "an object";
    case od::json_type::number: return "a number";
    case od::json_type::string: return "a string";
    case od::json_type::boolean: return "a boolean";
    case od::json_type::null: return "null";
  }
  return "a value of another kind";
}

// Whether the document holds more than the value just read (simdjson reports no current location
// once everything is consumed).
bool HasMore(od::document& document) { return document.current_location().error() == simdjson::SUCCESS; }

bool AppendValue(ColumnBuilder* builder, od::value value, std::string* why);

// The fields of a JSON object into a struct builder; fields the object lacks become null.
bool AppendObject(StructBuilder* builder, od::object object, std::string* why) {
  const DataType& type = *builder->type();
  const int64_t row = builder->length();
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return Fail(why, "an object key is not valid JSON");
    int index = type.FieldIndex(key);
    if (index < 0) continue;
    ColumnBuilder* child = builder->field_builder(index);
    if (child->length() != row) return Fail(why, fmt::format("key `{}` appears twice", key));
    od::value value;
    if (field.value().get(value)) return Fail(why, fmt::format("field `{}`: not valid JSON", key));
    if (!AppendValue(child, value, why)) {
      *why = fmt::format("field `{}`: {}", key, *why);
      return false;
    }
  }
  for (int i = 0; i < builder->num_fields(); ++i) {
    if (builder->field_builder(i)->length() == row) builder->field_builder(i)->AppendNull();
  }
  builder->Append();
  return true;
}

bool AppendValue(ColumnBuilder* builder, od::value value, std::string* why) {
  od::json_type json_type;
  if (value.type().get(json_type)) return Fail(why, "not valid JSON");
  if (json_type == od::json_type::null) {
    if (value.is_null().error()) return Fail(why, "not valid JSON");
    builder->AppendNull();
    return true;
  }
  const DataType& type = *builder->type();
  switch (type.id()) {
    case TypeId::kBoolean: {
      bool flag = false;
      if (value.get_bool().get(flag)) return Fail(why, "expected true or false");
      static_cast<BooleanBuilder*>(builder)->Append(flag ? 1 : 0);
      return true;
    }
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInteger:
    case TypeId::kLong: {
      if (json_type != od::json_type::number) return Fail(why, "expected a number for a " + type.ToString());
      std::string_view token = TrimRight(value.raw_json_token());
      return file_text::AppendScalar(builder, token, why);
    }
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kDecimal: {
      std::string_view text;
      if (json_type == od::json_type::number) {
        text = TrimRight(value.raw_json_token());
      } else if (json_type != od::json_type::string || value.get_string().get(text)) {
        return Fail(why, "expected a number");
      }
      return file_text::AppendScalar(builder, text, why);
    }
    case TypeId::kString:
    case TypeId::kBinary:
    case TypeId::kDate:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: {
      std::string_view text;
      if (json_type != od::json_type::string) {
        return Fail(why, std::string("expected a string (the text of a ") + type.ToString() + "), found " +
                             JsonTypeName(json_type));
      }
      if (value.get_string().get(text)) return Fail(why, "a string that is not valid (an escape such as a lone surrogate \\ud800)");
      return file_text::AppendScalar(builder, text, why);
    }
    case TypeId::kStruct: {
      od::object object;
      if (json_type != od::json_type::object || value.get_object().get(object)) return Fail(why, "expected an object");
      return AppendObject(static_cast<StructBuilder*>(builder), object, why);
    }
    case TypeId::kArray: {
      od::array array;
      if (json_type != od::json_type::array || value.get_array().get(array)) return Fail(why, "expected an array");
      auto* list = static_cast<ListBuilder*>(builder);
      for (auto element : array) {
        od::value item;
        if (element.get(item)) return Fail(why, "an array element is not valid JSON");
        if (!AppendValue(list->element_builder(), item, why)) return false;
      }
      list->Append();
      return true;
    }
    case TypeId::kMap: {
      od::object object;
      if (json_type != od::json_type::object || value.get_object().get(object)) return Fail(why, "expected an object");
      auto* map = static_cast<ListBuilder*>(builder);
      for (auto field : object) {
        std::string_view key;
        od::value item;
        if (field.unescaped_key().get(key) || field.value().get(item)) return Fail(why, "a map entry is not valid JSON");
        if (!file_text::AppendScalar(map->key_builder(), key, why)) return false;
        if (!AppendValue(map->value_builder(), item, why)) return false;
      }
      map->Append();
      return true;
    }
  }
  return Fail(why, "unsupported type");
}

}  // namespace

bool file_text::AppendJsonText(ColumnBuilder* builder, std::string_view text, std::string* why) {
  if (TrimRight(text) == "null") {
    builder->AppendNull();
    return true;
  }
  thread_local od::parser parser;
  simdjson::padded_string padded(text);
  od::document document;
  if (parser.iterate(padded).get(document)) return Fail(why, "not valid JSON");
  od::value value;
  if (document.get_value().get(value)) return Fail(why, "not valid JSON");
  if (!AppendValue(builder, value, why)) return false;
  if (HasMore(document)) return Fail(why, "text after the JSON value");
  return true;
}

void PadForJson(std::string* content) { content->reserve(content->size() + simdjson::SIMDJSON_PADDING); }

Status ReadJsonLines(std::string_view content, const std::string& path, const TypePtr& schema, int64_t batch_size,
                     std::vector<BatchPtr>* out) {
  od::parser parser;
  StructBuilder builder(schema);
  int64_t rows = 0;
  auto flush = [&]() -> Status {
    ColumnPtr rows_column = builder.Finish();
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, RecordBatch::Make(schema, rows_column->children, rows));
    out->push_back(std::move(batch));
    rows = 0;
    return Status::OK();
  };
  std::string why;
  int64_t line_number = 0;
  size_t pos = 0;
  while (pos < content.size()) {
    ++line_number;
    size_t end = content.find('\n', pos);
    if (end == std::string_view::npos) end = content.size();
    std::string_view line = TrimRight(content.substr(pos, end - pos));
    size_t line_start = pos;
    pos = end + 1;
    if (line.empty()) continue;
    auto malformed = [&](std::string_view what) {
      return Status::Error(errors::kMalformedJsonRecord, fmt::format("{}:{}: {}", path, line_number, what));
    };
    simdjson::padded_string_view view(line.data(), line.size(), content.size() - line_start + simdjson::SIMDJSON_PADDING);
    od::document document;
    od::object object;
    if (parser.iterate(view).get(document) || document.get_object().get(object)) {
      return malformed("not a JSON object (is the file truncated?)");
    }
    if (!AppendObject(&builder, object, &why)) return malformed(why);
    if (HasMore(document)) return malformed("text after the JSON object");
    if (++rows == batch_size) SLUICE_RETURN_IF_ERROR(flush());
  }
  if (rows > 0 || out->empty()) SLUICE_RETURN_IF_ERROR(flush());
  return Status::OK();
}

void AppendJsonLines(const RecordBatch& batch, int64_t begin, int64_t end, std::string* out) {
  for (int64_t row = begin; row < end; ++row) {
    out->push_back('{');
    bool first = true;
    for (int i = 0; i < batch.num_columns(); ++i) {
      const Column& column = *batch.column(i);
      if (column.IsNull(row)) continue;
      if (!first) out->push_back(',');
      first = false;
      AppendJsonString(out, batch.field(i).name);
      out->push_back(':');
      AppendValueJson(column, row, out);
    }
    out->append("}\n");
  }
}

}  // namespace sluice::connectors
