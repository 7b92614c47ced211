// The JSON reader. The type is compiled once into a tree of Nodes, each bound to the column
// builder it fills; each row is parsed with simdjson's DOM parser (reused, so its buffers are
// allocated once) and walked down the tree. A struct node first gathers its fields' values into a
// scratch array indexed by field (the last duplicate key wins, order does not matter), then
// appends them in field order. Builders cannot take a row back, so whatever must convert as a
// whole (an array's elements, a map's values, a field that may not be null) is checked with Fits()
// before anything of it is appended.
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

template <typename T>
bool ReadIntegral(element value, T* out) {
  int64_t v;
  if (value.get_int64().get(v) != simdjson::SUCCESS) return false;
  if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) return false;
  *out = static_cast<T>(v);
  return true;
}

// Numbers, and the non-numeric spellings Spark's JSON reader accepts by default.
bool ReadDouble(element value, double* out) {
  if (value.get_double().get(*out) == simdjson::SUCCESS) return true;
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) return false;
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

// The bare non-numeric values of allow_non_numeric_numbers (Spark's parser takes no bare INF).
constexpr std::string_view kNonNumeric[] = {"+Infinity", "-Infinity", "Infinity", "NaN"};

// `text` with what `options` allows beyond JSON made JSON: single-quoted strings and names
// double-quoted, bare non-numeric values quoted. nullopt when there was nothing to change. Text
// inside double-quoted strings is copied as it is; the result is checked by parsing it.
std::optional<std::string> StrictJson(std::string_view text, const JsonReadOptions& options) {
  std::string out;
  out.reserve(text.size() + 8);
  bool changed = false;
  char last = 0;  // the last character outside strings and blanks: where a value may start
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"') {
      const size_t start = i++;
      while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
      i = std::min(i + 1, text.size());
      out.append(text.substr(start, i - start));
      last = '"';
    } else if (c == '\'' && options.allow_single_quotes) {
      changed = true;
      out.push_back('"');
      for (++i; i < text.size() && text[i] != '\''; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) {
          if (text[i + 1] != '\'') out.push_back('\\');
          out.push_back(text[++i]);
        } else if (text[i] == '"') {
          out += "\\\"";
        } else {
          out.push_back(text[i]);
        }
      }
      out.push_back('"');
      i = std::min(i + 1, text.size());
      last = '"';
    } else {
      if (options.allow_non_numeric_numbers && (last == 0 || last == ':' || last == '[' || last == ',')) {
        auto token = std::find_if(std::begin(kNonNumeric), std::end(kNonNumeric),
                                  [&](std::string_view t) { return text.substr(i).starts_with(t); });
        const size_t end = token == std::end(kNonNumeric) ? i : i + token->size();
        if (end > i && (end == text.size() || !std::isalnum(static_cast<unsigned char>(text[end])))) {
          changed = true;
          out += '"';
          out += *token;
          out += '"';
          i = end;
          last = '"';
          continue;
        }
      }
      out.push_back(c);
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

class Reader final : public JsonReader {
 public:
  Reader(TypePtr type, JsonReadOptions options)
      : type_(std::move(type)), options_(std::move(options)), builder_(ColumnBuilder::Make(type_)) {
    if (!options_.parse_date) options_.parse_date = [](std::string_view text, int32_t* days) { return ParseIsoDate(text, days); };
    if (!options_.parse_timestamp) {
      options_.parse_timestamp = [](std::string_view text, int64_t* micros) { return ParseIsoTimestamp(text, micros); };
    }
  }

  Status Init() { return Bind(type_, true, builder_.get(), "value", &root_); }

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
  simdjson::dom::parser parser_;
  std::vector<uint8_t> padded_;  // one row plus simdjson's padding
  std::string scratch_;
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
    if (!ReadIntegral(value, &v)) return false;                              \
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
      if (!ReadDouble(value, &v)) return false;
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
        if (value.get_string().get(text) == simdjson::SUCCESS) {
          builder->Append(text);
        } else {
          builder->Append(simdjson::minify(value));  // rare: a non-string kept as its JSON text
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
      if (value.get_string().get(text) == simdjson::SUCCESS) {
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
    std::string_view bytes = documents.View(row);
    if (padded_.size() < bytes.size() + simdjson::SIMDJSON_PADDING) padded_.resize(bytes.size() + simdjson::SIMDJSON_PADDING);
    if (!bytes.empty()) std::memcpy(padded_.data(), bytes.data(), bytes.size());  // an empty row may have no data pointer
    element document;
    bool fits = parser_.parse(padded_.data(), bytes.size(), false).get(document) == simdjson::SUCCESS;
    if (!fits && (options_.allow_single_quotes || options_.allow_non_numeric_numbers)) {
      if (std::optional<std::string> strict = StrictJson(bytes, options_)) {
        if (padded_.size() < strict->size() + simdjson::SIMDJSON_PADDING) {
          padded_.resize(strict->size() + simdjson::SIMDJSON_PADDING);
        }
        std::memcpy(padded_.data(), strict->data(), strict->size());
        fits = parser_.parse(padded_.data(), strict->size(), false).get(document) == simdjson::SUCCESS;
      }
    }
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
