// Deletion vectors (PROTOCOL.md "Deletion Vectors", "Deletion Vector Format"): the rows of a data
// file that are no longer in the table, as the positions (0-based row indexes in the file) of a
// 64-bit RoaringBitmap. A logical file is its data file minus the rows of its deletion vector.
//
// The serialized form ("bitmapData") is the magic number 1681511377 (little endian) followed by
// the portable 64-bit RoaringBitmap format: a bucket count, then per bucket its high 32 bits and
// a standard 32-bit RoaringBitmap (array, bitmap and run containers are read; array and bitmap
// containers are written). A vector is stored inline in the log (storageType `i`, Z85 text) or in
// a file of the table (`u`: `<prefix>/deletion_vector_<uuid>.bin`, named by the Z85 of the UUID;
// `p`: an absolute path), where it is framed by its size and a CRC-32 (big endian).
//
// Errors: DELTA_DELETION_VECTOR_CORRUPT for bytes that are not a deletion vector (bad magic,
// truncated or inconsistent containers, unsorted keys, a checksum or size that does not match
// the descriptor, a cardinality that differs), IO errors of the file. Functions are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/core/file_system.h"
#include "sluice/delta/actions.h"

namespace sluice::delta {

// Row indexes as sorted, disjoint, non-adjacent half-open ranges [begin, end): a run of deleted
// rows is one entry however long, so what a vector decodes to is bounded by its size in bytes.
using RowRanges = std::vector<std::pair<uint64_t, uint64_t>>;
// The ranges of sorted, distinct row indexes.
RowRanges RangesOf(const std::vector<uint64_t>& sorted_rows);
// The rows of `a` and of `b`.
RowRanges UnionOf(const RowRanges& a, const RowRanges& b);
// How many rows the ranges hold.
uint64_t CountOf(const RowRanges& ranges);

// The bitmapData of `rows` (row indexes below 2^63).
std::string SerializeRowIndexes(const RowRanges& rows);
// The rows of a bitmapData.
Result<RowRanges> DeserializeRowIndexes(std::string_view data);

// Z85 (ZeroMQ's base85) of bytes whose length is a multiple of 4, and back (text whose length is
// a multiple of 5; DELTA_DELETION_VECTOR_CORRUPT otherwise or for characters outside Z85).
std::string Z85Encode(std::string_view bytes);
Result<std::string> Z85Decode(std::string_view text);

// The rows a file's deletion vector deletes, read from the log (inline) or its file; their count
// must be the descriptor's cardinality.
Result<RowRanges> LoadDeletionVector(FileSystem& fs, const std::string& table_path,
                                                 const DeletionVectorDescriptor& descriptor);

// Writes `rows` (not empty) as a new deletion vector file of the table and returns its
// descriptor (storageType `u`, no prefix, offset 1). The file is visible to readers only once a
// commit refers to it; until then it is an orphan like an uncommitted data file.
Result<DeletionVectorDescriptor> StoreDeletionVector(FileSystem& fs, const std::string& table_path,
                                                     const RowRanges& rows);

// The path of a deletion vector file (`u` or `p`); DELTA_DELETION_VECTOR_CORRUPT for an inline
// vector or a `u` descriptor whose UUID text is not 20 Z85 characters after a prefix of letters
// and digits.
Result<std::string> DeletionVectorFilePath(const std::string& table_path, const DeletionVectorDescriptor& descriptor);

}  // namespace sluice::delta
