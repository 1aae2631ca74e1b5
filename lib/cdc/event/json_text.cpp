#include "cdc/event/json_text.h"

#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cdc::event {

namespace {

size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto at = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  auto cont = [&](size_t k) { return k < s.size() && (at(k) & 0xc0) == 0x80; };
  uint8_t c = at(i);
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(i + 1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (!cont(i + 1) || !cont(i + 2)) return 0;
    if (c == 0xe0 && at(i + 1) < 0xa0) return 0;   // overlong
    if (c == 0xed && at(i + 1) >= 0xa0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (c == 0xf0 && at(i + 1) < 0x90) return 0;   // overlong
    if (c == 0xf4 && at(i + 1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

// Where in s[i...] the next byte that needs a look is: a control
// character, '"' or '\\', and (when `check`, for UTF-8 validation) one of
// 0x80 and above; s.size() if none.
template <bool check>
size_t NextSpecial(std::string_view s, size_t i) {
  const size_t n = s.size();
#if defined(__SSE2__)
  // Sixteen bytes at a time: most text needs no escaping.
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i control = _mm_set1_epi8(0x1f);
  for (; i + 16 <= n; i += 16) {
    const __m128i v =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    // v <= 0x1f unsigned exactly when max(v, 0x1f) == 0x1f.
    const __m128i hit = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
        _mm_cmpeq_epi8(_mm_max_epu8(v, control), control));
    int mask = _mm_movemask_epi8(hit);
    if (check) mask |= _mm_movemask_epi8(v);  // the high bits
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(mask));
  }
#endif
  for (; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == '"' || c == '\\' || (check && c >= 0x80)) return i;
  }
  return n;
}

// Appends s as a JSON string. With `check`, returns false (and appends
// nothing) when s is not valid UTF-8; one pass does both.
template <bool check>
bool Quote(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  static constexpr std::string_view kSpecial = "\"\\\b\f\n\r\t";
  static constexpr std::string_view kLetter = "\"\\bfnrt";
  const size_t mark = out->size();
  out->reserve(mark + s.size() + 2);
  out->push_back('"');
  size_t plain = 0;  // start of the run not yet copied
  for (size_t i = NextSpecial<check>(s, 0); i < s.size();
       i = NextSpecial<check>(s, i)) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {  // only when checking
      const size_t len = Utf8SequenceLength(s, i);
      if (len == 0) {
        out->resize(mark);
        return false;
      }
      i += len;
      continue;
    }
    out->append(s.data() + plain, i - plain);
    plain = i + 1;
    const size_t k = kSpecial.find(static_cast<char>(c));
    if (k != std::string_view::npos) {
      out->push_back('\\');
      out->push_back(kLetter[k]);
    } else {
      out->append("\\u00");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    }
    ++i;
  }
  out->append(s.data() + plain, s.size() - plain);
  out->push_back('"');
  return true;
}

void AppendQuoted(std::string_view s, std::string* out) {
  (void)Quote<false>(s, out);
}

// RFC 8259 number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// Returns the length of the number at s[p...], 0 if none.
size_t JsonNumberLength(std::string_view s, size_t p, bool integer_only) {
  size_t i = p;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    return i - start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (digits() == 0) {
    return 0;
  }
  if (integer_only) return i - p;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return 0;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return 0;
  }
  return i - p;
}

