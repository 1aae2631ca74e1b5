// A big-endian writer for building pgoutput messages byte by byte in tests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cdc::pg::test {

class Wire {
 public:
  explicit Wire(char type) { data_.push_back(type); }

  Wire& U8(uint8_t v) {
    data_.push_back(static_cast<char>(v));
    return *this;
  }
  Wire& I16(int16_t v) { return Be(static_cast<uint16_t>(v), 2); }
  Wire& I32(int32_t v) { return Be(static_cast<uint32_t>(v), 4); }
  Wire& U32(uint32_t v) { return Be(v, 4); }
  Wire& U64(uint64_t v) { return Be(v, 8); }
  // A NUL-terminated String.
  Wire& Str(std::string_view s) {
    data_.append(s);
    data_.push_back('\0');
    return *this;
  }
  Wire& Raw(std::string_view s) {
    data_.append(s);
    return *this;
  }
  // TupleData columns.
  Wire& Text(std::string_view v) { return U8('t').I32(Len(v)).Raw(v); }
  Wire& Binary(std::string_view v) { return U8('b').I32(Len(v)).Raw(v); }
  Wire& Null() { return U8('n'); }
  Wire& Toast() { return U8('u'); }

  const std::string& data() const { return data_; }

 private:
  static int32_t Len(std::string_view v) {
    return static_cast<int32_t>(v.size());
  }
  Wire& Be(uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) {
      data_.push_back(static_cast<char>(v >> (8 * i)));
    }
    return *this;
  }

  std::string data_;
};

}  // namespace cdc::pg::test
