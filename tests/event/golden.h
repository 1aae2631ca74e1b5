// Helpers of the golden tests of --format debezium: the documented events
// (tests/event/golden), one rendered event as JSON, and a field-by-field
// comparison.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cdc/event/renderer.h"

namespace cdc::event::golden {

using Json = nlohmann::ordered_json;

// tests/event/golden/`name`, parsed.
inline Json Load(const std::string& name) {
  const std::string path =
      std::string(CDC_SOURCE_DIR) + "/tests/event/golden/" + name;
  std::ifstream in(path);
  if (!in) FAIL("cannot read " << path);
  return Json::parse(in);
}

// Event `i` of the "events" of tests/event/golden/`name` (read once).
inline Json Event(const std::string& name, size_t i) {
  static std::map<std::string, Json> files;
  auto it = files.find(name);
  if (it == files.end()) it = files.emplace(name, Load(name)).first;
  return it->second["events"][i];
}

// The one line `r` renders for the stored event, parsed.
inline Json Render(Renderer& r, uint64_t seq, const std::string& stored,
                   bool last) {
  std::string out;
  Status s = r.Append(seq, stored, last, &out);
  INFO(s.ToString());
  REQUIRE(s.ok());
  REQUIRE(!out.empty());
  REQUIRE(out.back() == '\n');
  REQUIRE(out.find('\n') == out.size() - 1);
  return Json::parse(out);
}

// Every member of `want` is in `got` with the same JSON type and, unless
// its path is in `shape_only`, the same value. Members of `got` that
// `want` lacks must be in `extra`.
inline void CompareFields(const Json& want, const Json& got,
                          const std::string& path,
                          const std::vector<std::string>& shape_only,
                          const std::vector<std::string>& extra) {
  INFO("at " << path);
  REQUIRE(got.type_name() == std::string(want.type_name()));
  if (want.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it) {
      INFO("field " << path + "/" + it.key());
      REQUIRE(got.contains(it.key()));
      CompareFields(it.value(), got[it.key()], path + "/" + it.key(),
                    shape_only, extra);
    }
    for (auto it = got.begin(); it != got.end(); ++it) {
      if (want.contains(it.key())) continue;
      INFO("extra field " << path + "/" + it.key());
      CHECK(std::find(extra.begin(), extra.end(), path + "/" + it.key()) !=
            extra.end());
    }
    return;
  }
  if (std::find(shape_only.begin(), shape_only.end(), path) != shape_only.end())
    return;
  CHECK(got == want);
}

}  // namespace cdc::event::golden
