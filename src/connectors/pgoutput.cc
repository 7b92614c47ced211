#include "sluice/connectors/pgoutput.h"

#include <cinttypes>
#include <cstdio>

#include "sluice/core/error_classes.h"

namespace sluice::connectors {

namespace {

Status ProtocolError(std::string what) {
  return Status::Error(errors::kPgReplicationProtocolError, std::move(what));
}

// Big-endian reads over a bounds-checked cursor. Every Read* fails instead of over-reading.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}

  bool ReadU8(uint8_t* v) {
    if (remaining() < 1) return false;
    *v = static_cast<uint8_t>(bytes_[pos_++]);
    return true;
  }
  bool ReadU16(uint16_t* v) { return ReadBigEndian(v); }
  bool ReadU32(uint32_t* v) { return ReadBigEndian(v); }
  bool ReadU64(uint64_t* v) { return ReadBigEndian(v); }
  bool ReadI32(int32_t* v) {
    uint32_t u;
    if (!ReadU32(&u)) return false;
    *v = static_cast<int32_t>(u);
    return true;
  }
  bool ReadI64(int64_t* v) {
    uint64_t u;
    if (!ReadU64(&u)) return false;
    *v = static_cast<int64_t>(u);
    return true;
  }
  // A NUL-terminated string.
  bool ReadCString(std::string_view* v) {
    size_t end = bytes_.find('\0', pos_);
    if (end == std::string_view::npos) return false;
    *v = bytes_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }
  bool ReadBytes(size_t n, std::string_view* v) {
    if (remaining() < n) return false;
    *v = bytes_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  size_t remaining() const { return bytes_.size() - pos_; }

 private:
  template <typename T>
  bool ReadBigEndian(T* v) {
    if (remaining() < sizeof(T)) return false;
    T out = 0;
    for (size_t i = 0; i < sizeof(T); ++i) out = static_cast<T>((out << 8) | static_cast<uint8_t>(bytes_[pos_ + i]));
    pos_ += sizeof(T);
    *v = out;
    return true;
  }

  std::string_view bytes_;
  size_t pos_ = 0;
};

Status Truncated(char kind) {
  return ProtocolError(std::string("pgoutput message '") + kind + "' is truncated");
}

Status ReadTuple(Cursor* in, char kind, std::vector<TupleValue>* out) {
  uint16_t count;
  if (!in->ReadU16(&count)) return Truncated(kind);
  out->clear();
  // Each column takes at least one byte: a count larger than what is left is a lie.
  if (count > in->remaining()) return Truncated(kind);
  out->reserve(count);
  for (uint16_t i = 0; i < count; ++i) {
    uint8_t tag;
    if (!in->ReadU8(&tag)) return Truncated(kind);
    TupleValue value{static_cast<TupleValue::Kind>(tag), {}};
    switch (tag) {
      case 'n':
      case 'u':
        break;
      case 't':
      case 'b': {
        int32_t length;
        if (!in->ReadI32(&length) || length < 0 || !in->ReadBytes(static_cast<size_t>(length), &value.data)) {
          return Truncated(kind);
        }
        break;
      }
      default:
        return ProtocolError(std::string("pgoutput message '") + kind + "' has a column of unknown kind " +
                             std::to_string(tag));
    }
    out->push_back(value);
  }
  return Status::OK();
}

}  // namespace

std::string FormatLsn(Lsn lsn) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%" PRIX32 "/%" PRIX32, static_cast<uint32_t>(lsn >> 32),
                static_cast<uint32_t>(lsn));
  return buffer;
}

