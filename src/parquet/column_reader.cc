#include "parquet/column_reader.h"

#include <algorithm>
#include <cstring>

#include "parquet/codec.h"
#include "sluice/core/error_classes.h"

namespace sluice::parquet {
namespace {

// Levels decoded ahead for nested columns, and dictionary indices decoded per step.
constexpr int64_t kLevelBatch = 4096;
constexpr int64_t kIndexBatch = 1024;
// Pages are at most 2 GiB by the format (int32 sizes); refuse more before allocating.
constexpr int64_t kMaxPageSize = int64_t{1} << 30;

int PhysicalWidth(const SchemaElement& element) {
  switch (*element.type) {
    case Type::kBoolean:
      return 1;
    case Type::kInt32:
    case Type::kFloat:
      return 4;
    case Type::kInt64:
    case Type::kDouble:
      return 8;
    case Type::kInt96:
      return 12;
    case Type::kFixedLenByteArray:
      return *element.type_length;
    case Type::kByteArray:
      return 0;
  }
  return 0;
}

Status UnsupportedEncoding(Encoding encoding, Type type) {
  return Status::Error(errors::kParquetUnsupportedFeature,
                       "encoding " + EncodingName(encoding) + " for " + TypeName(type) + " values");
}

}  // namespace

Result<std::unique_ptr<ColumnChunkReader>> ColumnChunkReader::Make(const LeafColumn& leaf,
                                                                   const ColumnMetaData& metadata, std::string chunk) {
  SLUICE_ASSIGN_OR_RETURN(Conversion conversion, ChooseConversion(leaf));
  return std::unique_ptr<ColumnChunkReader>(new ColumnChunkReader(leaf, metadata, std::move(chunk), conversion));
}

ColumnChunkReader::ColumnChunkReader(const LeafColumn& leaf, const ColumnMetaData& metadata, std::string chunk,
                                     Conversion conversion)
    : leaf_(leaf),
      physical_(*leaf.element.type),
      physical_width_(PhysicalWidth(leaf.element)),
      value_width_(leaf.type->byte_width()),
      conversion_(conversion),
      codec_(metadata.codec),
      max_def_(leaf.max_definition_level),
      max_rep_(leaf.max_repetition_level),
      chunk_(std::move(chunk)) {}

Result<std::string_view> ColumnChunkReader::Decompress(std::string_view body, int64_t uncompressed_size) {
  if (codec_ == CompressionCodec::kUncompressed) {
    if (static_cast<int64_t>(body.size()) != uncompressed_size) {
      return CorruptData("uncompressed page of " + std::to_string(body.size()) + " bytes declares " +
                         std::to_string(uncompressed_size));
    }
    return body;
  }
  if (uncompressed_size < 0 || uncompressed_size > kMaxPageSize) {
    return CorruptData("page declares " + std::to_string(uncompressed_size) + " uncompressed bytes");
  }
  SLUICE_RETURN_IF_ERROR(DecompressPage(codec_, body, uncompressed_size, &page_buffer_));
  return std::string_view(page_buffer_);
}

Status ColumnChunkReader::NextDataPage(bool* found) {
  while (chunk_pos_ < chunk_.size()) {
    size_t header_size = 0;
    std::string_view rest = std::string_view(chunk_).substr(chunk_pos_);
    SLUICE_ASSIGN_OR_RETURN(PageHeader header, ParsePageHeader(rest, &header_size));
    if (header.compressed_page_size < 0 ||
        static_cast<uint64_t>(header.compressed_page_size) > rest.size() - header_size) {
      return CorruptData("page of " + std::to_string(header.compressed_page_size) + " bytes runs past its column chunk");
    }
    std::string_view body = rest.substr(header_size, static_cast<size_t>(header.compressed_page_size));
    chunk_pos_ += header_size + body.size();
    switch (header.type) {
      case PageType::kDictionaryPage:
        SLUICE_RETURN_IF_ERROR(ReadDictionaryPage(header, body));
        break;
      case PageType::kDataPage:
        SLUICE_RETURN_IF_ERROR(StartDataPageV1(header, body));
        *found = true;
        return Status::OK();
      case PageType::kDataPageV2:
        SLUICE_RETURN_IF_ERROR(StartDataPageV2(header, body));
        *found = true;
        return Status::OK();
      default:
        break;  // index pages and page types from newer writers carry no values
    }
  }
  *found = false;
  return Status::OK();
}

Status ColumnChunkReader::ReadDictionaryPage(const PageHeader& header, std::string_view body) {
  if (!header.dictionary_page_header) return CorruptData("dictionary page without its header");
  if (has_dictionary_) return CorruptData("second dictionary page in a column chunk");
  const DictionaryPageHeader& dict = *header.dictionary_page_header;
  if (dict.encoding != Encoding::kPlain && dict.encoding != Encoding::kPlainDictionary) {
    return UnsupportedEncoding(dict.encoding, physical_);
  }
  SLUICE_ASSIGN_OR_RETURN(std::string_view data, Decompress(body, header.uncompressed_page_size));
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const int64_t size = static_cast<int64_t>(data.size());
  // Every PLAIN value takes at least one byte (four for byte arrays): bound the count first.
  const int64_t min_width = physical_ == Type::kByteArray ? 4 : std::max(physical_width_, 1);
  if (dict.num_values < 0 || dict.num_values > size / min_width) {
    return CorruptData("dictionary page of " + std::to_string(size) + " bytes declares " +
                       std::to_string(dict.num_values) + " values");
  }
  values_ = physical_ == Type::kByteArray ? MakePlainByteArrayDecoder(p, size)
            : physical_ == Type::kBoolean ? MakePlainBooleanDecoder(p, size)
                                          : MakePlainFixedDecoder(p, size, physical_width_);
  dictionary_encoded_ = false;
  dictionary_ = LeafData();
  SLUICE_RETURN_IF_ERROR(DecodeValues(dict.num_values, &dictionary_));
  values_.reset();
  has_dictionary_ = true;
  return Status::OK();
}

Status ColumnChunkReader::StartValues(Encoding encoding, const uint8_t* data, int64_t size, int64_t num_values) {
  dictionary_encoded_ = false;
  switch (encoding) {
    case Encoding::kPlain:
      if (physical_ == Type::kByteArray) {
        values_ = MakePlainByteArrayDecoder(data, size);
      } else if (physical_ == Type::kBoolean) {
        values_ = MakePlainBooleanDecoder(data, size);
      } else {
        values_ = MakePlainFixedDecoder(data, size, physical_width_);
      }
      return Status::OK();
    case Encoding::kPlainDictionary:
    case Encoding::kRleDictionary: {
      if (!has_dictionary_) return CorruptData("dictionary-encoded page in a column chunk without a dictionary");
      SLUICE_ASSIGN_OR_RETURN(values_, MakeDictionaryIndexDecoder(data, size));
      dictionary_encoded_ = true;
      return Status::OK();
    }
    case Encoding::kRle: {
      if (physical_ != Type::kBoolean) break;
      SLUICE_ASSIGN_OR_RETURN(values_, MakeRleBooleanDecoder(data, size));
      return Status::OK();
    }
    case Encoding::kDeltaBinaryPacked: {
      if (physical_ != Type::kInt32 && physical_ != Type::kInt64) break;
      SLUICE_ASSIGN_OR_RETURN(values_, MakeDeltaBinaryPackedDecoder(data, size, physical_width_, num_values));
      return Status::OK();
    }
    case Encoding::kDeltaLengthByteArray: {
      if (physical_ != Type::kByteArray) break;
      SLUICE_ASSIGN_OR_RETURN(values_, MakeDeltaLengthByteArrayDecoder(data, size, num_values));
      return Status::OK();
    }
    case Encoding::kDeltaByteArray: {
      if (physical_ != Type::kByteArray && physical_ != Type::kFixedLenByteArray) break;
      SLUICE_ASSIGN_OR_RETURN(values_, MakeDeltaByteArrayDecoder(data, size, num_values, physical_width_));
      return Status::OK();
    }
    case Encoding::kByteStreamSplit: {
      if (physical_ == Type::kBoolean || physical_ == Type::kByteArray || physical_ == Type::kInt96) break;
      SLUICE_ASSIGN_OR_RETURN(values_, MakeByteStreamSplitDecoder(data, size, physical_width_));
      return Status::OK();
    }
    default:
      break;
  }
  return UnsupportedEncoding(encoding, physical_);
}

Status ColumnChunkReader::StartDataPageV1(const PageHeader& header, std::string_view body) {
  if (!header.data_page_header) return CorruptData("data page without its header");
  const DataPageHeader& page = *header.data_page_header;
  if (page.num_values < 0) return CorruptData("data page with a negative value count");
  SLUICE_ASSIGN_OR_RETURN(std::string_view data, Decompress(body, header.uncompressed_page_size));
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const uint8_t* end = p + data.size();
  // Level sections: repetition then definition, each a 4-byte length and the hybrid encoding.
  // (Writers may name any encoding for a level that is always 0 and so not written.)
  if (max_rep_ > 0 && page.repetition_level_encoding != Encoding::kRle) {
    return UnsupportedEncoding(page.repetition_level_encoding, physical_);
  }
  if (max_def_ > 0 && page.definition_level_encoding != Encoding::kRle) {
    return UnsupportedEncoding(page.definition_level_encoding, physical_);
  }
  if (max_rep_ > 0) SLUICE_RETURN_IF_ERROR(OpenLevelsV1(&p, end, max_rep_, &rep_decoder_));
  if (max_def_ > 0) SLUICE_RETURN_IF_ERROR(OpenLevelsV1(&p, end, max_def_, &def_decoder_));
  page_entries_ = page.num_values;
  return StartValues(page.encoding, p, end - p, page.num_values);
}

Status ColumnChunkReader::StartDataPageV2(const PageHeader& header, std::string_view body) {
  if (!header.data_page_header_v2) return CorruptData("data page v2 without its header");
  const DataPageHeaderV2& page = *header.data_page_header_v2;
  if (page.num_values < 0 || page.repetition_levels_byte_length < 0 || page.definition_levels_byte_length < 0) {
    return CorruptData("data page v2 with negative sizes");
  }
  const int64_t levels = int64_t{page.repetition_levels_byte_length} + page.definition_levels_byte_length;
  if (levels > static_cast<int64_t>(body.size()) || levels > header.uncompressed_page_size) {
    return CorruptData("data page v2 levels longer than the page");
  }
  // Levels are never compressed in v2 pages; the values may be.
  const auto* p = reinterpret_cast<const uint8_t*>(body.data());
  if (max_rep_ > 0) {
    rep_decoder_ = RleBitPackedDecoder(p, page.repetition_levels_byte_length, LevelBitWidth(max_rep_));
  }
  if (max_def_ > 0) {
    def_decoder_ = RleBitPackedDecoder(p + page.repetition_levels_byte_length, page.definition_levels_byte_length,
                                       LevelBitWidth(max_def_));
  }
  std::string_view values = body.substr(static_cast<size_t>(levels));
  const int64_t values_size = header.uncompressed_page_size - levels;
  std::string_view data;
  // A page with no values (every entry null) has an empty values section, which writers leave
  // uncompressed even under a codec: there is nothing to decompress.
  if (page.is_compressed && !(values.empty() && values_size == 0)) {
    SLUICE_ASSIGN_OR_RETURN(data, Decompress(values, values_size));
  } else {
    if (static_cast<int64_t>(values.size()) != values_size) return CorruptData("data page v2 sizes disagree");
    data = values;
  }
  page_entries_ = page.num_values;
  return StartValues(page.encoding, reinterpret_cast<const uint8_t*>(data.data()), static_cast<int64_t>(data.size()),
                     page.num_values);
}

namespace {

template <typename T>
void Gather(const uint8_t* dictionary, const int32_t* indices, int64_t count, uint8_t* out) {
  const T* values = reinterpret_cast<const T*>(dictionary);
  for (int64_t i = 0; i < count; ++i) std::memcpy(out + i * sizeof(T), values + indices[i], sizeof(T));
}

}  // namespace

Status ColumnChunkReader::DecodeValues(int64_t count, LeafData* out) {
  if (count == 0) return Status::OK();
  if (dictionary_encoded_) {
    indices_.resize(kIndexBatch);
    const uint32_t dictionary_size = static_cast<uint32_t>(dictionary_.num_values);
    for (int64_t done = 0; done < count;) {
      const int64_t n = std::min(kIndexBatch, count - done);
      SLUICE_RETURN_IF_ERROR(values_->DecodeIndices(n, indices_.data()));
      for (int64_t i = 0; i < n; ++i) {
        if (static_cast<uint32_t>(indices_[i]) >= dictionary_size) {
          return CorruptData("dictionary index " + std::to_string(static_cast<uint32_t>(indices_[i])) +
                             " past the dictionary's " + std::to_string(dictionary_size) + " values");
        }
      }
      if (value_width_ == 0) {
        const int64_t* offsets = dictionary_.offsets.data();
        for (int64_t i = 0; i < n; ++i) {
          const int64_t begin = offsets[indices_[i]];
          const int64_t end = offsets[indices_[i] + 1];
          out->data.insert(out->data.end(), dictionary_.data.begin() + begin, dictionary_.data.begin() + end);
          out->offsets.push_back(static_cast<int64_t>(out->data.size()));
        }
      } else {
        const size_t start = out->data.size();
        out->data.resize(start + n * value_width_);
        uint8_t* dst = out->data.data() + start;
        const uint8_t* dict = dictionary_.data.data();
        switch (value_width_) {
          case 1:
            Gather<uint8_t>(dict, indices_.data(), n, dst);
            break;
          case 2:
            Gather<uint16_t>(dict, indices_.data(), n, dst);
            break;
          case 4:
            Gather<uint32_t>(dict, indices_.data(), n, dst);
            break;
          case 8:
            Gather<uint64_t>(dict, indices_.data(), n, dst);
            break;
          default:
            for (int64_t i = 0; i < n; ++i) {
              std::memcpy(dst + i * value_width_, dict + int64_t{indices_[i]} * value_width_, value_width_);
            }
        }
      }
      out->num_values += n;
      done += n;
    }
    return Status::OK();
  }
  if (physical_ == Type::kByteArray) {
    if (conversion_ == Conversion::kCopy) {
      SLUICE_RETURN_IF_ERROR(values_->DecodeByteArrays(count, &out->data, &out->offsets));
      out->num_values += count;
      return Status::OK();
    }
    scratch_.clear();
    scratch_offsets_.assign(1, 0);
    SLUICE_RETURN_IF_ERROR(values_->DecodeByteArrays(count, &scratch_, &scratch_offsets_));
    return ConvertByteArrays(conversion_, scratch_.data(), scratch_offsets_.data(), count, out);
  }
  if (conversion_ == Conversion::kCopy) {
    // Straight into the output buffer.
    const size_t start = out->data.size();
    out->data.resize(start + count * physical_width_);
    SLUICE_RETURN_IF_ERROR(values_->DecodeFixed(count, out->data.data() + start));
    out->num_values += count;
    return Status::OK();
  }
  scratch_.resize(static_cast<size_t>(count) * physical_width_);
  SLUICE_RETURN_IF_ERROR(values_->DecodeFixed(count, scratch_.data()));
  return ConvertFixed(conversion_, scratch_.data(), physical_width_, count, out);
}

Status ColumnChunkReader::ReadRows(int64_t rows, LeafData* out, int64_t* rows_read) {
  *rows_read = 0;
  return max_rep_ == 0 ? ReadFlatRows(rows, out, rows_read) : ReadNestedRows(rows, out, rows_read);
}

Status ColumnChunkReader::ReadFlatRows(int64_t rows, LeafData* out, int64_t* rows_read) {
  while (*rows_read < rows) {
    if (page_entries_ == 0) {
      bool found = false;
      SLUICE_RETURN_IF_ERROR(NextDataPage(&found));
      if (!found) break;
      continue;
    }
    const int64_t n = std::min(rows - *rows_read, page_entries_);
    int64_t values = n;
    if (max_def_ > 0) {
      const size_t start = out->def_levels.size();
      out->def_levels.resize(start + n);
      int16_t* levels = out->def_levels.data() + start;
      SLUICE_RETURN_IF_ERROR(def_decoder_.Decode(n, levels));
      values = 0;
      int16_t high = 0;
      for (int64_t i = 0; i < n; ++i) {
        values += levels[i] == max_def_;
        high = std::max(high, levels[i]);
      }
      if (high > max_def_) return CorruptData("definition level above the column's maximum");
    }
    SLUICE_RETURN_IF_ERROR(DecodeValues(values, out));
    page_entries_ -= n;
    out->num_entries += n;
    *rows_read += n;
  }
  return Status::OK();
}

Status ColumnChunkReader::BufferLevels() {
  const int64_t n = std::min(kLevelBatch, page_entries_);
  def_buffer_.resize(kLevelBatch);
  rep_buffer_.resize(kLevelBatch);
  SLUICE_RETURN_IF_ERROR(rep_decoder_.Decode(n, rep_buffer_.data()));
  if (max_def_ > 0) {
    SLUICE_RETURN_IF_ERROR(def_decoder_.Decode(n, def_buffer_.data()));
  } else {
    std::fill(def_buffer_.begin(), def_buffer_.begin() + n, int16_t{0});
  }
  for (int64_t i = 0; i < n; ++i) {
    if (rep_buffer_[i] > max_rep_ || def_buffer_[i] > max_def_) {
      return CorruptData("level above the column's maximum");
    }
  }
  page_entries_ -= n;
  buffer_pos_ = 0;
  buffer_len_ = n;
  return Status::OK();
}

Status ColumnChunkReader::ReadNestedRows(int64_t rows, LeafData* out, int64_t* rows_read) {
  while (true) {
    if (buffer_pos_ == buffer_len_) {
      if (page_entries_ == 0) {
        bool found = false;
        SLUICE_RETURN_IF_ERROR(NextDataPage(&found));
        if (!found) return Status::OK();
        continue;
      }
      SLUICE_RETURN_IF_ERROR(BufferLevels());
    }
    // Take entries up to the start of row number `rows` (the first one past the request).
    int64_t i = buffer_pos_;
    int64_t values = 0;
    bool done = false;
    for (; i < buffer_len_; ++i) {
      if (rep_buffer_[i] == 0) {
        if (*rows_read == rows) {
          done = true;
          break;
        }
        ++*rows_read;
        first_entry_ = false;
      } else if (first_entry_) {
        return CorruptData("column chunk starts in the middle of a row");
      }
      values += def_buffer_[i] == max_def_;
    }
    const int64_t n = i - buffer_pos_;
    out->rep_levels.insert(out->rep_levels.end(), rep_buffer_.begin() + buffer_pos_, rep_buffer_.begin() + i);
    if (max_def_ > 0) {
      out->def_levels.insert(out->def_levels.end(), def_buffer_.begin() + buffer_pos_, def_buffer_.begin() + i);
    }
    SLUICE_RETURN_IF_ERROR(DecodeValues(values, out));
    out->num_entries += n;
    buffer_pos_ = i;
    if (done) return Status::OK();
  }
}

}  // namespace sluice::parquet
