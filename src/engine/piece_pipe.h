// Moving one batch from a source to a sink's BatchWriter in pieces, the source reading the next
// piece while the writer takes the previous one. Private to the engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sluice/engine/sink.h"
#include "sluice/engine/source.h"

namespace sluice::engine {

// At most this many pieces wait between the source and the writer; with the piece the source
// fills and the one the writer takes, a batch holds about four pieces in memory at a time.
constexpr size_t kPiecesInFlight = 2;

struct PipeOutcome {
  Status read;    // the source's error, or OK
  Status write;   // the writer's first error from Add, or OK
  int64_t rows = 0;
};

// Runs source.ReadPieces(start, end) on the calling thread and writer.Add for each piece, in
// order, on a thread of its own, with at most `capacity` pieces between them. When the writer
// fails the source is stopped (its read returns the writer's error); when the source fails, the
// pieces not yet added are dropped. Returns once both sides have stopped; Commit is the caller's.
PipeOutcome PipePieces(Source& source, const std::string& start, const std::string& end, BatchWriter& writer,
                       size_t capacity = kPiecesInFlight);

}  // namespace sluice::engine
