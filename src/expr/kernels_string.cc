// String functions, LIKE and RLIKE. Strings are UTF-8; positions and lengths count characters
// (code points) as Spark does.

#include <algorithm>
#include <climits>
#include <regex>

#include <fmt/format.h>

#include "sluice/core/ascii.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/utf8.h"
#include "expr/kernel_util.h"
#include "expr/kernels.h"
#include "expr/like.h"

namespace sluice::expr {
namespace {

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

int64_t CountChars(std::string_view s) {
  int64_t n = 0;
  for (char c : s) n += !IsContinuation(c);
  return n;
}

// Byte offset of character `index` (clipped to the end).
size_t CharOffset(std::string_view s, int64_t index) {
  size_t pos = 0;
  while (index > 0 && pos < s.size()) {
    ++pos;
    while (pos < s.size() && IsContinuation(s[pos])) ++pos;
    --index;
  }
  return pos;
}

// The code points of UTF-8 text (valid, as sluice's strings are).
std::vector<uint32_t> CodePoints(std::string_view text) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<uint8_t>(text[i]);
    const int n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    uint32_t cp = n == 1 ? b : n == 2 ? b & 0x1F : n == 3 ? b & 0x0F : b & 0x07;
    for (int k = 1; k < n && i + static_cast<size_t>(k) < text.size(); ++k) cp = cp << 6 | (static_cast<uint8_t>(text[i + k]) & 0x3F);
    out.push_back(cp);
    i += static_cast<size_t>(n);
  }
  return out;
}

// encode(text, charset): as Java's String.getBytes; false for a character the charset lacks
// (Spark's MALFORMED_CHARACTER_CODING).
bool EncodeText(std::string_view text, std::string_view charset, std::string* encoded) {
  std::string& out = *encoded;
  out.clear();
  if (charset == "UTF-8") {
    out.assign(text);
    return true;
  }
  const bool utf16 = charset.starts_with("UTF-16");
  const bool little = charset == "UTF-16LE";
  if (charset == "UTF-16") out += "\xFE\xFF";  // Java writes a big-endian byte order mark
  auto unit = [&](uint32_t u) {
    const char high = static_cast<char>(u >> 8), low = static_cast<char>(u & 0xFF);
    out += little ? low : high;
    out += little ? high : low;
  };
  for (uint32_t cp : CodePoints(text)) {
    if (utf16) {
      if (cp < 0x10000) {
        unit(cp);
      } else {
        unit(0xD800 + ((cp - 0x10000) >> 10));
        unit(0xDC00 + ((cp - 0x10000) & 0x3FF));
      }
    } else {
      const uint32_t limit = charset == "US-ASCII" ? 0x80 : 0x100;
      if (cp >= limit) return false;
      out += static_cast<char>(cp);
    }
  }
  return true;
}

// decode(bytes, charset): as Java's new String(bytes, charset); false for bytes that are not
// characters of the charset (Spark's MALFORMED_CHARACTER_CODING).
bool DecodeBytes(std::string_view bytes, std::string_view charset, std::string* decoded) {
  std::string& out = *decoded;
  out.clear();
  if (charset == "UTF-8") {
    if (!IsValidUtf8(bytes)) return false;
    out.assign(bytes);
    return true;
  }
  if (!charset.starts_with("UTF-16")) {
    for (char c : bytes) {
      const auto b = static_cast<uint8_t>(c);
      if (charset == "US-ASCII" && b >= 0x80) return false;
      AppendUtf8(b, &out);
    }
    return true;
  }
  bool little = charset == "UTF-16LE";
  size_t at = 0;
  if (charset == "UTF-16" && bytes.size() >= 2) {  // a byte order mark decides, big-endian without one
    const auto b0 = static_cast<uint8_t>(bytes[0]), b1 = static_cast<uint8_t>(bytes[1]);
    if (b0 == 0xFE && b1 == 0xFF) at = 2;
    if (b0 == 0xFF && b1 == 0xFE) at = 2, little = true;
  }
  auto unit = [&](size_t i) {
    const auto a = static_cast<uint8_t>(bytes[i]), b = static_cast<uint8_t>(bytes[i + 1]);
    return little ? static_cast<uint32_t>(b << 8 | a) : static_cast<uint32_t>(a << 8 | b);
  };
  for (; at + 1 < bytes.size(); at += 2) {
    const uint32_t u = unit(at);
    if (u >= 0xD800 && u < 0xDC00 && at + 3 < bytes.size() && unit(at + 2) >= 0xDC00 && unit(at + 2) < 0xE000) {
      AppendUtf8(0x10000 + ((u - 0xD800) << 10) + (unit(at + 2) - 0xDC00), &out);
      at += 2;
    } else if (u >= 0xD800 && u < 0xE000) {
      return false;  // half of a surrogate pair
    } else {
      AppendUtf8(u, &out);
    }
  }
  return at == bytes.size();  // not a lone last byte
}

