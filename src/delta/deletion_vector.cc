#include "sluice/delta/deletion_vector.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "delta/data_files.h"
#include "delta/uuid.h"
#include "sluice/core/error_classes.h"

namespace sluice::delta {
namespace {

constexpr uint32_t kMagic = 1681511377;
constexpr uint32_t kCookieNoRuns = 12346;
constexpr uint32_t kCookieRuns = 12347;
constexpr uint64_t kArrayLimit = 4096;  // a container of more values is a bitmap
constexpr size_t kBitmapBytes = 8192;
constexpr std::string_view kZ85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

Status Corrupt(std::string_view what) {
  return Status::Error(errors::kDeltaDeletionVectorCorrupt, fmt::format("deletion vector: {}", what));
}

template <typename T>
void PutLittle(T value, std::string* out) {
  for (size_t i = 0; i < sizeof(T); ++i) out->push_back(static_cast<char>((static_cast<uint64_t>(value) >> (8 * i)) & 0xFF));
}

void PutBig32(uint32_t value, std::string* out) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>((value >> shift) & 0xFF));
}

uint32_t Big32(std::string_view bytes) {
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

// Little-endian reads from a byte range that fail instead of reading past its end.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  template <typename T>
  Result<T> Little() {
    if (data_.size() - pos_ < sizeof(T)) return Corrupt("truncated");
    uint64_t value = 0;
    for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<uint64_t>(static_cast<unsigned char>(data_[pos_ + i])) << (8 * i);
    pos_ += sizeof(T);
    return static_cast<T>(value);
  }
  Result<std::string_view> Bytes(size_t n) {
    if (data_.size() - pos_ < n) return Corrupt("truncated");
    std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  size_t remaining() const { return data_.size() - pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// Appends [begin, end) to sorted ranges, merging with the last when they touch.
void AppendRange(uint64_t begin, uint64_t end, RowRanges* ranges) {
  if (!ranges->empty() && ranges->back().second >= begin) {
    ranges->back().second = std::max(ranges->back().second, end);
  } else {
    ranges->emplace_back(begin, end);
  }
}

// One standard 32-bit RoaringBitmap, its values offset by `high` (the bucket's high 32 bits).
Status ReadBitmap32(Reader* in, uint64_t high, RowRanges* rows) {
  SLUICE_ASSIGN_OR_RETURN(uint32_t cookie, in->Little<uint32_t>());
  uint32_t size = 0;
  std::string_view run_flags;
  bool offsets = true;
  if ((cookie & 0xFFFF) == kCookieRuns) {
    size = (cookie >> 16) + 1;
    SLUICE_ASSIGN_OR_RETURN(run_flags, in->Bytes((size + 7) / 8));
    offsets = size >= 4;
  } else if (cookie == kCookieNoRuns) {
    SLUICE_ASSIGN_OR_RETURN(size, in->Little<uint32_t>());
    if (size > 65536) return Corrupt("more than 65536 containers in a bitmap");
  } else {
    return Corrupt(fmt::format("unknown bitmap cookie {}", cookie));
  }
  std::vector<std::pair<uint16_t, uint32_t>> headers;  // key, cardinality
  for (uint32_t i = 0; i < size; ++i) {
    SLUICE_ASSIGN_OR_RETURN(uint16_t key, in->Little<uint16_t>());
    SLUICE_ASSIGN_OR_RETURN(uint16_t card_minus_one, in->Little<uint16_t>());
    if (!headers.empty() && key <= headers.back().first) return Corrupt("container keys out of order");
    headers.emplace_back(key, static_cast<uint32_t>(card_minus_one) + 1);
  }
  if (offsets) SLUICE_RETURN_IF_ERROR(in->Bytes(size_t{4} * size).status());
  for (uint32_t i = 0; i < size; ++i) {
    const uint64_t base = high | (static_cast<uint64_t>(headers[i].first) << 16);
    const uint32_t card = headers[i].second;
    const bool run = !run_flags.empty() && (static_cast<unsigned char>(run_flags[i / 8]) >> (i % 8)) & 1;
    uint64_t counted = 0;
    if (run) {
      SLUICE_ASSIGN_OR_RETURN(uint16_t runs, in->Little<uint16_t>());
      int64_t last_end = -1;
      for (uint16_t r = 0; r < runs; ++r) {
        SLUICE_ASSIGN_OR_RETURN(uint16_t start, in->Little<uint16_t>());
        SLUICE_ASSIGN_OR_RETURN(uint16_t length_minus_one, in->Little<uint16_t>());
        const uint32_t end = static_cast<uint32_t>(start) + length_minus_one + 1;
        if (end > 65536 || static_cast<int64_t>(start) <= last_end) return Corrupt("a run out of order or range");
        last_end = end;
        AppendRange(base + start, base + end, rows);
        counted += end - start;
      }
    } else if (card <= kArrayLimit) {
      int32_t last = -1;
      for (uint32_t v = 0; v < card; ++v) {
        SLUICE_ASSIGN_OR_RETURN(uint16_t low, in->Little<uint16_t>());
        if (static_cast<int32_t>(low) <= last) return Corrupt("array values out of order");
        last = low;
        AppendRange(base + low, base + low + 1, rows);
      }
      counted = card;
    } else {
      SLUICE_ASSIGN_OR_RETURN(std::string_view words, in->Bytes(kBitmapBytes));
      for (uint32_t bit = 0; bit < 65536; ++bit) {
        if ((static_cast<unsigned char>(words[bit / 8]) >> (bit % 8)) & 1) {
          AppendRange(base + bit, base + bit + 1, rows);
          ++counted;
        }
      }
    }
    if (counted != card) return Corrupt("a container's values differ from its count");
  }
  return Status::OK();
}

// The values of `rows` within the 32-bit bucket `high` and the 16-bit container `key`, as
// ranges of low 16 bits, from `*next` on (which moves past ranges that end in the container).
std::vector<std::pair<uint32_t, uint32_t>> ContainerRanges(const RowRanges& rows, uint64_t base, size_t* next) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  const uint64_t end = base + 65536;
  size_t i = *next;
  while (i < rows.size() && rows[i].first < end) {
    const uint64_t b = std::max(rows[i].first, base);
    const uint64_t e = std::min(rows[i].second, end);
    if (b < e) out.emplace_back(static_cast<uint32_t>(b - base), static_cast<uint32_t>(e - base));
    if (rows[i].second > end) break;  // the range goes on in the next container
    ++i;
  }
  *next = i;
  return out;
}

void WriteBitmap32(const RowRanges& rows, uint64_t high, std::string* out) {
  // The containers of this bucket: key and value ranges.
  std::vector<std::pair<uint16_t, std::vector<std::pair<uint32_t, uint32_t>>>> containers;
  size_t next = 0;
  uint64_t done = high;  // every value below this is in a container already
  while (next < rows.size() && rows[next].second <= high) ++next;
  while (next < rows.size()) {
    const uint64_t first = std::max(rows[next].first, done);
    if (first >= high + (uint64_t{1} << 32)) break;
    const uint64_t base = first & ~uint64_t{0xFFFF};
    auto ranges = ContainerRanges(rows, base, &next);
    if (!ranges.empty()) containers.emplace_back(static_cast<uint16_t>((base - high) >> 16), std::move(ranges));
    done = base + 65536;
  }
  const uint32_t size = static_cast<uint32_t>(containers.size());
  std::vector<uint8_t> kind(size);  // 0 array, 1 bitmap, 2 run
  std::vector<uint32_t> cards(size);
  bool any_run = false;
  for (uint32_t i = 0; i < size; ++i) {
    uint32_t card = 0;
    for (const auto& [b, e] : containers[i].second) card += e - b;
    cards[i] = card;
    const size_t run_bytes = 2 + 4 * containers[i].second.size();
    const size_t other_bytes = card <= kArrayLimit ? 2 * size_t{card} : kBitmapBytes;
    kind[i] = run_bytes < other_bytes ? 2 : card <= kArrayLimit ? 0 : 1;
    any_run = any_run || kind[i] == 2;
  }
  const bool offsets = !any_run || size >= 4;
  const size_t start = out->size();
  if (any_run) {
    PutLittle<uint32_t>(kCookieRuns | ((size - 1) << 16), out);
    std::string flags((size + 7) / 8, '\0');
    for (uint32_t i = 0; i < size; ++i) {
      if (kind[i] == 2) flags[i / 8] = static_cast<char>(flags[i / 8] | (1 << (i % 8)));
    }
    out->append(flags);
  } else {
    PutLittle<uint32_t>(kCookieNoRuns, out);
    PutLittle<uint32_t>(size, out);
  }
  for (uint32_t i = 0; i < size; ++i) {
    PutLittle<uint16_t>(containers[i].first, out);
    PutLittle<uint16_t>(static_cast<uint16_t>(cards[i] - 1), out);
  }
  // The offsets count from the start of this 32-bit bitmap.
  size_t position = out->size() - start + (offsets ? 4 * size_t{size} : 0);
  if (offsets) {
    for (uint32_t i = 0; i < size; ++i) {
      PutLittle<uint32_t>(static_cast<uint32_t>(position), out);
      position += kind[i] == 2 ? 2 + 4 * containers[i].second.size() : kind[i] == 0 ? 2 * size_t{cards[i]} : kBitmapBytes;
    }
  }
  for (uint32_t i = 0; i < size; ++i) {
    const auto& ranges = containers[i].second;
    if (kind[i] == 2) {
      PutLittle<uint16_t>(static_cast<uint16_t>(ranges.size()), out);
      for (const auto& [b, e] : ranges) {
        PutLittle<uint16_t>(static_cast<uint16_t>(b), out);
        PutLittle<uint16_t>(static_cast<uint16_t>(e - b - 1), out);
      }
    } else if (kind[i] == 0) {
      for (const auto& [b, e] : ranges) {
        for (uint32_t v = b; v < e; ++v) PutLittle<uint16_t>(static_cast<uint16_t>(v), out);
      }
    } else {
      std::string words(kBitmapBytes, '\0');
      for (const auto& [b, e] : ranges) {
        for (uint32_t v = b; v < e; ++v) words[v / 8] = static_cast<char>(words[v / 8] | (1 << (v % 8)));
      }
      out->append(words);
    }
  }
}

int Z85Value(char c) {
  size_t at = kZ85.find(c);
  return at == std::string_view::npos ? -1 : static_cast<int>(at);
}

// "af23c9d7-fff1-4a5a-a2c8-55c59bd782aa" from its 16 bytes, and back.
std::string UuidText(std::string_view bytes) {
  std::string hex;
  for (size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) hex += '-';
    hex += fmt::format("{:02x}", static_cast<unsigned char>(bytes[i]));
  }
  return hex;
}

std::string UuidBytes(std::string_view text) {
  std::string bytes;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '-') continue;
    bytes.push_back(static_cast<char>(std::stoi(std::string(text.substr(i, 2)), nullptr, 16)));
    ++i;
  }
  return bytes;
}

}  // namespace

