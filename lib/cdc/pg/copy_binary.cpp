#include "cdc/pg/copy_binary.h"

#include <charconv>
#include <cstdint>
#include <cstring>

#include "cdc/pg/types.h"

namespace cdc::pg {

namespace {

// "PGCOPY\n\377\r\n\0", then a flags word and a header extension length.
constexpr char kSignature[] = "PGCOPY\n\377\r\n";  // and its final '\0'
constexpr size_t kSignatureBytes = 11;

uint32_t Be32(const char* p) {
  return (uint32_t{static_cast<unsigned char>(p[0])} << 24) |
         (uint32_t{static_cast<unsigned char>(p[1])} << 16) |
         (uint32_t{static_cast<unsigned char>(p[2])} << 8) |
         uint32_t{static_cast<unsigned char>(p[3])};
}

uint16_t Be16(const char* p) {
  return static_cast<uint16_t>((static_cast<unsigned char>(p[0]) << 8) |
                               static_cast<unsigned char>(p[1]));
}

// A value whose bytes are its text, as a view that is never "no view" (an
// empty value's data pointer may be null; TupleColumn::text() would then
// read its `value`).
std::string_view Verbatim(std::string_view v) {
  return v.data() != nullptr ? v : std::string_view("", 0);
}

// Decoded text is written into the reader's buffer for the column
// (CopyBinaryReader::kScratchBytes), never into a std::string: assigning a
// bigint's few digits to one took 4-5 ns of every row.
template <typename T>
std::string_view PutNumber(T v, char* out) {
  auto r = std::to_chars(out, out + CopyBinaryReader::kScratchBytes, v);
  return {out, static_cast<size_t>(r.ptr - out)};
}

Status WrongLength(Oid type, size_t len) {
  return Status::BadInput("COPY binary value of type " + std::to_string(type) +
                          " has " + std::to_string(len) + " bytes");
}

// How a type's binary send form becomes its text output form.
enum class Decoding {
  kNone,      // not decoded: such a table is copied as text
  kVerbatim,  // the bytes are the text
  kJsonb,     // a version byte, then the text
  kBool,
  kInt2,
  kInt4,
  kOid,  // unsigned
  kInt8,
  kUuid,
};

// The one list of types binary COPY is used for.
Decoding DecodingOf(Oid type) {
  namespace t = type_oid;
  switch (type) {
    case t::kText:
    case t::kVarchar:
    case t::kBpchar:
    case t::kName:
    case t::kJson:
      return Decoding::kVerbatim;
    case t::kJsonb:
      return Decoding::kJsonb;
    case t::kBool:
      return Decoding::kBool;
    case t::kInt2:
      return Decoding::kInt2;
    case t::kInt4:
      return Decoding::kInt4;
    case t::kOid:
      return Decoding::kOid;
    case t::kInt8:
      return Decoding::kInt8;
    case t::kUuid:
      return Decoding::kUuid;
    default:
      return Decoding::kNone;
  }
}

// Sets *out to the text output form of `v`, a value of type `type` in its
// binary send form: a view into `v` itself, into a constant, or into
// `scratch`.
Status Decode(Oid type, std::string_view v, char* scratch,
              std::string_view* out) {
  const auto fixed = [&](size_t n) -> Status {
    return v.size() == n ? Status::OK() : WrongLength(type, v.size());
  };
  switch (DecodingOf(type)) {
    case Decoding::kVerbatim:
      *out = Verbatim(v);
      return Status::OK();
    case Decoding::kJsonb:
      // A format version (1), then the value's text as jsonb_out gives it.
      if (v.empty() || v[0] != 1)
        return Status::BadInput(
            "COPY binary jsonb value of an unknown version");
      *out = v.substr(1);
      return Status::OK();
    case Decoding::kBool:
      CDC_RETURN_IF_ERROR(fixed(1));
      *out = v[0] != 0 ? std::string_view("t") : std::string_view("f");
      return Status::OK();
    case Decoding::kInt2:
      CDC_RETURN_IF_ERROR(fixed(2));
      *out = PutNumber(static_cast<int16_t>(Be16(v.data())), scratch);
      return Status::OK();
    case Decoding::kInt4:
      CDC_RETURN_IF_ERROR(fixed(4));
      *out = PutNumber(static_cast<int32_t>(Be32(v.data())), scratch);
      return Status::OK();
    case Decoding::kOid:
      CDC_RETURN_IF_ERROR(fixed(4));
      *out = PutNumber(Be32(v.data()), scratch);
      return Status::OK();
    case Decoding::kInt8: {
      CDC_RETURN_IF_ERROR(fixed(8));
      const uint64_t u =
          (uint64_t{Be32(v.data())} << 32) | uint64_t{Be32(v.data() + 4)};
      *out = PutNumber(static_cast<int64_t>(u), scratch);
      return Status::OK();
    }
    case Decoding::kUuid: {
      CDC_RETURN_IF_ERROR(fixed(16));
      static constexpr char kHex[] = "0123456789abcdef";
      size_t n = 0;
      for (size_t i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) scratch[n++] = '-';
        const auto b = static_cast<unsigned char>(v[i]);
        scratch[n++] = kHex[b >> 4];
        scratch[n++] = kHex[b & 15];
      }
      *out = {scratch, n};
      return Status::OK();
    }
    case Decoding::kNone:
      break;
  }
  return Status::BadInput("COPY binary: type " + std::to_string(type) +
                          " is not decoded");
}

}  // namespace

