#include "sluice/storage/xml_reply.h"

#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "sluice/core/civil_date.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/iso_datetime.h"

namespace sluice::storage {
namespace {

Status Malformed(std::string_view what) {
  return Status::Error(errors::kIoError, fmt::format("the object store's XML reply is malformed: {}", what));
}

void AppendUtf8(uint32_t code_point, std::string* out) {
  if (code_point < 0x80) {
    *out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    *out += static_cast<char>(0xC0 | (code_point >> 6));
    *out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    *out += static_cast<char>(0xE0 | (code_point >> 12));
    *out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (code_point >> 18));
    *out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

Result<std::string> DecodeText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    const size_t end = text.find(';', i);
    if (end == std::string_view::npos || end - i > 12) return Malformed("an entity is not closed by `;`");
    std::string_view entity = text.substr(i + 1, end - i - 1);
    if (entity == "amp") {
      out += '&';
    } else if (entity == "lt") {
      out += '<';
    } else if (entity == "gt") {
      out += '>';
    } else if (entity == "quot") {
      out += '"';
    } else if (entity == "apos") {
      out += '\'';
    } else if (entity.size() >= 2 && entity[0] == '#') {
      const bool hex = entity[1] == 'x' || entity[1] == 'X';
      std::string_view digits = entity.substr(hex ? 2 : 1);
      uint32_t code_point = 0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), code_point, hex ? 16 : 10);
      if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() || code_point == 0 ||
          code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) {
        return Malformed(fmt::format("`&{};` is not a character", entity));
      }
      AppendUtf8(code_point, &out);
    } else {
      return Malformed(fmt::format("unknown entity `&{};`", entity));
    }
    i = end;
  }
  return out;
}

// The element's text as written (no decoding), from the first occurrence at or after `from`.
struct Found {
  std::string_view inner;
  size_t end = 0;  // just past the closing tag
};

Result<std::optional<Found>> FindElement(std::string_view xml, std::string_view tag, size_t from) {
  const std::string open = fmt::format("<{}", tag);
  const std::string close = fmt::format("</{}>", tag);
  size_t at = from;
  while (true) {
    at = xml.find(open, at);
    if (at == std::string_view::npos) return std::optional<Found>();
    const size_t after_name = at + open.size();
    if (after_name < xml.size() && (xml[after_name] == '>' || xml[after_name] == ' ' || xml[after_name] == '/')) break;
    at = after_name;  // a longer name that starts with `tag`
  }
  const size_t open_end = xml.find('>', at);
  if (open_end == std::string_view::npos) return Malformed(fmt::format("<{}> is not closed", tag));
  if (xml[open_end - 1] == '/') return std::optional<Found>(Found{{}, open_end + 1});  // <Tag/>
  const size_t close_at = xml.find(close, open_end + 1);
  if (close_at == std::string_view::npos) return Malformed(fmt::format("<{}> has no </{}>", tag, tag));
  return std::optional<Found>(Found{xml.substr(open_end + 1, close_at - open_end - 1), close_at + close.size()});
}

Result<std::vector<std::string_view>> RawElements(std::string_view xml, std::string_view tag) {
  std::vector<std::string_view> out;
  size_t from = 0;
  while (true) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<Found> found, FindElement(xml, tag, from));
    if (!found) return out;
    out.push_back(found->inner);
    from = found->end;
  }
}

Result<int64_t> ParseCount(std::string_view text, std::string_view what) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 0) {
    return Malformed(fmt::format("{} `{}` is not a size", what, text.substr(0, 40)));
  }
  return value;
}

// The element names of one store's listing.
struct ListingShape {
  std::string_view root;          // the document's element
  std::string_view entry;         // one object
  std::string_view key;           // its name, inside the entry
  std::string_view size;          // its size in bytes
  std::string_view modified;      // its modification time
  std::string_view prefix_entry;  // one common prefix (a folder)
  std::string_view prefix_key;    // its name, inside the prefix entry
};

