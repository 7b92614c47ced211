#include "sluice/connectors/register_formats.h"

#include "sluice/connectors/delta/formats.h"
#include "sluice/connectors/files/formats.h"
#include "sluice/connectors/kafka_source.h"
#include "sluice/connectors/pg_batch_source.h"
#include "sluice/connectors/postgres_sink.h"

namespace sluice::connectors {

Status RegisterAllFormats(engine::Registry* registry) {
  SLUICE_RETURN_IF_ERROR(engine::RegisterBuiltinFormats(registry));
  SLUICE_RETURN_IF_ERROR(RegisterDeltaFormats(registry));
  SLUICE_RETURN_IF_ERROR(RegisterFileFormats(registry));
  SLUICE_RETURN_IF_ERROR(RegisterKafkaSource(registry));
  SLUICE_RETURN_IF_ERROR(RegisterPostgresBatchSource(registry));
  return RegisterPostgresSink(registry);
}

engine::Registry& AllFormatsRegistry() {
  static engine::Registry* registry = [] {
    auto* made = new engine::Registry();
    // The names of the formats are distinct, so registration cannot fail.
    (void)RegisterAllFormats(made);
    return made;
  }();
  return *registry;
}

}  // namespace sluice::connectors
