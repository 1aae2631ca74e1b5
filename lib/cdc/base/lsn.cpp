#include "cdc/base/lsn.h"

#include <cstdio>

namespace cdc {

namespace {

// Upper-case hex without leading zeros ("0" for zero), as PostgreSQL
// prints each half of an LSN; returns the end of what it wrote.
char* PutHex32(uint32_t v, char* p) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  int shift = 28;
  while (shift > 0 && (v >> shift) == 0) shift -= 4;
  for (; shift >= 0; shift -= 4) *p++ = kDigits[(v >> shift) & 0xF];
  return p;
}

}  // namespace

std::string FormatLsn(Lsn lsn) {
  // Once per transaction on capture's hot path: no printf.
  char buf[24];
  char* p = PutHex32(static_cast<uint32_t>(lsn >> 32), buf);
  *p++ = '/';
  p = PutHex32(static_cast<uint32_t>(lsn), p);
  return std::string(buf, p);
}

Result<Lsn> ParseLsn(std::string_view s) {
  auto bad = [&] {
    return Status::BadInput("invalid LSN \"" + std::string(s) +
                            "\" (expected X/Y in hex, e.g. 0/1634F28)");
  };
  size_t slash = s.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash > 8 ||
      slash + 1 == s.size() || s.size() - slash - 1 > 8)
    return bad();
  uint64_t parts[2] = {0, 0};
  std::string_view halves[2] = {s.substr(0, slash), s.substr(slash + 1)};
  for (int i = 0; i < 2; ++i) {
    for (char c : halves[i]) {
      int v;
      if (c >= '0' && c <= '9')
        v = c - '0';
      else if (c >= 'a' && c <= 'f')
        v = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        v = c - 'A' + 10;
      else
        return bad();
      parts[i] = parts[i] * 16 + static_cast<uint64_t>(v);
    }
  }
  return (parts[0] << 32) | parts[1];
}

}  // namespace cdc
