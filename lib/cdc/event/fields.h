// The top-level members of an event line (or of its "key" or "after"
// object), as the sinks need them: each value's compact JSON text
// and, for a string, the string it stands for.
//
// The log stores compact JSON whose strings are escaped one way (as
// event::AppendJsonString writes them), and cdc-tail prints it so. Such
// text is taken apart where it is: every member is a view into it, and
// only a string holding an escape is decoded into a copy. A value of
// 200 MB thus costs nothing more to parse (or one copy, when it holds an
// escape). Any other JSON is parsed in full (event::ParseJsonObject) into
// a copy first; both ways give the same members, text and strings.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/event/json_object.h"

namespace cdc::event {

struct Field {
  std::string_view key;
  JsonKind kind = JsonKind::kNull;  // numbers: kFloat
  std::string_view value;           // compact JSON text
  std::string_view str;             // kString: the decoded string; else empty
};

// Not thread-safe. Views stay valid until the next Parse or Release.
class Fields {
 public:
  // Takes `text` (one JSON object) apart. It must stay alive and
  // unchanged while the fields are used. BadInput when it is not a JSON
  // object.
  Status Parse(std::string_view text);
  const Field* find(std::string_view key) const;
  const std::vector<Field>& members() const { return fields_; }
  // Frees what a long value made the fields hold (decoded strings, the
  // full parse's copy); the fields are empty afterwards.
  void Release();

 private:
  bool FastParse(std::string_view s);
  std::string* Scratch();

  std::vector<Field> fields_;
  std::deque<std::string> decoded_;  // stable addresses; reused
  size_t decoded_used_ = 0;
  JsonObject full_;  // the full parse's copy
};

}  // namespace cdc::event