// conv(number, from_base, to_base) as Spark's NumberConverter: the digits up to the first that is
// not one, as an unsigned 64-bit number (a leading '-' negates it), written in to_base (signed
// when to_base is negative); NULL for a base outside 2..36.
std::optional<std::string> ConvertBase(std::string_view text, int32_t from, int32_t to, bool* overflow) {
  *overflow = false;
  if (from < 2 || from > 36 || std::abs(to) < 2 || std::abs(to) > 36) return std::nullopt;
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  uint64_t value = 0;
  for (char ch : text) {
    const int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'z' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'Z' ? ch - 'A' + 10 : 99;
    if (d >= from) break;
    if (value > (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(from)) {
      *overflow = true;
      value = UINT64_MAX;
      break;
    }
    value = value * static_cast<uint64_t>(from) + static_cast<uint64_t>(d);
  }
  if (negative && !*overflow) value = ~value + 1;
  bool minus = false;
  if (to < 0 && static_cast<int64_t>(value) < 0) {
    minus = true;
    value = ~value + 1;
  }
  const uint64_t base = static_cast<uint64_t>(std::abs(to));
  std::string digits;
  do {
    const auto d = static_cast<int>(value % base);
    digits += static_cast<char>(d < 10 ? '0' + d : 'A' + d - 10);
    value /= base;
  } while (value != 0);
  if (minus) digits += '-';
  return std::string(digits.rbegin(), digits.rend());
}

// True when every argument is valid at `row`.
struct AllValid {
  std::vector<ValidityReader> readers;
  explicit AllValid(const std::vector<Datum>& args) {
    for (const Datum& d : args) readers.push_back(ReadValidity(d));
  }
  bool operator()(int64_t row) const {
    for (const ValidityReader& r : readers) {
      if (!r(row)) return false;
    }
    return true;
  }
};

// A boolean result computed by pred(row) on rows where every argument is valid.
template <typename P>
Datum BooleanKernel(const BoundNode& node, const std::vector<Datum>& args, int64_t rows, bool negate, P pred) {
  auto out = NewFixedColumn(node.type, rows);
  uint8_t* values = out->data.data();
  std::vector<uint8_t> validity = CombinedValidity(args, rows);
  for (int64_t i = 0; i < rows; ++i) {
    if (!validity.empty() && validity[static_cast<size_t>(i)] == 0) continue;
    values[i] = static_cast<uint8_t>(pred(i) != negate);
  }
  SetValidity(out.get(), std::move(validity));
  return Datum{out, false};
}

// What positions count in: characters of a string, bytes of a binary value.
struct Units {
  explicit Units(bool bytes) : bytes(bytes) {}
  int64_t Count(std::string_view v) const { return bytes ? static_cast<int64_t>(v.size()) : CountChars(v); }
  // The byte offset of unit n (the end when there are fewer).
  size_t Offset(std::string_view v, int64_t n) const {
    return bytes ? static_cast<size_t>(std::min<int64_t>(n, static_cast<int64_t>(v.size()))) : CharOffset(v, n);
  }
  bool bytes;
};

// A string result: emit(row, writer) appends one row for rows where every argument is valid.
template <typename E>
Datum StringKernel(const BoundNode& node, const std::vector<Datum>& args, int64_t rows, E emit) {
  StringWriter writer(node.type, rows);
  AllValid valid(args);
  for (int64_t i = 0; i < rows; ++i) {
    if (!valid(i)) {
      writer.AppendNull();
    } else {
      emit(i, &writer);
    }
  }
  return Datum{writer.Finish(), false};
}

std::string_view TrimChars(std::string_view s, std::string_view chars, bool left, bool right) {
  if (left) {
    size_t start = s.find_first_not_of(chars);
    s.remove_prefix(start == std::string_view::npos ? s.size() : start);
  }
  if (right) {
    size_t end = s.find_last_not_of(chars);
    s = end == std::string_view::npos ? std::string_view() : s.substr(0, end + 1);
  }
  return s;
}

// Java's String.split(regex, limit) for limit != 0 (trailing empty strings kept).
void SplitInto(std::string_view s, const std::regex& re, int32_t limit, StringWriter* elements, int64_t* count) {
  size_t pos = 0;
  int64_t n = 0;
  auto begin = s.begin();
  std::match_results<std::string_view::const_iterator> m;
  size_t search_from = 0;
  while ((limit <= 0 || n + 1 < limit) && search_from <= s.size() &&
         std::regex_search(begin + static_cast<ptrdiff_t>(search_from), s.end(), m, re)) {
    size_t match_start = static_cast<size_t>(m[0].first - begin);
    size_t match_end = static_cast<size_t>(m[0].second - begin);
    if (match_end == match_start) {
      // An empty match splits between characters, never before the first one.
      if (match_start >= s.size()) break;
      if (match_start == 0) {
        search_from = CharOffset(s, 1);
        continue;
      }
    }
    elements->Append(s.substr(pos, match_start - pos));
    ++n;
    pos = match_end;
    search_from = match_end == match_start ? match_end + CharOffset(s.substr(match_end), 1) : match_end;
    if (match_end == match_start && search_from > s.size()) break;
  }
  elements->Append(s.substr(pos));
  *count = n + 1;
}

// A regex for a non-constant pattern, compiled when the pattern changes from the previous row.
class RegexCache {
 public:
  explicit RegexCache(const BoundNode& node) : compiled_(std::static_pointer_cast<const RegexState>(node.state)) {}
  Result<const std::regex*> Get(std::string_view pattern) {
    if (compiled_ != nullptr && (fixed_ || pattern == last_)) return &compiled_->regex;
    SLUICE_ASSIGN_OR_RETURN(compiled_, CompileRegex(pattern));
    last_ = std::string(pattern);
    return &compiled_->regex;
  }

 private:
  std::shared_ptr<const RegexState> compiled_;
  bool fixed_ = compiled_ != nullptr;
  std::string last_;
};

// A string result of a function of a string and a regex (argument 1): emit(row, regex, writer) ->
// Status for rows where every argument is valid. A pattern that does not compile, or an error
// emit returns, fails the evaluation.
template <typename E>
Result<Datum> RegexStringKernel(const BoundNode& node, const std::vector<Datum>& args, int64_t rows, E emit) {
  StringReader pattern = ReadString(args[1]);
  RegexCache cache(node);
  Status error;
  Datum d = StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
    Result<const std::regex*> re = cache.Get(pattern[i]);
    Status status = re.ok() ? emit(i, **re, w) : re.status();
    if (status.ok()) return;
    if (error.ok()) error = std::move(status);
    w->Append("");
  });
  if (!error.ok()) return error;
  return d;
}

