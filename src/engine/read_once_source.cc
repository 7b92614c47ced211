#include "sluice/engine/read_once_source.h"

#include <string_view>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"

namespace sluice::engine {
namespace {

constexpr std::string_view kUnread = R"({"read":false})";
constexpr std::string_view kRead = R"({"read":true})";

}  // namespace

Result<std::string> ReadOnceSource::InitialOffset() { return std::string(kUnread); }

Result<std::string> ReadOnceSource::LatestOffset(const std::string& start, const ReadLimit&) {
  SLUICE_RETURN_IF_ERROR(CheckOffset(start));
  return std::string(kRead);
}

Result<std::vector<BatchPtr>> ReadOnceSource::Read(const std::string& start, const std::string& end) {
  SLUICE_RETURN_IF_ERROR(CheckOffset(start));
  SLUICE_RETURN_IF_ERROR(CheckOffset(end));
  if (start == end) return std::vector<BatchPtr>{};
  return ReadAll();
}

Status ReadOnceSource::ReadPieces(const std::string& start, const std::string& end, const PieceConsumer& consume) {
  SLUICE_RETURN_IF_ERROR(CheckOffset(start));
  SLUICE_RETURN_IF_ERROR(CheckOffset(end));
  if (start == end) return Status::OK();
  return ReadAllPieces(consume);
}

Result<std::vector<BatchPtr>> ReadOnceSource::ReadAll() {
  return CollectPieces([this](const PieceConsumer& consume) { return ReadAllPieces(consume); });
}

Status ReadOnceSource::ReadAllPieces(const PieceConsumer& consume) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchPtr> pieces, ReadAll());
  for (BatchPtr& piece : pieces) SLUICE_RETURN_IF_ERROR(consume(std::move(piece)));
  return Status::OK();
}

Status ReadOnceSource::Commit(const std::string&) { return Status::OK(); }

Status ReadOnceSource::CheckOffset(const std::string& offset) const {
  if (offset == kUnread || offset == kRead) return Status::OK();
  return Status::Error(errors::kSourceOffsetInvalid,
                       fmt::format("{}: offset `{}` is not {} or {}", description(), offset, kUnread, kRead));
}

}  // namespace sluice::engine
