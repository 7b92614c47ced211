// Feeds arbitrary bytes to the replication frame and pgoutput parsers, in and out of streamed
// transactions. Any crash, over-read (ASan) or undefined behaviour (UBSan) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sluice/connectors/pgoutput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  sluice::connectors::PgOutputMessage message;
  (void)sluice::connectors::ParsePgOutputMessage(bytes, false, &message);
  (void)sluice::connectors::ParsePgOutputMessage(bytes, true, &message);
  auto frame = sluice::connectors::ParseReplicationFrame(bytes);
  if (frame.ok() && frame->kind == sluice::connectors::ReplicationFrame::Kind::kXLogData) {
    (void)sluice::connectors::ParsePgOutputMessage(frame->xlog.payload, false, &message);
  }
  return 0;
}
