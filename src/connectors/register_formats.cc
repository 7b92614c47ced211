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

}  // namespace sluice::connectors
