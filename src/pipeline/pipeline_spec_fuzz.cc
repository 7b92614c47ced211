// Feeds arbitrary text to the pipeline file loader and, when it parses, to the validator, which
// makes every source and sink without opening them and binds every expression. Any input may be
// refused, none may crash, hang or exhaust the stack (YAML nests, expressions chain).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sluice/connectors/register_formats.h"
#include "sluice/pipeline/pipeline_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // As `sluice validate` does: the parts that parsed cleanly are validated even when others did not.
  sluice::Status shape;
  auto spec = sluice::pipeline::ParsePipelineSpecKeepingGoing(text, &shape);
  if (spec.ok()) (void)sluice::pipeline::ValidatePipeline(*spec, sluice::connectors::AllFormatsRegistry());
  (void)sluice::pipeline::ParseStreamSpec(text);
  return 0;
}