bool BinaryCopyDecodes(Oid type) { return DecodingOf(type) != Decoding::kNone; }

Status CopyBinaryReader::Next(std::string_view msg, TupleData* row,
                              bool* got_row) {
  *got_row = false;
  if (trailer_) return Status::BadInput("COPY binary data after its trailer");
  if (!header_) {
    // The signature, the flags (bit 16: OIDs included, which we never ask
    // for; the low 16 bits must be zero) and an extension we skip.
    if (msg.size() < kSignatureBytes + 8 ||
        memcmp(msg.data(), kSignature, kSignatureBytes) != 0)
      return Status::BadInput("COPY binary data without its header");
    const uint32_t flags = Be32(msg.data() + kSignatureBytes);
    const uint32_t ext = Be32(msg.data() + kSignatureBytes + 4);
    if (flags != 0)
      return Status::BadInput("COPY binary header has flags " +
                              std::to_string(flags));
    msg.remove_prefix(kSignatureBytes + 8);
    if (ext > msg.size())
      return Status::BadInput("COPY binary header extension is cut short");
    msg.remove_prefix(ext);
    header_ = true;
    if (msg.empty()) return Status::OK();
  }
  if (msg.size() < 2) return Status::BadInput("COPY binary row is cut short");
  const auto fields = static_cast<int16_t>(Be16(msg.data()));
  msg.remove_prefix(2);
  if (fields == -1) {
    trailer_ = true;
    if (!msg.empty())
      return Status::BadInput("COPY binary data after its trailer");
    return Status::OK();
  }
  if (fields < 0 || static_cast<size_t>(fields) != types_.size())
    return Status::BadInput("COPY row has " + std::to_string(fields) +
                            " columns, expected " +
                            std::to_string(types_.size()));
  row->resize(types_.size());
  scratch_.resize(types_.size() * kScratchBytes);
  for (size_t i = 0; i < types_.size(); ++i) {
    if (msg.size() < 4) return Status::BadInput("COPY binary row is cut short");
    const auto len = static_cast<int32_t>(Be32(msg.data()));
    msg.remove_prefix(4);
    TupleColumn& c = (*row)[i];
    if (len == -1) {
      c.kind = TupleColumn::Kind::kNull;
      c.value.clear();
      c.view = {};
      continue;
    }
    if (len < 0 || static_cast<size_t>(len) > msg.size())
      return Status::BadInput("COPY binary row is cut short");
    c.kind = TupleColumn::Kind::kText;
    const std::string_view v = msg.substr(0, static_cast<size_t>(len));
    if (DecodingOf(types_[i]) == Decoding::kVerbatim) {
      c.view = Verbatim(v);  // the common case, ahead of Decode's switch
    } else {
      CDC_RETURN_IF_ERROR(
          Decode(types_[i], v, scratch_.data() + i * kScratchBytes, &c.view));
    }
    msg.remove_prefix(static_cast<size_t>(len));
  }
  if (!msg.empty())
    return Status::BadInput("COPY binary row has " +
                            std::to_string(msg.size()) + " bytes after it");
  *got_row = true;
  return Status::OK();
}

Status CopyBinaryReader::Finish() const {
  if (!trailer_) return Status::BadInput("COPY binary data ends early");
  return Status::OK();
}

}  // namespace cdc::pg
