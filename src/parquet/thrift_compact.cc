#include "parquet/thrift_compact.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "sluice/core/error_classes.h"

namespace sluice::parquet::thrift {

void CompactWriter::StructBegin() {
  if (depth_ >= kMaxDepth) std::abort();  // our own metadata never nests this deep
  saved_ids_[depth_++] = last_field_id_;
  last_field_id_ = 0;
}

void CompactWriter::StructEnd() {
  out_->push_back(static_cast<char>(CType::kStop));
  last_field_id_ = saved_ids_[--depth_];
}

void CompactWriter::FieldHeader(int16_t id, CType type) {
  int delta = id - last_field_id_;
  if (delta > 0 && delta <= 15) {
    out_->push_back(static_cast<char>((delta << 4) | static_cast<uint8_t>(type)));
  } else {
    out_->push_back(static_cast<char>(type));
    I32(id);
  }
  last_field_id_ = id;
}

void CompactWriter::ListBegin(CType element_type, uint32_t size) {
  if (size < 15) {
    out_->push_back(static_cast<char>((size << 4) | static_cast<uint8_t>(element_type)));
  } else {
    out_->push_back(static_cast<char>(0xF0 | static_cast<uint8_t>(element_type)));
    Varint(size);
  }
}

void CompactWriter::Binary(std::string_view value) {
  Varint(value.size());
  out_->append(value);
}

void CompactWriter::Varint(uint64_t value) {
  char buf[10];
  int n = 0;
  while (value >= 0x80) {
    buf[n++] = static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  buf[n++] = static_cast<char>(value);
  out_->append(buf, n);
}

Status CompactReader::Corrupt(std::string_view what) const {
  return Status::Error(errors::kParquetCorruptFile,
                       "malformed Thrift metadata at byte " + std::to_string(pos_) + ": " + std::string(what));
}

Status CompactReader::StructBegin() {
  if (depth_ >= kMaxDepth) return Corrupt("structs nested deeper than " + std::to_string(kMaxDepth) + " levels");
  saved_ids_[depth_++] = last_field_id_;
  last_field_id_ = 0;
  return Status::OK();
}

void CompactReader::StructEnd() {
  if (depth_ > 0) last_field_id_ = saved_ids_[--depth_];
}

Status CompactReader::ReadVarint(uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= size_) return Corrupt("truncated varint");
    uint8_t byte = data_[pos_++];
    result |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) {
      *value = result;
      return Status::OK();
    }
  }
  return Corrupt("varint longer than 10 bytes");
}

static int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

Status CompactReader::ReadFieldHeader(int16_t* id, CType* type) {
  if (pos_ >= size_) return Corrupt("truncated struct (no stop byte)");
  uint8_t byte = data_[pos_++];
  uint8_t type_bits = byte & 0x0F;
  if (type_bits > static_cast<uint8_t>(CType::kStruct)) return Corrupt("unknown field type " + std::to_string(type_bits));
  *type = static_cast<CType>(type_bits);
  if (*type == CType::kStop) {
    *id = 0;
    return Status::OK();
  }
  int delta = byte >> 4;
  if (delta != 0) {
    *id = static_cast<int16_t>(last_field_id_ + delta);
  } else {
    SLUICE_RETURN_IF_ERROR(ReadI16(id));
  }
  last_field_id_ = *id;
  return Status::OK();
}

Status CompactReader::BoolFromFieldType(CType type, bool* value) {
  if (type == CType::kBoolTrue) {
    *value = true;
  } else if (type == CType::kBoolFalse) {
    *value = false;
  } else {
    return Status::Error(errors::kParquetCorruptFile, "malformed Thrift metadata: a bool field has a non-bool type");
  }
  return Status::OK();
}

Status CompactReader::ReadListBool(bool* value) {
  if (pos_ >= size_) return Corrupt("truncated bool");
  uint8_t byte = data_[pos_++];
  // Writers disagree on the encoding of false inside lists (0 or 2); both are accepted.
  if (byte > 2) return Corrupt("bad bool value " + std::to_string(byte));
  *value = byte == 1;
  return Status::OK();
}

Status CompactReader::ReadI8(int8_t* value) {
  if (pos_ >= size_) return Corrupt("truncated i8");
  *value = static_cast<int8_t>(data_[pos_++]);
  return Status::OK();
}

Status CompactReader::ReadI16(int16_t* value) {
  int64_t v;
  SLUICE_RETURN_IF_ERROR(ReadI64(&v));
  if (v < INT16_MIN || v > INT16_MAX) return Corrupt("i16 out of range");
  *value = static_cast<int16_t>(v);
  return Status::OK();
}

Status CompactReader::ReadI32(int32_t* value) {
  int64_t v;
  SLUICE_RETURN_IF_ERROR(ReadI64(&v));
  if (v < INT32_MIN || v > INT32_MAX) return Corrupt("i32 out of range");
  *value = static_cast<int32_t>(v);
  return Status::OK();
}

Status CompactReader::ReadI64(int64_t* value) {
  uint64_t raw = 0;
  SLUICE_RETURN_IF_ERROR(ReadVarint(&raw));
  *value = UnZigZag(raw);
  return Status::OK();
}

