#include "sluice/engine/source.h"

namespace sluice::engine {

Result<std::vector<BatchPtr>> CollectPieces(const std::function<Status(const PieceConsumer&)>& read_pieces) {
  std::vector<BatchPtr> pieces;
  SLUICE_RETURN_IF_ERROR(read_pieces([&](BatchPtr piece) {
    pieces.push_back(std::move(piece));
    return Status::OK();
  }));
  return pieces;
}

Status Source::ReadPieces(const std::string& start, const std::string& end, const PieceConsumer& consume) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchPtr> pieces, Read(start, end));
  for (BatchPtr& piece : pieces) SLUICE_RETURN_IF_ERROR(consume(std::move(piece)));
  return Status::OK();
}

}  // namespace sluice::engine
