// Spark's simple and DDL type strings: "int", "decimal(10,2)", "array<string>",
// "map<string,int>", "struct<a:int,`b c`:string NOT NULL>", "struct<a int, b string>", and a
// bare column list "id bigint, name string" (read as a struct, like Spark's DataType.fromDDL).
//
// A small recursive-descent parser over the text. Keywords are matched ignoring ASCII case;
// field names keep their case. Every failure is INVALID_DATA_TYPE naming the position.
#include <cctype>
#include <charconv>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sluice/core/ascii.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/types.h"

namespace sluice {
namespace {

// Deeper than any real schema; shallow enough that recursion cannot exhaust the stack.
constexpr int kMaxTypeDepth = 64;

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class TypeStringParser {
 public:
  explicit TypeStringParser(std::string_view text) : text_(text) {}

  // The whole text as one type.
  Result<TypePtr> ParseWholeType() {
    SLUICE_ASSIGN_OR_RETURN(TypePtr type, ParseType(1));
    SLUICE_RETURN_IF_ERROR(ExpectEnd());
    return type;
  }

  // The whole text as a column list "a int, b string NOT NULL".
  Result<TypePtr> ParseWholeColumnList() {
    std::vector<Field> fields;
    do {
      SLUICE_ASSIGN_OR_RETURN(Field field, ParseField(1));
      fields.push_back(std::move(field));
      ++fields_read_;
    } while (Consume(','));
    SLUICE_RETURN_IF_ERROR(ExpectEnd());
    return MakeStruct(std::move(fields));
  }

  // Complete fields read before the column-list reading stopped.
  int fields_read() const { return fields_read_; }

 private:
  Status Error(std::string_view what) {
    return Status::Error(errors::kInvalidDataType,
                         fmt::format("cannot parse data type \"{}\": {} at position {}", text_, what, pos_));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Status Expect(char c) {
    if (Consume(c)) return Status::OK();
    return Error(fmt::format("expected '{}'", c));
  }

  Status ExpectEnd() {
    SkipSpace();
    if (pos_ == text_.size()) return Status::OK();
    return Error("unexpected text");
  }

  // A run of letters, digits and underscores (possibly empty).
  std::string_view Word() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && IsWordChar(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  // Consumes the keyword if the next word is it.
  bool ConsumeKeyword(std::string_view keyword) {
    size_t saved = pos_;
    if (EqualsIgnoreCase(Word(), keyword)) return true;
    pos_ = saved;
    return false;
  }

  Result<int> Number() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    int value = 0;
    auto [end, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, value);
    if (start == pos_ || ec != std::errc()) {
      pos_ = start;
      return Error("expected a number");
    }
    return value;
  }

  Result<TypePtr> ParseType(int depth) {
    if (depth > kMaxTypeDepth) return Error(fmt::format("types nested deeper than {} levels", kMaxTypeDepth));
    size_t start = pos_;
    std::string_view word = Word();
    if (word.empty()) return Error("expected a data type");
    struct Named {
      std::string_view name;
      TypePtr (*make)();
    };
    static constexpr Named kPrimitives[] = {
        {"boolean", &DataType::Boolean},     {"byte", &DataType::Byte},
        {"tinyint", &DataType::Byte},        {"short", &DataType::Short},
        {"smallint", &DataType::Short},      {"int", &DataType::Integer},
        {"integer", &DataType::Integer},     {"long", &DataType::Long},
        {"bigint", &DataType::Long},         {"float", &DataType::Float},
        {"real", &DataType::Float},          {"double", &DataType::Double},
        {"string", &DataType::String},       {"binary", &DataType::Binary},
        {"date", &DataType::Date},           {"timestamp", &DataType::Timestamp},
        {"timestamp_ltz", &DataType::Timestamp}, {"timestamp_ntz", &DataType::TimestampNtz},
    };
    for (const Named& primitive : kPrimitives) {
      if (EqualsIgnoreCase(word, primitive.name)) return primitive.make();
    }
    if (EqualsIgnoreCase(word, "decimal") || EqualsIgnoreCase(word, "dec") || EqualsIgnoreCase(word, "numeric")) {
      return ParseDecimalArguments();
    }
    // Spark stores char(n) and varchar(n) columns as strings.
    if (EqualsIgnoreCase(word, "char") || EqualsIgnoreCase(word, "varchar")) {
      SLUICE_RETURN_IF_ERROR(Expect('('));
      SLUICE_RETURN_IF_ERROR(Number().status());
      SLUICE_RETURN_IF_ERROR(Expect(')'));
      return DataType::String();
    }
    if (EqualsIgnoreCase(word, "array")) {
      SLUICE_RETURN_IF_ERROR(Expect('<'));
      SLUICE_ASSIGN_OR_RETURN(TypePtr element, ParseType(depth + 1));
      SLUICE_RETURN_IF_ERROR(Expect('>'));
      return DataType::Array(std::move(element));
    }
    if (EqualsIgnoreCase(word, "map")) {
      SLUICE_RETURN_IF_ERROR(Expect('<'));
      SLUICE_ASSIGN_OR_RETURN(TypePtr key, ParseType(depth + 1));
      SLUICE_RETURN_IF_ERROR(Expect(','));
      SLUICE_ASSIGN_OR_RETURN(TypePtr value, ParseType(depth + 1));
      SLUICE_RETURN_IF_ERROR(Expect('>'));
      return DataType::Map(std::move(key), std::move(value));
    }
    if (EqualsIgnoreCase(word, "struct")) return ParseStructBody(depth);
    pos_ = start;
    SkipSpace();
    return Error(fmt::format("unknown data type \"{}\"", word));
  }

  Result<TypePtr> ParseDecimalArguments() {
    int precision = 10;
    int scale = 0;
    size_t arguments = pos_;
    if (Consume('(')) {
      SLUICE_ASSIGN_OR_RETURN(precision, Number());
      if (Consume(',')) {
        SLUICE_ASSIGN_OR_RETURN(scale, Number());
      }
      SLUICE_RETURN_IF_ERROR(Expect(')'));
    }
    Result<TypePtr> type = DataType::Decimal(precision, scale);
    if (!type.ok()) {
      pos_ = arguments;
      return Error(type.status().message());
    }
    return type;
  }

  Result<TypePtr> ParseStructBody(int depth) {
    SLUICE_RETURN_IF_ERROR(Expect('<'));
    std::vector<Field> fields;
    if (!Consume('>')) {
      do {
        SLUICE_ASSIGN_OR_RETURN(Field field, ParseField(depth + 1));
        fields.push_back(std::move(field));
      } while (Consume(','));
      SLUICE_RETURN_IF_ERROR(Expect('>'));
    }
    return MakeStruct(std::move(fields));
  }

  // Reports an invalid field list at the end of the list.
  Result<TypePtr> MakeStruct(std::vector<Field> fields) {
    Result<TypePtr> type = DataType::Struct(std::move(fields));
    if (!type.ok()) return Error(type.status().message());
    return type;
  }

  // name [':'] type [NOT NULL] [COMMENT 'text']
  Result<Field> ParseField(int depth) {
    Field field;
    SLUICE_ASSIGN_OR_RETURN(field.name, FieldName());
    Consume(':');
    SLUICE_ASSIGN_OR_RETURN(field.type, ParseType(depth));
    if (ConsumeKeyword("not")) {
      if (!ConsumeKeyword("null")) return Error("expected NULL after NOT");
      field.nullable = false;
    }
    if (ConsumeKeyword("comment")) {
      SLUICE_ASSIGN_OR_RETURN(std::string comment, QuotedString());
      field.metadata = CommentMetadata(comment);
    }
    return field;
  }

  // A back-quoted name (`` doubles a back quote inside), or the text up to the ':' that ends an
  // unquoted name when there is one before the next delimiter, or else one word.
  Result<std::string> FieldName() {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '`') {
      std::string name;
      ++pos_;
      while (true) {
        if (pos_ >= text_.size()) return Error("unterminated back-quoted name");
        char c = text_[pos_++];
        if (c == '`') {
          if (pos_ < text_.size() && text_[pos_] == '`') {
            name.push_back('`');
            ++pos_;
            continue;
          }
          return name;
        }
        name.push_back(c);
      }
    }
    size_t end = text_.find_first_of(":,<>()`'\"", pos_);
    if (end != std::string_view::npos && text_[end] == ':') {
      std::string_view name = text_.substr(pos_, end - pos_);
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.remove_suffix(1);
      if (name.empty()) return Error("expected a field name");
      pos_ = end;
      return std::string(name);
    }
    std::string_view word = Word();
    if (word.empty()) return Error("expected a field name");
    return std::string(word);
  }

  // 'text' or "text" with backslash escapes.
  Result<std::string> QuotedString() {
    SkipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return Error("expected a quoted string");
    char quote = text_[pos_++];
    std::string value;
    while (true) {
      if (pos_ >= text_.size()) return Error("unterminated string");
      char c = text_[pos_++];
      if (c == quote) return value;
      if (c == '\\') {
        if (pos_ >= text_.size()) return Error("unterminated string");
        c = text_[pos_++];
      }
      value.push_back(c);
    }
  }

  static std::string CommentMetadata(std::string_view comment) {
    std::string out = R"({"comment":")";
    for (char c : comment) {
      if (c == '"' || c == '\\') {
        out.push_back('\\');
        out.push_back(c);
      } else if (static_cast<unsigned char>(c) < 0x20) {
        out.append(fmt::format("\\u{:04x}", static_cast<unsigned char>(c)));
      } else {
        out.push_back(c);
      }
    }
    out.append("\"}");
    return out;
  }

  std::string_view text_;
  size_t pos_ = 0;
  int fields_read_ = 0;
};

}  // namespace

Result<TypePtr> ParseTypeString(std::string_view text) {
  TypeStringParser as_type(text);
  Result<TypePtr> type = as_type.ParseWholeType();
  if (type.ok()) return type;
  TypeStringParser as_columns(text);
  Result<TypePtr> columns = as_columns.ParseWholeColumnList();
  if (columns.ok()) return columns;
  // Text that reads as a column list for a while is one with a mistake further on.
  return as_columns.fields_read() > 0 ? columns : type;
}

}  // namespace sluice