Status CompactReader::ReadDouble(double* value) {
  if (remaining() < 8) return Corrupt("truncated double");
  std::memcpy(value, data_ + pos_, 8);
  pos_ += 8;
  return Status::OK();
}

Status CompactReader::ReadBinary(std::string* value) {
  uint64_t length = 0;
  SLUICE_RETURN_IF_ERROR(ReadVarint(&length));
  if (length > remaining()) {
    return Corrupt("binary of " + std::to_string(length) + " bytes but only " + std::to_string(remaining()) + " remain");
  }
  value->assign(reinterpret_cast<const char*>(data_ + pos_), length);
  pos_ += length;
  return Status::OK();
}

Status CompactReader::ReadListHeader(CType* element_type, uint32_t* size) {
  if (pos_ >= size_) return Corrupt("truncated list header");
  uint8_t byte = data_[pos_++];
  uint8_t type_bits = byte & 0x0F;
  if (type_bits == 0 || type_bits > static_cast<uint8_t>(CType::kStruct)) {
    return Corrupt("unknown list element type " + std::to_string(type_bits));
  }
  *element_type = static_cast<CType>(type_bits);
  uint64_t n = byte >> 4;
  if (n == 15) SLUICE_RETURN_IF_ERROR(ReadVarint(&n));
  if (n > remaining()) {
    return Corrupt("list of " + std::to_string(n) + " elements but only " + std::to_string(remaining()) + " bytes remain");
  }
  *size = static_cast<uint32_t>(n);
  return Status::OK();
}

Status CompactReader::ReadMapHeader(CType* key_type, CType* value_type, uint32_t* size) {
  uint64_t n = 0;
  SLUICE_RETURN_IF_ERROR(ReadVarint(&n));
  if (n == 0) {
    *size = 0;
    *key_type = *value_type = CType::kStop;
    return Status::OK();
  }
  if (n > remaining()) return Corrupt("map larger than the bytes that remain");
  if (pos_ >= size_) return Corrupt("truncated map header");
  uint8_t byte = data_[pos_++];
  *key_type = static_cast<CType>(byte >> 4);
  *value_type = static_cast<CType>(byte & 0x0F);
  if ((byte >> 4) > static_cast<uint8_t>(CType::kStruct) || (byte & 0x0F) > static_cast<uint8_t>(CType::kStruct) ||
      *key_type == CType::kStop || *value_type == CType::kStop) {
    return Corrupt("unknown map element type");
  }
  *size = static_cast<uint32_t>(n);
  return Status::OK();
}

Status CompactReader::Skip(CType type) {
  switch (type) {
    case CType::kBoolTrue:
    case CType::kBoolFalse:
      return Status::OK();
    case CType::kByte: {
      int8_t v;
      return ReadI8(&v);
    }
    case CType::kI16:
    case CType::kI32:
    case CType::kI64: {
      uint64_t v;
      return ReadVarint(&v);
    }
    case CType::kDouble: {
      if (remaining() < 8) return Corrupt("truncated double");
      pos_ += 8;
      return Status::OK();
    }
    case CType::kBinary: {
      uint64_t length = 0;
      SLUICE_RETURN_IF_ERROR(ReadVarint(&length));
      if (length > remaining()) return Corrupt("binary longer than the bytes that remain");
      pos_ += length;
      return Status::OK();
    }
    case CType::kList:
    case CType::kSet: {
      CType element;
      uint32_t n = 0;
      SLUICE_RETURN_IF_ERROR(ReadListHeader(&element, &n));
      // Elements of nested containers count toward the nesting depth like structs do.
      SLUICE_RETURN_IF_ERROR(StructBegin());
      for (uint32_t i = 0; i < n; ++i) {
        if (element == CType::kBoolTrue || element == CType::kBoolFalse) {
          bool b;
          SLUICE_RETURN_IF_ERROR(ReadListBool(&b));
        } else {
          SLUICE_RETURN_IF_ERROR(Skip(element));
        }
      }
      StructEnd();
      return Status::OK();
    }
    case CType::kMap: {
      CType key, value;
      uint32_t n = 0;
      SLUICE_RETURN_IF_ERROR(ReadMapHeader(&key, &value, &n));
      SLUICE_RETURN_IF_ERROR(StructBegin());
      for (uint32_t i = 0; i < n; ++i) {
        for (CType t : {key, value}) {
          if (t == CType::kBoolTrue || t == CType::kBoolFalse) {
            bool b;
            SLUICE_RETURN_IF_ERROR(ReadListBool(&b));
          } else {
            SLUICE_RETURN_IF_ERROR(Skip(t));
          }
        }
      }
      StructEnd();
      return Status::OK();
    }
    case CType::kStruct: {
      SLUICE_RETURN_IF_ERROR(StructBegin());
      while (true) {
        int16_t id;
        CType field_type;
        SLUICE_RETURN_IF_ERROR(ReadFieldHeader(&id, &field_type));
        if (field_type == CType::kStop) break;
        SLUICE_RETURN_IF_ERROR(Skip(field_type));
      }
      StructEnd();
      return Status::OK();
    }
    case CType::kStop:
      break;
  }
  return Corrupt("cannot skip a value of type stop");
}

}  // namespace sluice::parquet::thrift
