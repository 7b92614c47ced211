#include "parquet/column_writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "sluice/core/error_classes.h"

namespace sluice::parquet {

namespace {

// Pages are closed (if full) after at most this many entries, extended to the end of a row.
constexpr int64_t kEntriesPerStep = 512;

// A chunk's first values tell whether a dictionary can pay off: when at least 90% of the first
// kDictionaryTrialValues are distinct, the chunk is written PLAIN (as a unique id or timestamp
// column would otherwise fill a dictionary up to its size limit first).
constexpr size_t kDictionaryTrialValues = 16384;
constexpr int kDistinctPercentForPlain = 90;

template <typename P, typename S>
void Gather(const Column& column, const int64_t* rows, int64_t count, std::vector<P>* out) {
  out->resize(count);
  const S* values = column.values<S>();
  P* dst = out->data();
  for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<P>(values[rows[i]]);
}

template <typename T>
void MinMax(const std::vector<T>& values, T* min, T* max) {
  T lo = values[0], hi = values[0];
  for (T v : values) {
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  *min = lo;
  *max = hi;
}

// NaN has no place in an order: bounds are computed over the other values. False when every
// value is NaN.
template <typename T>
bool MinMaxIgnoringNaN(const std::vector<T>& values, T* min, T* max) {
  bool any = false;
  T lo = 0, hi = 0;
  for (T v : values) {
    if (std::isnan(v)) continue;
    if (!any) {
      lo = hi = v;
      any = true;
    }
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  *min = lo;
  *max = hi;
  return any;
}

void AppendLittleEndian(const void* value, size_t size, std::string* out) {
  out->append(static_cast<const char*>(value), size);
}

void AppendBigEndian(int128_t value, int width, std::string* out) {
  char bytes[16];
  for (int i = 0; i < width; ++i) bytes[width - 1 - i] = static_cast<char>(static_cast<uint8_t>(value >> (8 * i)));
  out->append(bytes, width);
}

int PhysicalWidth(const SchemaElement& e) {
  switch (*e.type) {
    case Type::kBoolean: return 1;
    case Type::kInt32:
    case Type::kFloat: return 4;
    case Type::kInt64:
    case Type::kDouble: return 8;
    case Type::kFixedLenByteArray: return *e.type_length;
    default: return 0;
  }
}

}  // namespace

ColumnWriter::ColumnWriter(const LeafColumn& leaf, const WriterOptions& options)
    : leaf_(leaf),
      options_(options),
      physical_(*leaf.element.type),
      width_(PhysicalWidth(leaf.element)),
      use_dictionary_(options.dictionary && physical_ != Type::kBoolean),
      def_encoder_(BitWidthFor(static_cast<uint64_t>(leaf.max_definition_level))),
      rep_encoder_(BitWidthFor(static_cast<uint64_t>(leaf.max_repetition_level))),
      dictionary_(physical_ == Type::kByteArray ? 0 : width_) {}

Status ColumnWriter::Append(const LeafEntries& entries) {
  const int64_t n = static_cast<int64_t>(entries.def_levels.size());
  const int16_t max_def = leaf_.max_definition_level;
  const int16_t* def = entries.def_levels.data();
  const int16_t* rep = entries.rep_levels.data();
  int64_t level = 0, value = 0;
  while (level < n) {
    int64_t end = std::min(level + kEntriesPerStep, n);
    if (leaf_.max_repetition_level > 0) {
      while (end < n && rep[end] != 0) ++end;
    }
    int64_t values = 0;
    for (int64_t i = level; i < end; ++i) values += def[i] == max_def;
    SLUICE_RETURN_IF_ERROR(AppendRange(entries, level, end, value, value + values));
    level = end;
    value += values;
  }
  return Status::OK();
}

Status ColumnWriter::AppendRange(const LeafEntries& entries, int64_t level_begin, int64_t level_end,
                                 int64_t value_begin, int64_t value_end) {
  const int16_t max_def = leaf_.max_definition_level;
  if (max_def > 0) {
    for (int64_t i = level_begin; i < level_end; ++i) def_encoder_.Put(static_cast<uint64_t>(entries.def_levels[i]));
  }
  if (leaf_.max_repetition_level > 0) {
    for (int64_t i = level_begin; i < level_end; ++i) rep_encoder_.Put(static_cast<uint64_t>(entries.rep_levels[i]));
  }
  int64_t levels = level_end - level_begin;
  int64_t values = value_end - value_begin;
  page_levels_ += levels;
  page_values_ += values;
  chunk_levels_ += levels;
  chunk_nulls_ += levels - values;
  if (values > 0) AppendValues(*entries.column, entries.value_rows.data() + value_begin, values);

  if (use_dictionary_ && dictionary_page_count_ == 0 && page_indices_.size() >= kDictionaryTrialValues &&
      static_cast<size_t>(dictionary_.size()) * 100 >= page_indices_.size() * kDistinctPercentForPlain) {
    DropDictionary();
  }
  if (PageValueBytes() >= options_.page_size) SLUICE_RETURN_IF_ERROR(FinishPage());
  if (use_dictionary_ && dictionary_.plain_size() > options_.dictionary_size_limit) {
    // Fall back to PLAIN for the rest of the chunk; pages so far keep the dictionary.
    SLUICE_RETURN_IF_ERROR(FinishPage());
    use_dictionary_ = false;
  }
  return Status::OK();
}

void ColumnWriter::DropDictionary() {
  for (uint32_t index : page_indices_) {
    std::string_view value = dictionary_.value(index);
    if (physical_ == Type::kByteArray) {
      PlainAppendByteArray(value, &page_plain_);
    } else {
      page_plain_.append(value);
    }
  }
  page_indices_.clear();
  dictionary_.Clear();
  use_dictionary_ = false;
}

void ColumnWriter::AppendValues(const Column& column, const int64_t* rows, int64_t count) {
  switch (leaf_.type->id()) {
    case TypeId::kBoolean: {
      const uint8_t* values = column.values<uint8_t>();
      int64_t lo = 1, hi = 0;
      for (int64_t i = 0; i < count; ++i) {
        uint8_t v = values[rows[i]] != 0;
        bool_values_.push_back(v);
        lo = std::min<int64_t>(lo, v);
        hi = std::max<int64_t>(hi, v);
      }
      UpdateInts(&chunk_bounds_, lo, hi);
      return;
    }
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInteger:
    case TypeId::kDate: {
      TypeId id = leaf_.type->id();
      if (id == TypeId::kByte) {
        Gather<int32_t, int8_t>(column, rows, count, &int32_values_);
      } else if (id == TypeId::kShort) {
        Gather<int32_t, int16_t>(column, rows, count, &int32_values_);
      } else {
        Gather<int32_t, int32_t>(column, rows, count, &int32_values_);
      }
      int32_t lo, hi;
      MinMax(int32_values_, &lo, &hi);
      UpdateInts(&chunk_bounds_, lo, hi);
      EncodeFixed(reinterpret_cast<const char*>(int32_values_.data()), count);
      return;
    }
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: {
      Gather<int64_t, int64_t>(column, rows, count, &int64_values_);
      int64_t lo, hi;
      MinMax(int64_values_, &lo, &hi);
      UpdateInts(&chunk_bounds_, lo, hi);
      EncodeFixed(reinterpret_cast<const char*>(int64_values_.data()), count);
      return;
    }
    case TypeId::kFloat: {
      Gather<float, float>(column, rows, count, &float_values_);
      float lo, hi;
      if (MinMaxIgnoringNaN(float_values_, &lo, &hi)) UpdateFloats(&chunk_bounds_, lo, hi);
      EncodeFixed(reinterpret_cast<const char*>(float_values_.data()), count);
      return;
    }
    case TypeId::kDouble: {
      Gather<double, double>(column, rows, count, &double_values_);
      double lo, hi;
      if (MinMaxIgnoringNaN(double_values_, &lo, &hi)) UpdateFloats(&chunk_bounds_, lo, hi);
      EncodeFixed(reinterpret_cast<const char*>(double_values_.data()), count);
      return;
    }
    case TypeId::kDecimal: {
      if (physical_ == Type::kInt32) {
        Gather<int32_t, int128_t>(column, rows, count, &int32_values_);
        int32_t lo, hi;
        MinMax(int32_values_, &lo, &hi);
        UpdateInts(&chunk_bounds_, lo, hi);
        EncodeFixed(reinterpret_cast<const char*>(int32_values_.data()), count);
      } else if (physical_ == Type::kInt64) {
        Gather<int64_t, int128_t>(column, rows, count, &int64_values_);
        int64_t lo, hi;
        MinMax(int64_values_, &lo, &hi);
        UpdateInts(&chunk_bounds_, lo, hi);
        EncodeFixed(reinterpret_cast<const char*>(int64_values_.data()), count);
      } else {
        const int128_t* values = column.values<int128_t>();
        fixed_values_.clear();
        int128_t lo = values[rows[0]], hi = lo;
        for (int64_t i = 0; i < count; ++i) {
          int128_t v = values[rows[i]];
          lo = v < lo ? v : lo;
          hi = v > hi ? v : hi;
          AppendBigEndian(v, width_, &fixed_values_);
        }
        UpdateDecimals(&chunk_bounds_, lo, hi);
        EncodeFixed(fixed_values_.data(), count);
      }
      return;
    }
    case TypeId::kString:
    case TypeId::kBinary: {
      byte_array_values_.resize(count);
      std::string_view lo = column.View(rows[0]), hi = lo;
      for (int64_t i = 0; i < count; ++i) {
        std::string_view v = column.View(rows[i]);
        byte_array_values_[i] = v;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
      UpdateBytes(&chunk_bounds_, lo, hi);
      EncodeByteArrays();
      return;
    }
    default:
      return;  // nested types never reach a leaf
  }
}

void ColumnWriter::EncodeFixed(const char* data, int64_t count) {
  if (use_dictionary_) {
    size_t start = page_indices_.size();
    page_indices_.resize(start + count);
    uint32_t* out = page_indices_.data() + start;
    for (int64_t i = 0; i < count; ++i) out[i] = dictionary_.IndexOf(std::string_view(data + i * width_, width_));
  } else {
    page_plain_.append(data, static_cast<size_t>(count * width_));
  }
}

void ColumnWriter::EncodeByteArrays() {
  if (use_dictionary_) {
    for (std::string_view v : byte_array_values_) page_indices_.push_back(dictionary_.IndexOf(v));
  } else {
    for (std::string_view v : byte_array_values_) PlainAppendByteArray(v, &page_plain_);
  }
}

void ColumnWriter::UpdateInts(Bounds* b, int64_t min, int64_t max) const {
  if (!b->present) {
    b->present = true;
    b->min_int = min;
    b->max_int = max;
    return;
  }
  b->min_int = std::min(b->min_int, min);
  b->max_int = std::max(b->max_int, max);
}

void ColumnWriter::UpdateFloats(Bounds* b, double min, double max) const {
  if (!b->present) {
    b->present = true;
    b->min_float = min;
    b->max_float = max;
    return;
  }
  b->min_float = std::min(b->min_float, min);
  b->max_float = std::max(b->max_float, max);
}

void ColumnWriter::UpdateDecimals(Bounds* b, int128_t min, int128_t max) const {
  if (!b->present) {
    b->present = true;
    b->min_dec = min;
    b->max_dec = max;
    return;
  }
  b->min_dec = min < b->min_dec ? min : b->min_dec;
  b->max_dec = max > b->max_dec ? max : b->max_dec;
}

void ColumnWriter::UpdateBytes(Bounds* b, std::string_view min, std::string_view max) const {
  // std::string_view compares bytes as unsigned char: the order Parquet defines for byte arrays.
  if (!b->present || min < b->min_bytes) b->min_bytes.assign(min);
  if (!b->present || max > b->max_bytes) b->max_bytes.assign(max);
  b->present = true;
}

void ColumnWriter::MergeInto(Bounds* into, const Bounds& from) const {
  if (!from.present) return;
  switch (physical_) {
    case Type::kFloat:
    case Type::kDouble: UpdateFloats(into, from.min_float, from.max_float); return;
    case Type::kFixedLenByteArray: UpdateDecimals(into, from.min_dec, from.max_dec); return;
    case Type::kByteArray: UpdateBytes(into, from.min_bytes, from.max_bytes); return;
    default: UpdateInts(into, from.min_int, from.max_int); return;
  }
}

int64_t ColumnWriter::PageValueBytes() const {
  if (physical_ == Type::kBoolean) return static_cast<int64_t>(bool_values_.size() / 8);
  if (use_dictionary_) {
    int width = std::max(1, BitWidthFor(static_cast<uint64_t>(std::max(dictionary_.size(), 1) - 1)));
    return static_cast<int64_t>(page_indices_.size()) * width / 8;
  }
  return static_cast<int64_t>(page_plain_.size());
}

int64_t ColumnWriter::EstimatedSize() const {
  int64_t dictionary = dictionary_pages_ || use_dictionary_ ? dictionary_.plain_size() : 0;
  return chunk_bytes_ + PageValueBytes() + dictionary;
}

Status ColumnWriter::WritePage(std::string_view body, int64_t num_values, Encoding encoding, PageType type,
                               CompressionBuffer* scratch) {
  if (body.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return Status::Error(errors::kInvalidArgument, "a page of column '" + leaf_.path[0] +
                                                       "' would exceed 2 GiB: a single row holds too much data");
  }
  SLUICE_ASSIGN_OR_RETURN(compressed_, CompressPage(options_.compression, options_.zstd_level, body, scratch));
  PageHeader header;
  header.type = type;
  header.uncompressed_page_size = static_cast<int32_t>(body.size());
  header.compressed_page_size = static_cast<int32_t>(compressed_.size());
  if (type == PageType::kDataPage) {
    DataPageHeader& d = header.data_page_header.emplace();
    d.num_values = static_cast<int32_t>(num_values);
    d.encoding = encoding;
  } else {
    DictionaryPageHeader& d = header.dictionary_page_header.emplace();
    d.num_values = static_cast<int32_t>(num_values);
    d.encoding = encoding;
  }
  header_.clear();
  SerializePageHeader(header, &header_);
  return Status::OK();
}

Status ColumnWriter::FinishPage() {
  if (page_levels_ == 0) return Status::OK();
  body_.clear();
  auto append_levels = [&](RleBitPackedEncoder& encoder) {
    levels_.clear();
    encoder.Flush(&levels_);
    auto length = static_cast<uint32_t>(levels_.size());
    AppendLittleEndian(&length, 4, &body_);
    body_.append(levels_);
  };
  if (leaf_.max_repetition_level > 0) append_levels(rep_encoder_);
  if (leaf_.max_definition_level > 0) append_levels(def_encoder_);

  Encoding encoding = Encoding::kPlain;
  if (physical_ == Type::kBoolean) {
    PlainAppendBooleans(bool_values_.data(), static_cast<int64_t>(bool_values_.size()), &body_);
    bool_values_.clear();
    ++plain_page_count_;
  } else if (use_dictionary_) {
    encoding = Encoding::kRleDictionary;
    int width = BitWidthFor(static_cast<uint64_t>(std::max(dictionary_.size(), 1) - 1));
    body_.push_back(static_cast<char>(width));
    index_encoder_.Reset(width);
    for (uint32_t index : page_indices_) index_encoder_.Put(index);
    index_encoder_.Flush(&body_);
    page_indices_.clear();
    dictionary_pages_ = true;
    ++dictionary_page_count_;
  } else {
    body_.append(page_plain_);
    page_plain_.clear();
    ++plain_page_count_;
  }

  if (num_pages_ == pages_.size()) pages_.emplace_back();
  Page& page = pages_[num_pages_++];
  // Compressed straight into the page's own buffer: no copy, and no allocation once the buffer
  // has served a page of this size in an earlier row group.
  SLUICE_RETURN_IF_ERROR(WritePage(body_, page_levels_, encoding, PageType::kDataPage, &page.body));
  if (compressed_.data() != page.body.data()) {
    std::memcpy(page.body.Reserve(compressed_.size()), compressed_.data(), compressed_.size());
  }
  page.size = compressed_.size();
  page.header.assign(header_);
  chunk_bytes_ += static_cast<int64_t>(page.header.size() + page.size);
  chunk_uncompressed_ += static_cast<int64_t>(header_.size() + body_.size());
  page_levels_ = 0;
  page_values_ = 0;
  return Status::OK();
}

std::string ColumnWriter::EncodeBound(const Bounds& b, bool min) const {
  std::string out;
  switch (physical_) {
    case Type::kBoolean: out.push_back(static_cast<char>(min ? b.min_int : b.max_int)); break;
    case Type::kInt32: {
      auto v = static_cast<int32_t>(min ? b.min_int : b.max_int);
      AppendLittleEndian(&v, 4, &out);
      break;
    }
    case Type::kInt64: {
      int64_t v = min ? b.min_int : b.max_int;
      AppendLittleEndian(&v, 8, &out);
      break;
    }
    case Type::kFloat:
    case Type::kDouble: {
      double v = min ? b.min_float : b.max_float;
      // A zero bound is written -0.0 as a minimum and +0.0 as a maximum, so that it covers both.
      if (v == 0) v = min ? -0.0 : 0.0;
      if (physical_ == Type::kFloat) {
        auto f = static_cast<float>(v);
        AppendLittleEndian(&f, 4, &out);
      } else {
        AppendLittleEndian(&v, 8, &out);
      }
      break;
    }
    case Type::kFixedLenByteArray: AppendBigEndian(min ? b.min_dec : b.max_dec, width_, &out); break;
    default: out = min ? b.min_bytes : b.max_bytes; break;
  }
  return out;
}

Statistics ColumnWriter::ChunkStatistics() const {
  Statistics s;
  s.null_count = chunk_nulls_;
  if (chunk_bounds_.present) {
    s.min_value = EncodeBound(chunk_bounds_, true);
    s.max_value = EncodeBound(chunk_bounds_, false);
    // The deprecated fields are defined by signed comparison, which is the order of these types
    // only: byte arrays and FIXED_LEN_BYTE_ARRAY decimals leave them out.
    if (physical_ != Type::kByteArray && physical_ != Type::kFixedLenByteArray) {
      s.min = s.min_value;
      s.max = s.max_value;
    }
  }
  return s;
}

Status ColumnWriter::FlushChunk(WritableFile* file, ColumnChunk* chunk) {
  SLUICE_RETURN_IF_ERROR(FinishPage());
  const int64_t start = file->Tell();
  ColumnMetaData& m = chunk->meta_data.emplace();
  int64_t dictionary_compressed = 0, dictionary_uncompressed = 0;
  if (dictionary_pages_) {
    body_.clear();
    dictionary_.WritePlain(&body_);
    SLUICE_RETURN_IF_ERROR(
        WritePage(body_, dictionary_.size(), Encoding::kPlain, PageType::kDictionaryPage, &compression_scratch_));
    SLUICE_RETURN_IF_ERROR(file->Append(header_));
    SLUICE_RETURN_IF_ERROR(file->Append(compressed_));
    dictionary_compressed = static_cast<int64_t>(header_.size() + compressed_.size());
    dictionary_uncompressed = static_cast<int64_t>(header_.size() + body_.size());
    m.dictionary_page_offset = start;
  }
  for (size_t i = 0; i < num_pages_; ++i) {
    SLUICE_RETURN_IF_ERROR(file->Append(pages_[i].header));
    SLUICE_RETURN_IF_ERROR(file->Append(std::string_view(pages_[i].body.data(), pages_[i].size)));
  }

  m.type = physical_;
  if (dictionary_pages_ || plain_page_count_ > 0) m.encodings.push_back(Encoding::kPlain);
  if (leaf_.max_definition_level > 0 || leaf_.max_repetition_level > 0) m.encodings.push_back(Encoding::kRle);
  if (dictionary_pages_) m.encodings.push_back(Encoding::kRleDictionary);
  m.path_in_schema = leaf_.path;
  m.codec = options_.compression;
  m.num_values = chunk_levels_;
  m.total_uncompressed_size = dictionary_uncompressed + chunk_uncompressed_;
  m.total_compressed_size = dictionary_compressed + chunk_bytes_;
  m.data_page_offset = start + dictionary_compressed;
  m.statistics = ChunkStatistics();
  if (dictionary_pages_) {
    m.encoding_stats.push_back({PageType::kDictionaryPage, Encoding::kPlain, 1});
    m.encoding_stats.push_back({PageType::kDataPage, Encoding::kRleDictionary, dictionary_page_count_});
  }
  if (plain_page_count_ > 0) m.encoding_stats.push_back({PageType::kDataPage, Encoding::kPlain, plain_page_count_});
  chunk->file_offset = start;

  MergeInto(&file_bounds_, chunk_bounds_);
  file_nulls_ += chunk_nulls_;
  chunk_bounds_.present = false;
  chunk_nulls_ = 0;
  chunk_levels_ = 0;
  chunk_uncompressed_ = 0;
  num_pages_ = 0;
  chunk_bytes_ = 0;
  dictionary_.Clear();
  dictionary_pages_ = false;
  dictionary_page_count_ = 0;
  plain_page_count_ = 0;
  use_dictionary_ = options_.dictionary && physical_ != Type::kBoolean;
  return Status::OK();
}

ColumnStats ColumnWriter::FileStatistics() const {
  ColumnStats stats;
  stats.path = leaf_.path;
  stats.type = leaf_.type;
  stats.in_repeated = leaf_.max_repetition_level > 0;
  stats.null_count = file_nulls_;
  if (!file_bounds_.present) return stats;
  StatValue lo, hi;
  TypeId id = leaf_.type->id();
  if (id == TypeId::kDecimal) {
    lo.decimal_value = physical_ == Type::kFixedLenByteArray ? file_bounds_.min_dec : file_bounds_.min_int;
    hi.decimal_value = physical_ == Type::kFixedLenByteArray ? file_bounds_.max_dec : file_bounds_.max_int;
  } else if (id == TypeId::kFloat || id == TypeId::kDouble) {
    lo.float_value = file_bounds_.min_float;
    hi.float_value = file_bounds_.max_float;
  } else if (id == TypeId::kString || id == TypeId::kBinary) {
    lo.bytes = file_bounds_.min_bytes;
    hi.bytes = file_bounds_.max_bytes;
  } else {
    lo.int_value = file_bounds_.min_int;
    hi.int_value = file_bounds_.max_int;
  }
  stats.min = std::move(lo);
  stats.max = std::move(hi);
  return stats;
}

}  // namespace sluice::parquet
