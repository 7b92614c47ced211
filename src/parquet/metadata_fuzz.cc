// Fuzzes the footer and page-header parsers and the schema conversion that follows them: any
// input must parse or fail with a Status, never crash, hang or over-allocate.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parquet/schema_conversion.h"
#include "sluice/parquet/metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto metadata = sluice::parquet::ParseFileMetaData(bytes);
  if (metadata.ok()) {
    auto schema = sluice::parquet::SchemaFromParquet(metadata->schema);
    (void)schema;
    std::string out;
    sluice::parquet::SerializeFileMetaData(*metadata, &out);
  }
  size_t header_size = 0;
  auto header = sluice::parquet::ParsePageHeader(bytes, &header_size);
  (void)header;
  return 0;
}