Result<Lsn> ParseLsn(std::string_view text) {
  size_t slash = text.find('/');
  auto hex = [](std::string_view part, uint64_t* out) {
    if (part.empty() || part.size() > 8) return false;
    uint64_t v = 0;
    for (char c : part) {
      int digit;
      if (c >= '0' && c <= '9') digit = c - '0';
      else if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
      else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
      else return false;
      v = v * 16 + digit;
    }
    *out = v;
    return true;
  };
  uint64_t high, low;
  if (slash == std::string_view::npos || !hex(text.substr(0, slash), &high) || !hex(text.substr(slash + 1), &low)) {
    return Status::Error(errors::kInvalidArgument, "`" + std::string(text) + "` is not an LSN (expected the form 16/B374D848)");
  }
  return (high << 32) | low;
}

Result<ReplicationFrame> ParseReplicationFrame(std::string_view bytes) {
  Cursor in(bytes);
  uint8_t tag;
  if (!in.ReadU8(&tag)) return ProtocolError("empty replication frame");
  ReplicationFrame frame;
  if (tag == 'w') {
    frame.kind = ReplicationFrame::Kind::kXLogData;
    if (!in.ReadU64(&frame.xlog.wal_start) || !in.ReadU64(&frame.xlog.wal_end) || !in.ReadI64(&frame.xlog.send_time)) {
      return ProtocolError("XLogData frame is truncated");
    }
    in.ReadBytes(in.remaining(), &frame.xlog.payload);
    return frame;
  }
  if (tag == 'k') {
    frame.kind = ReplicationFrame::Kind::kKeepalive;
    uint8_t reply;
    if (!in.ReadU64(&frame.keepalive.wal_end) || !in.ReadI64(&frame.keepalive.send_time) || !in.ReadU8(&reply)) {
      return ProtocolError("keepalive frame is truncated");
    }
    frame.keepalive.reply_requested = reply != 0;
    return frame;
  }
  return ProtocolError("unknown replication frame kind " + std::to_string(tag));
}

std::string EncodeStandbyStatusUpdate(Lsn written, Lsn flushed, Lsn applied, int64_t client_time_pg_micros,
                                      bool reply_requested) {
  std::string out;
  out.reserve(34);
  out.push_back('r');
  auto put64 = [&out](uint64_t v) {
    for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
  };
  put64(written);
  put64(flushed);
  put64(applied);
  put64(static_cast<uint64_t>(client_time_pg_micros));
  out.push_back(reply_requested ? 1 : 0);
  return out;
}