RowRanges RangesOf(const std::vector<uint64_t>& sorted_rows) {
  RowRanges ranges;
  for (uint64_t row : sorted_rows) AppendRange(row, row + 1, &ranges);
  return ranges;
}

RowRanges UnionOf(const RowRanges& a, const RowRanges& b) {
  RowRanges all;
  all.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(all));
  RowRanges out;
  for (const auto& [begin, end] : all) AppendRange(begin, end, &out);
  return out;
}

uint64_t CountOf(const RowRanges& ranges) {
  uint64_t count = 0;
  for (const auto& [begin, end] : ranges) count += end - begin;
  return count;
}

std::string SerializeRowIndexes(const RowRanges& rows) {
  std::string out;
  PutLittle<uint32_t>(kMagic, &out);
  std::vector<uint64_t> buckets;
  for (const auto& [begin, end] : rows) {
    for (uint64_t high = begin >> 32; high <= (end - 1) >> 32; ++high) {
      if (buckets.empty() || buckets.back() != high) buckets.push_back(high);
    }
  }
  PutLittle<uint64_t>(buckets.size(), &out);
  for (uint64_t high : buckets) {
    PutLittle<uint32_t>(static_cast<uint32_t>(high), &out);
    WriteBitmap32(rows, high << 32, &out);
  }
  return out;
}