// Copies the JSON text `s` to `out` without insignificant whitespace,
// checking RFC 8259 grammar. Strings and numbers are copied byte for byte,
// so nothing is lost to a double or to key reordering. Iterative: nesting
// depth costs heap, not stack.
bool CompactJsonTo(std::string_view s, std::string* out) {
  size_t p = 0;
  std::vector<char> open;  // '{' or '['
  auto ws = [&] {
    while (p < s.size() &&
           (s[p] == ' ' || s[p] == '\t' || s[p] == '\n' || s[p] == '\r'))
      ++p;
  };
  auto string = [&]() -> bool {
    if (p >= s.size() || s[p] != '"') return false;
    size_t start = p++;
    bool pending_high = false;  // a \uD800-\uDBFF waiting for its pair
    while (p < s.size() && s[p] != '"') {
      auto c = static_cast<unsigned char>(s[p]);
      if (c < 0x20) return false;
      if (c != '\\') {
        if (pending_high) return false;
        ++p;
        continue;
      }
      if (++p >= s.size()) return false;
      char e = s[p++];
      if (e == 'u') {
        if (p + 4 > s.size()) return false;
        int v = 0;
        for (int k = 0; k < 4; ++k) {
          int h = HexValue(s[p + k]);
          if (h < 0) return false;
          v = v * 16 + h;
        }
        p += 4;
        bool high = v >= 0xd800 && v <= 0xdbff;
        bool low = v >= 0xdc00 && v <= 0xdfff;
        if (low != pending_high) return false;
        pending_high = high;
      } else if (pending_high || std::string_view("\"\\/bfnrt").find(e) ==
                                     std::string_view::npos) {
        return false;
      }
    }
    if (p >= s.size() || pending_high) return false;
    ++p;
    out->append(s.data() + start, p - start);
    return true;
  };
  auto scalar = [&]() -> bool {
    if (p >= s.size()) return false;
    if (s[p] == '"') return string();
    for (std::string_view lit : {"true", "false", "null"}) {
      if (s.substr(p, lit.size()) == lit) {
        out->append(lit);
        p += lit.size();
        return true;
      }
    }
    size_t n = JsonNumberLength(s, p, false);
    if (n == 0) return false;
    out->append(s.data() + p, n);
    p += n;
    return true;
  };
  // Each turn parses a value (or, right after '{', a key and a value);
  // opening a container loops back for its first member.
  bool want_key = false;
  while (true) {
    ws();
    if (want_key) {
      if (!string()) return false;
      ws();
      if (p >= s.size() || s[p] != ':') return false;
      out->push_back(':');
      ++p;
      ws();
      want_key = false;
    }
    if (p < s.size() && (s[p] == '{' || s[p] == '[')) {
      char c = s[p++];
      out->push_back(c);
      open.push_back(c);
      ws();
      char close = c == '{' ? '}' : ']';
      if (p < s.size() && s[p] == close) {
        ++p;
        out->push_back(close);
        open.pop_back();
      } else {
        want_key = c == '{';
        continue;
      }
    } else if (!scalar()) {
      return false;
    }
    // After a value: close containers, or go on to the next member.
    while (true) {
      ws();
      if (open.empty()) return p == s.size();
      if (p >= s.size()) return false;
      char close = open.back() == '{' ? '}' : ']';
      if (s[p] == close) {
        ++p;
        out->push_back(close);
        open.pop_back();
        continue;
      }
      if (s[p] != ',') return false;
      ++p;
      out->push_back(',');
      want_key = open.back() == '{';
      break;
    }
  }
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    // Row text is mostly ASCII: skip it sixteen, then eight bytes at a time.
#if defined(__SSE2__)
    while (i + 16 <= n &&
           _mm_movemask_epi8(_mm_loadu_si128(
               reinterpret_cast<const __m128i*>(s.data() + i))) == 0)
      i += 16;
#endif
    uint64_t w;
    while (i + 8 <= n) {
      std::memcpy(&w, s.data() + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    while (i < n && static_cast<uint8_t>(s[i]) < 0x80) ++i;
    if (i == n) break;
    size_t len = Utf8SequenceLength(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

bool AppendJsonString(std::string_view s, std::string* out) {
  return Quote<true>(s, out);
}

void AppendJsonStringUnchecked(std::string_view s, std::string* out) {
  AppendQuoted(s, out);
}

void AppendBase64(std::string_view bytes, std::string* out) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  out->reserve(out->size() + (bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  auto byte = [&](size_t k) {
    return static_cast<uint32_t>(static_cast<uint8_t>(bytes[k]));
  };
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    for (int shift = 18; shift >= 0; shift -= 6) {
      out->push_back(kAlphabet[(v >> shift) & 63]);
    }
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = byte(i) << 16 | (rest == 2 ? byte(i + 1) << 8 : 0);
    out->push_back(kAlphabet[(v >> 18) & 63]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out->push_back('=');
  }
}

bool IsJsonNumber(std::string_view s, bool integer_only) {
  return !s.empty() && JsonNumberLength(s, 0, integer_only) == s.size();
}

bool AppendCompactJson(std::string_view text, std::string* out) {
  size_t mark = out->size();
  if (IsValidUtf8(text) && CompactJsonTo(text, out)) return true;
  out->resize(mark);
  return false;
}

namespace {
int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

bool AppendBase64AsHex(std::string_view b64, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  if (b64.size() % 4 != 0) return false;
  const size_t start = out->size();
  for (size_t i = 0; i < b64.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = b64[i + k];
      if (c == '=' && i + 4 == b64.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      v[k] = pad > 0 ? -1 : Base64Value(c);
      if (v[k] < 0) {
        out->resize(start);
        return false;
      }
    }
    const uint32_t n =
        static_cast<uint32_t>(v[0]) << 18 | static_cast<uint32_t>(v[1]) << 12 |
        static_cast<uint32_t>(v[2]) << 6 | static_cast<uint32_t>(v[3]);
    for (int k = 0; k < 3 - pad; ++k) {
      const unsigned byte = (n >> (16 - 8 * k)) & 0xff;
      out->push_back(kHex[byte >> 4]);
      out->push_back(kHex[byte & 15]);
    }
  }
  return true;
}

}  // namespace cdc::event
