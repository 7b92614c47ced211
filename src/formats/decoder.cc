#include "sluice/formats/decoder.h"

namespace sluice::formats {

Decoder::~Decoder() = default;

}  // namespace sluice::formats
