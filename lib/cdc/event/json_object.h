// One JSON object from untrusted input, taken apart without building a DOM.
//
// nlohmann's DOM is unsafe on hostile text: ordered_json looks keys up
// linearly (an object of n keys costs n^2), serializing recurses once per
// nesting level (100,000 levels overflow the stack) and a number beyond a
// double's range throws from the middle of the parse. Here nlohmann's SAX
// parser (iterative) feeds a renderer that writes each value compactly as it
// arrives: time and memory are linear in the input, nesting is bounded
// before it costs anything, and numbers keep their original text, so
// 0.1000000000000000000001 or a 30-digit integer stay exact.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"

namespace cdc::event {

// Deepest nesting of objects and arrays accepted in one line (the line's
// own object is level 1). Documented in cdc-log(1).
inline constexpr int kMaxJsonDepth = 512;

enum class JsonKind {
  kNull,
  kBool,
  kInteger,
  kUnsigned,
  kFloat,
  kString,
  kObject,
  kArray
};

// A member of the top-level object.
struct JsonMember {
  std::string key;
  JsonKind kind = JsonKind::kNull;
  size_t begin = 0, end = 0;  // its compact value text in JsonObject::text
  std::string string_value;   // kString: the decoded string
  uint64_t unsigned_value = 0;
};

struct JsonObject {
  std::string text;  // compact rendering of every member value, back to back
  std::vector<JsonMember> members;  // in input order, keys unique
  std::string_view value(const JsonMember& m) const {
    return std::string_view(text).substr(m.begin, m.end - m.begin);
  }
  const JsonMember* find(std::string_view key) const;
};

// Parses `line` as one JSON object (RFC 8259, valid UTF-8). BadInput with a
// one-line reason when it is not JSON, not an object, nested deeper than
// kMaxJsonDepth, holds a number out of a double's range, or repeats a
// top-level key.
Status ParseJsonObject(std::string_view line, JsonObject* out);

}  // namespace cdc::event
