// A source that has one batch of data and reads it whole, once: a query result, a set of files,
// a table's snapshot. Its offsets are `{"read":false}` (initial) and `{"read":true}`, so a
// query with trigger `once` reads everything in its first batch, a replay of that batch reads it
// again, and a later run reads nothing.
//
// Subclasses implement ReadAll(), or ReadAllPieces() when they read in pieces (each defaults to
// the other); like every Source, one is used by one query thread at a time.
#pragma once

#include <string>
#include <vector>

#include "sluice/engine/source.h"

namespace sluice::engine {

class ReadOnceSource : public Source {
 public:
  Result<std::string> InitialOffset() final;
  // SOURCE_OFFSET_INVALID for an offset that is neither of the two.
  Result<std::string> LatestOffset(const std::string& start, const ReadLimit& limit) final;
  // Everything (ReadAll) from unread to read, nothing for an empty range.
  Result<std::vector<BatchPtr>> Read(const std::string& start, const std::string& end) final;
  // Read() piece by piece (ReadAllPieces).
  Status ReadPieces(const std::string& start, const std::string& end, const PieceConsumer& consume) final;
  Status Commit(const std::string& end) final;

 protected:
  // Every row of the source. By default, the pieces of ReadAllPieces().
  virtual Result<std::vector<BatchPtr>> ReadAll();
  // Every row of the source, each piece handed to `consume` as it is read (the contract of
  // Source::ReadPieces). By default, the pieces of ReadAll().
  virtual Status ReadAllPieces(const PieceConsumer& consume);

 private:
  Status CheckOffset(const std::string& offset) const;
};

}  // namespace sluice::engine
