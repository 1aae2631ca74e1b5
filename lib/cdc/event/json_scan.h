// One JSON object checked in place, for lines too long to copy.
//
// ParseJsonObject copies every value at least once, and nlohmann's lexer
// holds each string twice more while it reads it: a line with one 200 MB
// value costs about four times its size to parse. ScanJsonObject checks
// the same grammar without copying anything: memory is the line itself.
// It accepts exactly the lines ParseJsonObject accepts (strict RFC 8259 in
// valid UTF-8, one object, nesting at most kMaxJsonDepth, no number beyond
// a double's range, no top-level key twice; tests/event/json_scan_test.cpp
// holds the two to it); its reasons for refusing one are its own.
// Pure functions, safe to call from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/event/json_object.h"

namespace cdc::event {

// A member of the top-level object, its value left where it is.
struct JsonMemberView {
  std::string key;  // decoded
  JsonKind kind = JsonKind::kNull;
  // The value's text as the line writes it (a string with its quotes and
  // escapes; a number as written; an object or array with any white space
  // it holds).
  std::string_view text;
  uint64_t unsigned_value = 0;  // kUnsigned
};

// Checks `line` as ParseJsonObject does and lists its top-level members in
// order (views into `line`). BadInput with a one-line reason otherwise.
Status ScanJsonObject(std::string_view line, std::vector<JsonMemberView>* out);

// The value a JSON string token (with its quotes, checked before) stands
// for, appended to `out`: escapes decoded, \u surrogate pairs joined, as
// UTF-8.
void AppendDecodedJsonString(std::string_view token, std::string* out);

}  // namespace cdc::event
