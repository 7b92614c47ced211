#include "sluice/connectors/register_formats.h"

#include "sluice/connectors/kafka_source.h"
#include "sluice/connectors/pg_batch_source.h"
#include "sluice/connectors/postgres_sink.h"

namespace sluice::connectors {

Status RegisterConnectorFormats(engine::Registry* registry) {
  SLUICE_RETURN_IF_ERROR(RegisterKafkaSource(registry));
  SLUICE_RETURN_IF_ERROR(RegisterPostgresBatchSource(registry));
  return RegisterPostgresSink(registry);
}

engine::Registry& AllFormatsRegistry() {
  static engine::Registry* registry = [] {
    auto* made = new engine::Registry();
    // The names of the built-ins and the connectors are distinct, so registration cannot fail.
    (void)engine::RegisterBuiltinFormats(made);
    (void)RegisterConnectorFormats(made);
    return made;
  }();
  return *registry;
}

}  // namespace sluice::connectors