// Java's Matcher replacement text ($n a group, \x the character x) as std::regex's format ($n,
// $& the whole match, $$ a dollar).
std::string JavaReplacement(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      const char escaped = text[++i];
      out += escaped == '$' ? "$$" : std::string(1, escaped);
    } else if (c == '$' && i + 1 < text.size() && text[i + 1] == '0') {
      out += "$&";
      ++i;
    } else if (c == '$' && (i + 1 >= text.size() || text[i + 1] < '1' || text[i + 1] > '9')) {
      out += "$$";
    } else {
      out += c;
    }
  }
  return out;
}

// The characters of `s` (code points, as byte ranges).
std::vector<std::string_view> Chars(std::string_view s) {
  std::vector<std::string_view> chars;
  for (size_t i = 0; i < s.size();) {
    size_t end = i + 1;
    while (end < s.size() && IsContinuation(s[end])) ++end;
    chars.push_back(s.substr(i, end - i));
    i = end;
  }
  return chars;
}

// UTF8String.lpad / rpad: `s` padded with `pad` repeated to `length` characters, or cut to them.
void Pad(std::string_view s, int64_t length, std::string_view pad, bool left, StringWriter* w) {
  const int64_t chars = CountChars(s);
  if (length <= 0) {
    w->Append("");
    return;
  }
  if (length <= chars || pad.empty()) {
    w->Append(s.substr(0, CharOffset(s, length)));
    return;
  }
  std::string padding;
  const std::vector<std::string_view> pad_chars = Chars(pad);
  for (int64_t k = 0; k < length - chars; ++k) padding += pad_chars[static_cast<size_t>(k) % pad_chars.size()];
  if (left) {
    w->AppendPart(padding);
    w->AppendPart(s);
  } else {
    w->AppendPart(s);
    w->AppendPart(padding);
  }
  w->FinishRow();
}

constexpr char kHexDigits[] = "0123456789ABCDEF";

// INVALID_PARAMETER_VALUE for the first valid row whose made value would exceed the bound.
template <typename Size>
Status CheckMadeValueSizes(const BoundNode& node, const std::vector<Datum>& args, int64_t rows, Size bytes) {
  AllValid valid(args);
  for (int64_t i = 0; i < rows; ++i) {
    if (!valid(i)) continue;
    const int64_t size = bytes(i);
    if (size > kMaxMadeValueBytes) {
      return Status::Error(errors::kInvalidParameterValue,
                           fmt::format("{} would make a value of {} bytes, more than the {} MiB one value may hold",
                                       node.name, size, kMaxMadeValueBytes >> 20));
    }
  }
  return Status::OK();
}

