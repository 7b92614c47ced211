// libFuzzer target for the object stores' XML replies (listings, errors, STS credentials): any
// input either parses or fails with a Status; whatever parses keeps its promises (a truncated
// listing has a continuation token, sizes are not negative).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sluice/storage/xml_reply.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto page = sluice::storage::ParseListObjectsV2(text);
  if (page.ok()) {
    if (page->truncated && page->next_continuation_token.empty()) std::abort();
    for (const auto& object : page->objects) {
      if (object.size < 0) std::abort();
    }
  }
  auto blobs = sluice::storage::ParseListBlobs(text);
  if (blobs.ok()) {
    if (blobs->truncated && blobs->next_continuation_token.empty()) std::abort();
    for (const auto& object : blobs->objects) {
      if (object.size < 0) std::abort();
    }
  }
  (void)sluice::storage::ParseErrorReply(text);
  (void)sluice::storage::XmlElements(text, "AccessKeyId");
  (void)sluice::storage::ParseStoreTime(text.substr(0, 64));
  return 0;
}