Status ParsePgOutputMessage(std::string_view bytes, bool in_stream, PgOutputMessage* out) {
  Cursor in(bytes);
  uint8_t tag;
  if (!in.ReadU8(&tag)) return ProtocolError("empty pgoutput message");
  const char kind = static_cast<char>(tag);
  out->kind = static_cast<PgOutputMessage::Kind>(kind);
  out->xid = 0;
  out->flags = 0;
  // Data messages inside a streamed transaction start with the xid.
  auto read_stream_xid = [&]() { return !in_stream || in.ReadU32(&out->xid); };

  switch (kind) {
    case 'B':
      if (!in.ReadU64(&out->final_lsn) || !in.ReadI64(&out->timestamp) || !in.ReadU32(&out->xid)) return Truncated(kind);
      return Status::OK();
    case 'C':
      if (!in.ReadU8(&out->flags) || !in.ReadU64(&out->commit_lsn) || !in.ReadU64(&out->end_lsn) ||
          !in.ReadI64(&out->timestamp)) {
        return Truncated(kind);
      }
      return Status::OK();
    case 'O':
      if (!in.ReadU64(&out->commit_lsn) || !in.ReadCString(&out->name)) return Truncated(kind);
      return Status::OK();
    case 'R': {
      uint8_t identity;
      uint16_t count;
      if (!read_stream_xid() || !in.ReadU32(&out->oid) || !in.ReadCString(&out->namespace_name) ||
          !in.ReadCString(&out->name) || !in.ReadU8(&identity) || !in.ReadU16(&count)) {
        return Truncated(kind);
      }
      out->replica_identity = static_cast<char>(identity);
      out->columns.clear();
      if (count > in.remaining()) return Truncated(kind);
      out->columns.reserve(count);
      for (uint16_t i = 0; i < count; ++i) {
        uint8_t flags;
        RelationColumn column;
        if (!in.ReadU8(&flags) || !in.ReadCString(&column.name) || !in.ReadU32(&column.type_oid) ||
            !in.ReadI32(&column.type_modifier)) {
          return Truncated(kind);
        }
        column.part_of_key = (flags & 1) != 0;
        out->columns.push_back(column);
      }
      return Status::OK();
    }
    case 'Y':
      if (!read_stream_xid() || !in.ReadU32(&out->oid) || !in.ReadCString(&out->namespace_name) ||
          !in.ReadCString(&out->name)) {
        return Truncated(kind);
      }
      return Status::OK();
    case 'I': {
      uint8_t marker;
      if (!read_stream_xid() || !in.ReadU32(&out->oid) || !in.ReadU8(&marker)) return Truncated(kind);
      if (marker != 'N') return ProtocolError("Insert message without a new tuple");
      out->old_kind = 0;
      out->old_tuple.clear();
      return ReadTuple(&in, kind, &out->new_tuple);
    }
    case 'U': {
      uint8_t marker;
      if (!read_stream_xid() || !in.ReadU32(&out->oid) || !in.ReadU8(&marker)) return Truncated(kind);
      out->old_kind = 0;
      out->old_tuple.clear();
      if (marker == 'K' || marker == 'O') {
        out->old_kind = static_cast<char>(marker);
        SLUICE_RETURN_IF_ERROR(ReadTuple(&in, kind, &out->old_tuple));
        if (!in.ReadU8(&marker)) return Truncated(kind);
      }
      if (marker != 'N') return ProtocolError("Update message without a new tuple");
      return ReadTuple(&in, kind, &out->new_tuple);
    }
    case 'D': {
      uint8_t marker;
      if (!read_stream_xid() || !in.ReadU32(&out->oid) || !in.ReadU8(&marker)) return Truncated(kind);
      if (marker != 'K' && marker != 'O') return ProtocolError("Delete message without an old tuple");
      out->old_kind = static_cast<char>(marker);
      out->new_tuple.clear();
      return ReadTuple(&in, kind, &out->old_tuple);
    }
    case 'T': {
      uint32_t count;
      if (!read_stream_xid() || !in.ReadU32(&count) || !in.ReadU8(&out->flags)) return Truncated(kind);
      if (count > in.remaining() / 4) return Truncated(kind);
      out->truncated_oids.resize(count);
      for (uint32_t i = 0; i < count; ++i) {
        if (!in.ReadU32(&out->truncated_oids[i])) return Truncated(kind);
      }
      return Status::OK();
    }
    case 'M': {
      int32_t length;
      if (!read_stream_xid() || !in.ReadU8(&out->flags) || !in.ReadU64(&out->commit_lsn) ||
          !in.ReadCString(&out->name) || !in.ReadI32(&length) || length < 0 ||
          !in.ReadBytes(static_cast<size_t>(length), &out->content)) {
        return Truncated(kind);
      }
      return Status::OK();
    }
    case 'S':
      if (!in.ReadU32(&out->xid) || !in.ReadU8(&out->flags)) return Truncated(kind);
      return Status::OK();
    case 'E':
      return Status::OK();
    case 'c':
      if (!in.ReadU32(&out->xid) || !in.ReadU8(&out->flags) || !in.ReadU64(&out->commit_lsn) ||
          !in.ReadU64(&out->end_lsn) || !in.ReadI64(&out->timestamp)) {
        return Truncated(kind);
      }
      return Status::OK();
    case 'A':
      // Protocol version 4 appends the abort LSN and time; versions 1 to 3 end after the subxid.
      if (!in.ReadU32(&out->xid) || !in.ReadU32(&out->subxid)) return Truncated(kind);
      return Status::OK();
    default:
      return ProtocolError("unknown pgoutput message kind " + std::to_string(tag));
  }
}

}  // namespace sluice::connectors
