// JSON text helpers shared by the writer (capture's event builder) and the
// readers (renderers): UTF-8 validation, string escaping, base64, number
// syntax, and compaction of JSON text that keeps every string and number
// exactly as written. No DOM.
// Pure functions, safe to call from any thread.
#pragma once

#include <string>
#include <string_view>

namespace cdc::event {

// True if `s` is well-formed UTF-8 (no overlong forms, surrogates or code
// points above U+10FFFF).
bool IsValidUtf8(std::string_view s);

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
// The value of a hex digit, or -1.
inline int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Appends `s` as a quoted, escaped JSON string. False, leaving `out` as it
// was, if `s` is not valid UTF-8.
bool AppendJsonString(std::string_view s, std::string* out);

// The same for `s` known to be valid UTF-8 (decoded by a JSON parser,
// checked before): no check, so invalid UTF-8 would be copied as it is.
void AppendJsonStringUnchecked(std::string_view s, std::string* out);

// Appends standard base64 (RFC 4648, padded), without quotes.
void AppendBase64(std::string_view bytes, std::string* out);
// The bytes of standard padded base64 (as AppendBase64 writes it) as
// lowercase hex, appended to `out`; false (and `out` as it was) for text
// that is not such base64.
bool AppendBase64AsHex(std::string_view b64, std::string* out);

// True if `s` is exactly an RFC 8259 number; with `integer_only`, one
// without fraction or exponent.
bool IsJsonNumber(std::string_view s, bool integer_only);

// Appends the JSON text `text` without insignificant whitespace. Strings
// (escapes included) and numbers are copied byte for byte, so nothing is
// rounded through a double, and object keys keep their order and
// duplicates. False, leaving `out` as it was, unless `text` is one strict
// RFC 8259 value in valid UTF-8 (unpaired \u surrogate escapes included).
bool AppendCompactJson(std::string_view text, std::string* out);

}  // namespace cdc::event
