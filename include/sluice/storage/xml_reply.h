// The XML replies of S3, STS and Azure Blob Storage, read as far as sluice needs them: the elements of known names,
// their text with XML's entities decoded. Not a general XML parser: a store's reply is a flat
// document of known shape. Outside bytes: everything here is fuzzed (xml_reply_fuzz.cc) and fails
// with IO_ERROR naming the reply, never crashes, on any input.
//
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/core/status.h"

namespace sluice::storage {

// The text of each `<tag>…</tag>` element (any depth, in document order), entities decoded. An
// element opened and never closed, or an entity that is not one of XML's five nor a character
// reference, is IO_ERROR.
Result<std::vector<std::string>> XmlElements(std::string_view xml, std::string_view tag);
// The first such element's text, or nullopt when there is none.
Result<std::optional<std::string>> XmlElement(std::string_view xml, std::string_view tag);

struct ListedObject {
  std::string key;
  int64_t size = 0;
  int64_t last_modified_ms = 0;
};

// One page of ListObjectsV2.
struct ListPage {
  std::vector<ListedObject> objects;
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  std::string next_continuation_token;
};
Result<ListPage> ParseListObjectsV2(std::string_view xml);
// One page of Azure's List Blobs: <Blob> names and sizes, <BlobPrefix> names as the common
// prefixes, and <NextMarker> as the continuation (truncated when it is not empty).
Result<ListPage> ParseListBlobs(std::string_view xml);

// The <Code> and <Message> of an error reply of S3 or Azure ("" when absent).
struct ErrorReply {
  std::string code;
  std::string message;
};
ErrorReply ParseErrorReply(std::string_view xml);

// "2009-10-12T17:50:30.000Z" (listings) and "Wed, 12 Oct 2009 17:50:30 GMT" (Last-Modified) as
// Unix milliseconds; nullopt when the text is neither.
std::optional<int64_t> ParseStoreTime(std::string_view text);

}  // namespace sluice::storage