Result<RowRanges> DeserializeRowIndexes(std::string_view data) {
  Reader in(data);
  SLUICE_ASSIGN_OR_RETURN(uint32_t magic, in.Little<uint32_t>());
  if (magic != kMagic) return Corrupt(fmt::format("magic number {} instead of {}", magic, kMagic));
  SLUICE_ASSIGN_OR_RETURN(uint64_t buckets, in.Little<uint64_t>());
  // Each bucket takes at least 12 bytes: a count larger than the data is a lie.
  if (buckets > in.remaining() / 12) return Corrupt(fmt::format("{} buckets in {} bytes", buckets, in.remaining()));
  RowRanges rows;
  int64_t last_key = -1;
  for (uint64_t b = 0; b < buckets; ++b) {
    SLUICE_ASSIGN_OR_RETURN(uint32_t key, in.Little<uint32_t>());
    if (static_cast<int64_t>(key) <= last_key || key >= 0x80000000u) return Corrupt("bucket keys out of order or range");
    last_key = key;
    SLUICE_RETURN_IF_ERROR(ReadBitmap32(&in, static_cast<uint64_t>(key) << 32, &rows));
  }
  if (in.remaining() != 0) return Corrupt(fmt::format("{} bytes after the bitmap", in.remaining()));
  return rows;
}

std::string Z85Encode(std::string_view bytes) {
  std::string out;
  for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
    uint32_t value = Big32(bytes.substr(i, 4));
    char chunk[5];
    for (int k = 4; k >= 0; --k) {
      chunk[k] = kZ85[value % 85];
      value /= 85;
    }
    out.append(chunk, 5);
  }
  return out;
}