// The objects and common prefixes of a listing page (the continuation is the caller's).
Result<ListPage> ParseListing(std::string_view xml, const ListingShape& shape) {
  if (xml.find(fmt::format("<{}", shape.root)) == std::string_view::npos) {
    return Malformed(fmt::format("no <{}>", shape.root));
  }
  ListPage page;
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string_view> entries, RawElements(xml, shape.entry));
  for (std::string_view entry : entries) {
    ListedObject object;
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> key, XmlElement(entry, shape.key));
    if (!key) return Malformed(fmt::format("a <{}> without <{}>", shape.entry, shape.key));
    object.key = std::move(*key);
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> size, XmlElement(entry, shape.size));
    if (size) {
      SLUICE_ASSIGN_OR_RETURN(object.size, ParseCount(*size, shape.size));
    }
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> modified, XmlElement(entry, shape.modified));
    if (modified) object.last_modified_ms = ParseStoreTime(*modified).value_or(0);
    page.objects.push_back(std::move(object));
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string_view> prefixes, RawElements(xml, shape.prefix_entry));
  for (std::string_view entry : prefixes) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> prefix, XmlElement(entry, shape.prefix_key));
    if (!prefix) return Malformed(fmt::format("a <{}> without <{}>", shape.prefix_entry, shape.prefix_key));
    page.common_prefixes.push_back(std::move(*prefix));
  }
  return page;
}

}  // namespace

Result<std::vector<std::string>> XmlElements(std::string_view xml, std::string_view tag) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string_view> raw, RawElements(xml, tag));
  std::vector<std::string> out;
  out.reserve(raw.size());
  for (std::string_view text : raw) {
    SLUICE_ASSIGN_OR_RETURN(std::string decoded, DecodeText(text));
    out.push_back(std::move(decoded));
  }
  return out;
}

Result<std::optional<std::string>> XmlElement(std::string_view xml, std::string_view tag) {
  SLUICE_ASSIGN_OR_RETURN(std::optional<Found> found, FindElement(xml, tag, 0));
  if (!found) return std::optional<std::string>();
  SLUICE_ASSIGN_OR_RETURN(std::string decoded, DecodeText(found->inner));
  return std::optional<std::string>(std::move(decoded));
}

Result<ListPage> ParseListObjectsV2(std::string_view xml) {
  SLUICE_ASSIGN_OR_RETURN(ListPage page,
                          ParseListing(xml, {"ListBucketResult", "Contents", "Key", "Size", "LastModified",
                                             "CommonPrefixes", "Prefix"}));
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> truncated, XmlElement(xml, "IsTruncated"));
  page.truncated = truncated && *truncated == "true";
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> token, XmlElement(xml, "NextContinuationToken"));
  if (token) page.next_continuation_token = std::move(*token);
  if (page.truncated && page.next_continuation_token.empty()) {
    return Malformed("a truncated listing without <NextContinuationToken>");
  }
  return page;
}

Result<ListPage> ParseListBlobs(std::string_view xml) {
  SLUICE_ASSIGN_OR_RETURN(ListPage page, ParseListing(xml, {"EnumerationResults", "Blob", "Name", "Content-Length",
                                                            "Last-Modified", "BlobPrefix", "Name"}));
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> marker, XmlElement(xml, "NextMarker"));
  if (marker && !marker->empty()) {
    page.truncated = true;
    page.next_continuation_token = std::move(*marker);
  }
  return page;
}

ErrorReply ParseErrorReply(std::string_view xml) {
  ErrorReply reply;
  Result<std::optional<std::string>> code = XmlElement(xml, "Code");
  if (code.ok() && code->has_value()) reply.code = **code;
  Result<std::optional<std::string>> message = XmlElement(xml, "Message");
  if (message.ok() && message->has_value()) reply.message = **message;
  return reply;
}

std::optional<int64_t> ParseStoreTime(std::string_view text) {
  int64_t micros = 0;
  if (ParseIsoTimestamp(text, &micros)) return micros / 1000;
  // RFC 7231's IMF-fixdate: "Wed, 12 Oct 2009 17:50:30 GMT".
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (text.size() != 29 || text.substr(25) != " GMT" || text[3] != ',') return std::nullopt;
  auto number = [&](size_t at, size_t length) -> std::optional<int> {
    int value = 0;
    auto [ptr, ec] = std::from_chars(text.data() + at, text.data() + at + length, value);
    if (ec != std::errc() || ptr != text.data() + at + length) return std::nullopt;
    return value;
  };
  std::optional<int> day = number(5, 2), year = number(12, 4), hour = number(17, 2), minute = number(20, 2),
                     second = number(23, 2);
  int month = 0;
  while (month < 12 && text.substr(8, 3) != kMonths[month]) ++month;
  if (!day || !year || !hour || !minute || !second || month == 12 || *day < 1 || *day > 31 || *hour > 23 ||
      *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  const int64_t days = DaysFromCivil(*year, month + 1, *day);
  return ((days * 24 + *hour) * 60 + *minute) * 60000 + int64_t{*second} * 1000;
}

}  // namespace sluice::storage