std::optional<std::string> Unhex(std::string_view text) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  size_t i = 0;
  if (text.size() % 2 == 1) {  // an odd count reads as if led by a 0
    const int low = digit(text[0]);
    if (low < 0) return std::nullopt;
    out.push_back(static_cast<char>(low));
    i = 1;
  }
  for (; i < text.size(); i += 2) {
    const int high = digit(text[i]), low = digit(text[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out.push_back(static_cast<char>(high * 16 + low));
  }
  return out;
}

std::optional<std::string> Unbase64(std::string_view text) {
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  size_t padding = 0;
  for (char c : text) {
    if (c == '\r' || c == '\n' || c == ' ' || c == '\t') continue;  // MIME readers skip line breaks
    if (c == '=') {
      ++padding;
      continue;
    }
    const int v = Base64DigitValue(c);
    if (v < 0 || padding > 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    if (++count == 4) {
      out.push_back(static_cast<char>(bits >> 16));
      out.push_back(static_cast<char>(bits >> 8));
      out.push_back(static_cast<char>(bits));
      bits = 0;
      count = 0;
    }
  }
  if (count == 1 || padding > 2) return std::nullopt;
  if (count == 2) out.push_back(static_cast<char>(bits >> 4));
  if (count == 3) {
    out.push_back(static_cast<char>(bits >> 10));
    out.push_back(static_cast<char>(bits >> 2));
  }
  return out;
}

}  // namespace

Result<Datum> EvalStringFunction(const BoundNode& node, const std::vector<Datum>& args, int64_t rows) {
  auto str = [&](size_t i) { return ReadString(args[i]); };
  switch (node.op) {
    case Op::kLike: {
      StringReader text = str(0), pattern = str(1);
      if (node.state != nullptr) {
        const auto& like = static_cast<const LikePattern&>(*node.state);
        return BooleanKernel(node, args, rows, node.negated, [&](int64_t i) { return like.Matches(text[i]); });
      }
      Status error;
      Datum d = BooleanKernel(node, args, rows, node.negated, [&](int64_t i) {
        auto compiled = LikePattern::Compile(pattern[i], node.escape, node.ilike);
        if (!compiled.ok()) {
          error = compiled.status();
          return false;
        }
        return (*compiled)->Matches(text[i]);
      });
      if (!error.ok()) return error;
      return d;
    }
    case Op::kRLike: {
      StringReader text = str(0), pattern = str(1);
      RegexCache cache(node);
      Status error;
      Datum d = BooleanKernel(node, args, rows, node.negated, [&](int64_t i) {
        auto re = cache.Get(pattern[i]);
        if (!re.ok()) {
          error = re.status();
          return false;
        }
        std::string_view t = text[i];
        return std::regex_search(t.begin(), t.end(), **re);
      });
      if (!error.ok()) return error;
      return d;
    }
    case Op::kStartsWith:
    case Op::kEndsWith:
    case Op::kContains: {
      StringReader a = str(0), b = str(1);
      Op op = node.op;
      return BooleanKernel(node, args, rows, false, [&](int64_t i) {
        std::string_view x = a[i], y = b[i];
        if (op == Op::kStartsWith) return x.substr(0, y.size()) == y;
        if (op == Op::kEndsWith) return x.size() >= y.size() && x.substr(x.size() - y.size()) == y;
        return x.find(y) != std::string_view::npos;
      });
    }
    case Op::kLength: {
      auto out = NewFixedColumn(node.type, rows);
      int32_t* values = reinterpret_cast<int32_t*>(out->data.data());
      StringReader s = str(0);
      bool binary = args[0].column->type->id() == TypeId::kBinary;
      for (int64_t i = 0; i < rows; ++i) {
        std::string_view v = s[i];
        values[i] = static_cast<int32_t>(binary ? static_cast<int64_t>(v.size()) : CountChars(v));
      }
      SetValidity(out.get(), CombinedValidity(args, rows));
      return Datum{out, false};
    }
    case Op::kLower:
    case Op::kUpper: {
      StringReader s = str(0);
      bool upper = node.op == Op::kUpper;
      std::string buffer;
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        ChangeCase(s[i], upper, &buffer);
        w->Append(buffer);
      });
    }
    case Op::kTrim:
    case Op::kLTrim:
    case Op::kRTrim: {
      StringReader s = str(0);
      bool has_chars = args.size() > 1;
      StringReader chars = has_chars ? str(1) : s;
      bool left = node.op != Op::kRTrim, right = node.op != Op::kLTrim;
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        w->Append(TrimChars(s[i], has_chars ? chars[i] : std::string_view(" "), left, right));
      });
    }
    case Op::kSubstring: {
      StringReader s = str(0);
      FixedReader<int32_t> pos = ReadFixed<int32_t>(args[1]);
      bool has_len = args.size() > 2;
      FixedReader<int32_t> len = has_len ? ReadFixed<int32_t>(args[2]) : pos;
      const Units units(node.type->id() == TypeId::kBinary);
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        std::string_view v = s[i];
        int64_t p = pos[i];
        int64_t length = has_len ? len[i] : INT32_MAX;
        int64_t chars = p < 0 ? units.Count(v) : 0;
        int64_t start = p > 0 ? p - 1 : (p < 0 ? chars + p : 0);
        int64_t end = std::clamp<int64_t>(start + length, INT32_MIN, INT32_MAX);
        start = std::max<int64_t>(start, 0);
        if (start >= end) {
          w->Append("");
          return;
        }
        size_t from = units.Offset(v, start);
        size_t to = from + units.Offset(v.substr(from), end - start);
        w->Append(v.substr(from, to - from));
      });
    }
    case Op::kConcat: {
      std::vector<StringReader> parts;
      for (size_t a = 0; a < args.size(); ++a) parts.push_back(str(a));
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        for (const StringReader& p : parts) w->AppendPart(p[i]);
        w->FinishRow();
      });
    }
    case Op::kConcatWs: {
      StringWriter writer(node.type, rows);
      ValidityReader sep_valid = ReadValidity(args[0]);
      StringReader sep = str(0);
      for (int64_t i = 0; i < rows; ++i) {
        if (!sep_valid(i)) {
          writer.AppendNull();
          continue;
        }
        bool first = true;
        auto add = [&](std::string_view part) {
          if (!first) writer.AppendPart(sep[i]);
          writer.AppendPart(part);
          first = false;
        };
        for (size_t a = 1; a < args.size(); ++a) {
          const Datum& d = args[a];
          int64_t row = d.scalar ? 0 : i;
          if (d.column->IsNull(row)) continue;
          if (d.column->type->id() == TypeId::kArray) {
            const Column& elements = *d.column->children[0];
            for (int64_t e = d.column->offsets[static_cast<size_t>(row)]; e < d.column->offsets[static_cast<size_t>(row) + 1]; ++e) {
              if (elements.IsValid(e)) add(elements.View(e));
            }
          } else {
            add(d.column->View(row));
          }
        }
        writer.FinishRow();
      }
      return Datum{writer.Finish(), false};
    }
    case Op::kReplace: {
      StringReader s = str(0), search = str(1);
      bool has_replacement = args.size() > 2;
      StringReader replacement = has_replacement ? str(2) : s;
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        std::string_view v = s[i], from = search[i];
        std::string_view to = has_replacement ? replacement[i] : std::string_view();
        if (from.empty()) {
          w->Append(v);
          return;
        }
        size_t pos = 0;
        for (size_t hit; (hit = v.find(from, pos)) != std::string_view::npos; pos = hit + from.size()) {
          w->AppendPart(v.substr(pos, hit - pos));
          w->AppendPart(to);
        }
        w->AppendPart(v.substr(pos));
        w->FinishRow();
      });
    }
    case Op::kSplit: {
      StringReader s = str(0), pattern = str(1);
      bool has_limit = args.size() > 2;
      FixedReader<int32_t> limit = has_limit ? ReadFixed<int32_t>(args[2]) : FixedReader<int32_t>{nullptr, 0};
      RegexCache cache(node);
      AllValid valid(args);
      StringWriter elements(DataType::String(), rows);
      auto out = std::make_shared<Column>();
      out->type = node.type;
      out->length = rows;
      out->offsets.reserve(static_cast<size_t>(rows) + 1);
      out->offsets.push_back(0);
      std::vector<uint8_t> validity(static_cast<size_t>(rows), 1);
      int64_t total = 0;
      for (int64_t i = 0; i < rows; ++i) {
        if (valid(i)) {
          SLUICE_ASSIGN_OR_RETURN(const std::regex* re, cache.Get(pattern[i]));
          int64_t count = 0;
          SplitInto(s[i], *re, has_limit ? limit[i] : -1, &elements, &count);
          total += count;
        } else {
          validity[static_cast<size_t>(i)] = 0;
        }
        out->offsets.push_back(total);
      }
      out->children.push_back(elements.Finish());
      SetValidity(out.get(), std::move(validity));
      return Datum{out, false};
    }
    case Op::kRegexpExtractAll: {
      // Group g of every match, left to right (an empty match moves on by one character).
      StringReader s = str(0), pattern = str(1);
      FixedReader<int32_t> group = ReadFixed<int32_t>(args[2]);
      RegexCache cache(node);
      AllValid valid(args);
      StringWriter elements(DataType::String(), rows);
      GatherListBuilder rows_of;  // offsets and validity only: element k is row k of `elements`
      int64_t total = 0;
      for (int64_t i = 0; i < rows; ++i) {
        if (!valid(i)) {
          rows_of.EndRow(false);
          continue;
        }
        SLUICE_ASSIGN_OR_RETURN(const std::regex* re, cache.Get(pattern[i]));
        const int32_t g = group[i];
        const std::string_view v = s[i];
        for (std::regex_iterator<std::string_view::const_iterator> it(v.begin(), v.end(), *re), end; it != end; ++it) {
          if (g < 0 || static_cast<size_t>(g) > re->mark_count()) {
            return Status::Error(errors::kInvalidParameterValue,
                                 fmt::format("regexp_extract_all asks for group {} of a regex with {} groups", g, re->mark_count()));
          }
          const auto& sub = (*it)[static_cast<size_t>(g)];
          elements.Append(sub.matched ? v.substr(static_cast<size_t>(sub.first - v.begin()), static_cast<size_t>(sub.length()))
                                      : std::string_view());
          rows_of.Add(total++);
        }
        rows_of.EndRow(true);
      }
      return rows_of.Finish(node.type, elements.Finish());
    }
    case Op::kRegexpExtract: {
      StringReader s = str(0);
      FixedReader<int32_t> group = ReadFixed<int32_t>(args[2]);
      return RegexStringKernel(node, args, rows, [&](int64_t i, const std::regex& re, StringWriter* w) {
        std::string_view v = s[i];
        std::match_results<std::string_view::const_iterator> m;
        int32_t g = group[i];
        if (g < 0 || static_cast<size_t>(g) > re.mark_count()) {
          return Status::Error(errors::kInvalidParameterValue,
                               "regexp_extract asks for group " + std::to_string(g) + " of a regex with " +
                                   std::to_string(re.mark_count()) + " groups");
        }
        if (std::regex_search(v.begin(), v.end(), m, re) && m[static_cast<size_t>(g)].matched) {
          const auto& sub = m[static_cast<size_t>(g)];
          w->Append(v.substr(static_cast<size_t>(sub.first - v.begin()), static_cast<size_t>(sub.length())));
        } else {
          w->Append("");
        }
        return Status::OK();
      });
    }
    case Op::kRegexpReplace: {
      StringReader s = str(0), replacement = str(2);
      std::string format, last_replacement;
      bool have_format = false;
      return RegexStringKernel(node, args, rows, [&](int64_t i, const std::regex& re, StringWriter* w) {
        if (!have_format || replacement[i] != last_replacement) {
          last_replacement = std::string(replacement[i]);
          format = JavaReplacement(last_replacement);
          have_format = true;
        }
        std::string out;
        std::string_view v = s[i];
        std::regex_replace(std::back_inserter(out), v.begin(), v.end(), re, format);
        w->Append(out);
        return Status::OK();
      });
    }
    case Op::kRegexpCount: {
      StringReader s = str(0), pattern = str(1);
      RegexCache cache(node);
      return FixedKernel<int32_t>(node, args, rows, [&](int64_t i, int32_t* out) -> Result<bool> {
        SLUICE_ASSIGN_OR_RETURN(const std::regex* re, cache.Get(pattern[i]));
        std::string_view v = s[i];
        using Iterator = std::regex_iterator<std::string_view::const_iterator>;
        *out = static_cast<int32_t>(std::distance(Iterator(v.begin(), v.end(), *re), Iterator()));
        return true;
      });
    }
    case Op::kSplitPart: {
      StringReader s = str(0), delimiter = str(1);
      FixedReader<int32_t> part = ReadFixed<int32_t>(args[2]);
      AllValid valid(args);
      for (int64_t i = 0; i < rows; ++i) {
        if (valid(i) && part[i] == 0) {
          return Status::Error(errors::kInvalidIndexOfZero,
                               "split_part's part number 0 is invalid: parts count from 1 (negative ones from the end)");
        }
      }
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        std::string_view v = s[i], d = delimiter[i];
        std::vector<std::string_view> parts;
        if (d.empty()) {
          parts.push_back(v);
        } else {
          size_t pos = 0;
          for (size_t hit; (hit = v.find(d, pos)) != std::string_view::npos; pos = hit + d.size()) {
            parts.push_back(v.substr(pos, hit - pos));
          }
          parts.push_back(v.substr(pos));
        }
        const int64_t n = static_cast<int64_t>(parts.size());
        const int64_t index = part[i] > 0 ? part[i] - 1 : n + part[i];
        w->Append(index >= 0 && index < n ? parts[static_cast<size_t>(index)] : std::string_view());
      });
    }
    case Op::kLocate: {
      // locate(substring, string, start): 1-based, 0 when absent; a null start is 0, as Spark's.
      StringReader sub = str(0), s = str(1);
      FixedReader<int32_t> start = ReadFixed<int32_t>(args[2]);
      ValidityReader start_valid = ReadValidity(args[2]);
      auto out = NewFixedColumn(node.type, rows);
      int32_t* values = reinterpret_cast<int32_t*>(out->data.data());
      const std::vector<Datum> strings = {args[0], args[1]};
      std::vector<uint8_t> validity = CombinedValidity(strings, rows);
      for (int64_t i = 0; i < rows; ++i) {
        if ((!validity.empty() && validity[static_cast<size_t>(i)] == 0) || !start_valid(i) || start[i] < 1) continue;
        std::string_view v = s[i], needle = sub[i];
        const size_t from = CharOffset(v, start[i] - 1);
        if (needle.empty()) {
          values[i] = 1;
          continue;
        }
        const size_t hit = from > v.size() ? std::string_view::npos : v.find(needle, from);
        values[i] = hit == std::string_view::npos ? 0 : static_cast<int32_t>(CountChars(v.substr(0, hit)) + 1);
      }
      SetValidity(out.get(), std::move(validity));
      return Datum{out, false};
    }
    case Op::kLPad:
    case Op::kRPad: {
      StringReader s = str(0), pad = str(2);
      FixedReader<int32_t> length = ReadFixed<int32_t>(args[1]);
      // A character is at most 4 bytes.
      SLUICE_RETURN_IF_ERROR(CheckMadeValueSizes(node, args, rows, [&](int64_t i) { return int64_t{4} * length[i]; }));
      const bool left = node.op == Op::kLPad;
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) { Pad(s[i], length[i], pad[i], left, w); });
    }
    case Op::kRepeat: {
      StringReader s = str(0);
      FixedReader<int32_t> times = ReadFixed<int32_t>(args[1]);
      SLUICE_RETURN_IF_ERROR(CheckMadeValueSizes(node, args, rows, [&](int64_t i) {
        return static_cast<int64_t>(s[i].size()) * std::max(times[i], 0);
      }));
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        for (int32_t k = 0; k < times[i]; ++k) w->AppendPart(s[i]);
        w->FinishRow();
      });
    }
    case Op::kReverse: {
      StringReader s = str(0);
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        const std::vector<std::string_view> chars = Chars(s[i]);
        for (auto c = chars.rbegin(); c != chars.rend(); ++c) w->AppendPart(*c);
        w->FinishRow();
      });
    }
    case Op::kInitCap: {
      // Each word (the text between spaces) with its first character title-cased and the rest
      // lower-cased.
      StringReader s = str(0);
      std::string word;
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        std::string_view text = s[i];
        for (;;) {
          const size_t space = text.find(' ');
          TitleCaseWord(text.substr(0, space), &word);
          w->AppendPart(word);
          if (space == std::string_view::npos) break;
          w->AppendPart(" ");
          text.remove_prefix(space + 1);
        }
        w->FinishRow();
      });
    }
    case Op::kLeft:
    case Op::kRight: {
      StringReader s = str(0);
      FixedReader<int32_t> count = ReadFixed<int32_t>(args[1]);
      const bool left = node.op == Op::kLeft;
      const Units units(args[0].column->type->id() == TypeId::kBinary);
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        std::string_view v = s[i];
        const int64_t n = count[i];
        if (n <= 0) {
          w->Append("");
        } else if (left) {
          w->Append(v.substr(0, units.Offset(v, n)));
        } else {
          const int64_t chars = units.Count(v);
          w->Append(v.substr(units.Offset(v, std::max<int64_t>(chars - n, 0))));
        }
      });
    }
    case Op::kTranslate: {
      // Each character of `from` becomes the character of `to` at its place, or is deleted when `to`
      // is shorter; the first occurrence in `from` counts.
      StringReader s = str(0), from = str(1), to = str(2);
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        const std::vector<std::string_view> sources = Chars(from[i]), targets = Chars(to[i]);
        for (std::string_view c : Chars(s[i])) {
          auto hit = std::find(sources.begin(), sources.end(), c);
          if (hit == sources.end()) {
            w->AppendPart(c);
          } else if (const size_t k = static_cast<size_t>(hit - sources.begin()); k < targets.size()) {
            w->AppendPart(targets[k]);
          }
        }
        w->FinishRow();
      });
    }
    case Op::kHex: {
      const bool integral = args[0].column->type->id() == TypeId::kLong;
      if (integral) {
        FixedReader<int64_t> value = ReadFixed<int64_t>(args[0]);
        return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
          w->Append(fmt::format("{:X}", static_cast<uint64_t>(value[i])));
        });
      }
      StringReader s = str(0);
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        for (unsigned char c : s[i]) {
          const char digits[2] = {kHexDigits[c >> 4], kHexDigits[c & 15]};
          w->AppendPart(std::string_view(digits, 2));
        }
        w->FinishRow();
      });
    }
    case Op::kUnhex:
    case Op::kUnbase64: {
      StringReader s = str(0);
      const bool hex = node.op == Op::kUnhex;
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        std::optional<std::string> bytes = hex ? Unhex(s[i]) : Unbase64(s[i]);
        if (bytes) {
          w->Append(*bytes);
        } else {
          w->AppendNull();
        }
      });
    }
    case Op::kBase64: {
      StringReader s = str(0);
      std::string text;
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        text.clear();
        AppendBase64(s[i], &text);
        w->Append(text);
      });
    }
    case Op::kLevenshtein: {
      StringReader a = str(0), b = str(1);
      const bool bounded = args.size() == 3;
      FixedReader<int32_t> threshold = bounded ? ReadFixed<int32_t>(args[2]) : FixedReader<int32_t>{nullptr, 0};
      std::vector<int64_t> previous, current;
      return FixedKernel<int32_t>(node, args, rows, [&](int64_t i, int32_t* out) -> Result<bool> {
        const std::vector<std::string_view> x = Chars(a[i]), y = Chars(b[i]);
        previous.resize(y.size() + 1);
        current.resize(y.size() + 1);
        for (size_t j = 0; j <= y.size(); ++j) previous[j] = static_cast<int64_t>(j);
        for (size_t k = 1; k <= x.size(); ++k) {
          current[0] = static_cast<int64_t>(k);
          for (size_t j = 1; j <= y.size(); ++j) {
            const int64_t substitution = previous[j - 1] + (x[k - 1] == y[j - 1] ? 0 : 1);
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
          }
          std::swap(previous, current);
        }
        const int64_t distance = previous[y.size()];
        *out = bounded && distance > threshold[i] ? -1 : static_cast<int32_t>(distance);
        return true;
      });
    }
    case Op::kSoundex: {
      // Spark's American Soundex: the first letter, then the codes of the next consonants, a code
      // not repeated unless a vowel came between (H and W are passed over), padded with 0 to four
      // characters. A value not starting with an ASCII letter is returned as it is.
      static constexpr char kCodes[] = "01230127022455012623017202";
      StringReader s = str(0);
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        const std::string_view value = s[i];
        auto upper = [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; };
        if (value.empty() || upper(value[0]) < 'A' || upper(value[0]) > 'Z') {
          w->Append(value);
          return;
        }
        char code[4] = {upper(value[0]), '0', '0', '0'};
        int written = 1;
        char last = kCodes[code[0] - 'A'];
        for (size_t k = 1; k < value.size() && written < 4; ++k) {
          const char c = upper(value[k]);
          if (c < 'A' || c > 'Z') {
            last = '0';
            continue;
          }
          const char next = kCodes[c - 'A'];
          if (next == '7') continue;
          if (next != '0' && next != last) code[written++] = next;
          last = next;
        }
        w->Append(std::string_view(code, 4));
      });
    }
    case Op::kAscii: {
      // The first character's code point (its bytes as UTF-8), 0 for an empty string.
      StringReader s = str(0);
      return FixedKernel<int32_t>(node, args, rows, [&](int64_t i, int32_t* out) -> Result<bool> {
        const std::string_view v = s[i];
        const auto lead = v.empty() ? 0u : static_cast<unsigned char>(v[0]);
        const size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
        int32_t code = length == 1 ? lead : static_cast<int32_t>(lead & (0x7F >> length));
        for (size_t k = 1; k < length && k < v.size(); ++k) code = (code << 6) | (static_cast<unsigned char>(v[k]) & 0x3F);
        *out = code;
        return true;
      });
    }
    case Op::kChr: {
      // The character of code point n mod 256 (Spark's), "" for a negative n.
      FixedReader<int64_t> n = ReadFixed<int64_t>(args[0]);
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        if (n[i] < 0) {
          w->Append("");
          return;
        }
        const auto code = static_cast<unsigned>(n[i] % 256);
        char bytes[2];
        if (code < 0x80) {
          bytes[0] = static_cast<char>(code);
          w->Append(std::string_view(bytes, 1));
        } else {
          bytes[0] = static_cast<char>(0xC0 | (code >> 6));
          bytes[1] = static_cast<char>(0x80 | (code & 0x3F));
          w->Append(std::string_view(bytes, 2));
        }
      });
    }
    case Op::kSpace: {
      FixedReader<int32_t> n = ReadFixed<int32_t>(args[0]);
      std::string spaces;
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        spaces.assign(static_cast<size_t>(std::clamp<int32_t>(n[i], 0, 64 << 20)), ' ');
        w->Append(spaces);
      });
    }
    case Op::kBin: {
      // The two's complement bits of a bigint without leading zeros, as Java's Long.toBinaryString.
      FixedReader<int64_t> n = ReadFixed<int64_t>(args[0]);
      return StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        auto bits = static_cast<uint64_t>(n[i]);
        char text[64];
        int at = 64;
        do {
          text[--at] = static_cast<char>('0' + (bits & 1));
          bits >>= 1;
        } while (bits != 0);
        w->Append(std::string_view(text + at, static_cast<size_t>(64 - at)));
      });
    }
    case Op::kByteLength: {
      StringReader s = str(0);
      const int32_t scale = node.name == "bit_length" ? 8 : 1;
      return FixedKernel<int32_t>(node, args, rows, [&](int64_t i, int32_t* out) -> Result<bool> {
        *out = static_cast<int32_t>(s[i].size()) * scale;
        return true;
      });
    }
    case Op::kEncode:
    case Op::kDecode: {
      StringReader value = str(0);
      const std::string charset = AsciiUpper(args[1].column->View(0));
      std::string coded;
      Status malformed;
      Datum d = StringKernel(node, args, rows, [&](int64_t i, StringWriter* w) {
        const bool ok = node.op == Op::kEncode ? EncodeText(value[i], charset, &coded) : DecodeBytes(value[i], charset, &coded);
        if (!ok && malformed.ok()) {
          malformed = Status::Error(errors::kMalformedCharacterCoding,
                                    fmt::format("{} met {} that {} cannot {}", PrintBound(node),
                                                node.op == Op::kEncode ? "a character" : "bytes", charset,
                                                node.op == Op::kEncode ? "encode" : "decode"));
        }
        w->Append(coded);
      });
      if (!malformed.ok()) return malformed;
      return d;
    }
    case Op::kConv: {
      StringReader number = str(0);
      FixedReader<int32_t> from = ReadFixed<int32_t>(args[1]), to = ReadFixed<int32_t>(args[2]);
      AllValid valid(args);
      StringWriter writer(node.type, rows);
      for (int64_t i = 0; i < rows; ++i) {
        bool overflow = false;
        std::optional<std::string> converted = valid(i) ? ConvertBase(number[i], from[i], to[i], &overflow) : std::nullopt;
        if (overflow && node.mode == EvalMode::kAnsi) {
          return Status::Error(errors::kArithmeticOverflow,
                               fmt::format("the number '{}' of {} overflows 64 bits; set sql.ansi: false for its largest value",
                                           number[i], PrintBound(node)));
        }
        if (converted) {
          writer.Append(*converted);
        } else {
          writer.AppendNull();
        }
      }
      return Datum{writer.Finish(), false};
    }
    case Op::kElt: {
      // elt(n, s1, s2, ...): the n-th string (1-based); out of range NULL, or INVALID_ARRAY_INDEX in ANSI mode.
      FixedReader<int32_t> n = ReadFixed<int32_t>(args[0]);
      ValidityReader n_valid = ReadValidity(args[0]);
      const int64_t count = static_cast<int64_t>(args.size()) - 1;
      StringWriter writer(node.type, rows);
      for (int64_t i = 0; i < rows; ++i) {
        if (!n_valid(i)) {
          writer.AppendNull();
          continue;
        }
        if (n[i] < 1 || n[i] > count) {
          if (node.mode == EvalMode::kAnsi) {
            return AnsiError(errors::kInvalidArrayIndex, node,
                             fmt::format("the index {} is out of bounds: there are {} strings", n[i], count), "try_element_at");
          }
          writer.AppendNull();
          continue;
        }
        const Datum& chosen = args[static_cast<size_t>(n[i])];
        if (!ReadValidity(chosen)(i)) {
          writer.AppendNull();
        } else {
          writer.Append(ReadString(chosen)[i]);
        }
      }
      return Datum{writer.Finish(), false};
    }
    default: return Status::Error(errors::kInternalError, "not a string function");
  }
}

}  // namespace sluice::expr