Result<std::string> Z85Decode(std::string_view text) {
  if (text.size() % 5 != 0) return Corrupt("Z85 text whose length is not a multiple of 5");
  std::string out;
  for (size_t i = 0; i < text.size(); i += 5) {
    uint64_t value = 0;
    for (size_t k = 0; k < 5; ++k) {
      int digit = Z85Value(text[i + k]);
      if (digit < 0) return Corrupt("a character outside Z85");
      value = value * 85 + static_cast<uint64_t>(digit);
    }
    if (value > 0xFFFFFFFFu) return Corrupt("a Z85 group above 2^32");
    PutBig32(static_cast<uint32_t>(value), &out);
  }
  return out;
}

Result<std::string> DeletionVectorFilePath(const std::string& table_path, const DeletionVectorDescriptor& descriptor) {
  if (descriptor.storage_type == "p") {
    SLUICE_ASSIGN_OR_RETURN(std::string path, DecodeFilePath(descriptor.path_or_inline_dv));
    if (path.starts_with("file://")) path = path.substr(7);
    if (path.starts_with("file:")) path = path.substr(5);
    if (!path.starts_with("/")) return Corrupt(fmt::format("'{}' is not an absolute path", descriptor.path_or_inline_dv));
    return path;
  }
  if (descriptor.storage_type != "u") {
    return Corrupt(fmt::format("storage type '{}' has no file", descriptor.storage_type));
  }
  const std::string& text = descriptor.path_or_inline_dv;
  if (text.size() < 20) return Corrupt(fmt::format("'{}' is shorter than a Z85 UUID", text));
  const std::string prefix = text.substr(0, text.size() - 20);
  for (char c : prefix) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return Corrupt(fmt::format("prefix '{}' is not letters and digits", prefix));
  }
  SLUICE_ASSIGN_OR_RETURN(std::string uuid, Z85Decode(std::string_view(text).substr(prefix.size())));
  return table_path + "/" + (prefix.empty() ? "" : prefix + "/") + "deletion_vector_" + UuidText(uuid) + ".bin";
}

Result<RowRanges> LoadDeletionVector(FileSystem& fs, const std::string& table_path,
                                     const DeletionVectorDescriptor& descriptor) {
  if (descriptor.size_in_bytes < 0 || descriptor.cardinality < 0) return Corrupt("a negative size or cardinality");
  const size_t size = static_cast<size_t>(descriptor.size_in_bytes);
  std::string data;
  if (descriptor.storage_type == "i") {
    SLUICE_ASSIGN_OR_RETURN(data, Z85Decode(descriptor.path_or_inline_dv));
    if (data.size() < size) return Corrupt("inline data shorter than its size");
    data.resize(size);
  } else {
    SLUICE_ASSIGN_OR_RETURN(std::string path, DeletionVectorFilePath(table_path, descriptor));
    const int64_t offset = descriptor.offset.value_or(1);
    if (offset < 1) return Corrupt("an offset before the file's data");
    SLUICE_ASSIGN_OR_RETURN(std::string file, fs.ReadFile(path));
    if (file.empty() || file[0] != 1) return Corrupt(fmt::format("'{}' is not a version 1 deletion vector file", path));
    if (file.size() < static_cast<size_t>(offset) + 8 + size) return Corrupt(fmt::format("'{}' is truncated", path));
    std::string_view frame = std::string_view(file).substr(static_cast<size_t>(offset));
    if (Big32(frame) != size) return Corrupt(fmt::format("'{}' holds {} bytes, the log says {}", path, Big32(frame), size));
    data = std::string(frame.substr(4, size));
    const uint32_t stored = Big32(frame.substr(4 + size));
    const uint32_t computed =
        static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
    if (stored != computed) return Corrupt(fmt::format("checksum mismatch in '{}'", path));
  }
  SLUICE_ASSIGN_OR_RETURN(RowRanges rows, DeserializeRowIndexes(data));
  if (CountOf(rows) != static_cast<uint64_t>(descriptor.cardinality)) {
    return Corrupt(fmt::format("{} rows where the log says {}", CountOf(rows), descriptor.cardinality));
  }
  return rows;
}

Result<DeletionVectorDescriptor> StoreDeletionVector(FileSystem& fs, const std::string& table_path,
                                                     const RowRanges& rows) {
  const std::string data = SerializeRowIndexes(rows);
  std::string file(1, '\1');
  PutBig32(static_cast<uint32_t>(data.size()), &file);
  file += data;
  PutBig32(static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size()))),
           &file);
  DeletionVectorDescriptor descriptor;
  descriptor.storage_type = "u";
  descriptor.path_or_inline_dv = Z85Encode(UuidBytes(NewUuid()));
  descriptor.offset = 1;
  descriptor.size_in_bytes = static_cast<int32_t>(data.size());
  descriptor.cardinality = static_cast<int64_t>(CountOf(rows));
  SLUICE_ASSIGN_OR_RETURN(std::string path, DeletionVectorFilePath(table_path, descriptor));
  SLUICE_RETURN_IF_ERROR(fs.PutIfAbsent(path, file));
  return descriptor;
}

}  // namespace sluice::delta
