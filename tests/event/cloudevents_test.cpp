// --format cloudevents, checked against the rules of the CloudEvents 1.0
// JSON schema (cloudevents/spec, formats/cloudevents.json) and the
// attribute naming rules of the CloudEvents 1.0 specification.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "cdc/base/time.h"
#include "cdc/event/event.h"
#include "cdc/event/renderer.h"

namespace cdc::event {
namespace {

using Json = nlohmann::ordered_json;

// RFC 3986 URI-reference: only unreserved, reserved and '%' HEX HEX.
bool IsUriReference(const std::string& s) {
  static const std::regex re(
      R"(^([A-Za-z][A-Za-z0-9+.-]*:)?([A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$)");
  return std::regex_match(s, re);
}

bool IsRfc3339(const std::string& s) {
  static const std::regex re(
      R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$)");
  return std::regex_match(s, re) && ParseTimestamp(s).ok();
}

// The schema's rules, as a checker: one failure message, or "".
std::string Violation(const Json& e) {
  if (!e.is_object()) return "not an object";
  for (const char* k : {"id", "source", "specversion", "type"}) {
    if (!e.contains(k)) return std::string("missing required ") + k;
  }
  for (auto it = e.begin(); it != e.end(); ++it) {
    const std::string& k = it.key();
    // Context attribute names: a-z and 0-9, at most 20 characters.
    if (!std::regex_match(k, std::regex("^[a-z0-9]{1,20}$")))
      return "attribute name " + k;
    if (k == "data") continue;
    const Json& v = it.value();
    if (k == "datacontenttype" && v.is_null()) continue;
    if (!v.is_string() || v.get<std::string>().empty())
      return k + " is not a non-empty string";
  }
  if (e["specversion"] != "1.0") return "specversion";
  if (!IsUriReference(e["source"])) return "source is not a URI-reference";
  if (e.contains("time") && !IsRfc3339(e["time"])) return "time";
  if (e.contains("dataschema") && !IsUriReference(e["dataschema"]))
    return "dataschema";
  if (e.contains("data") && e.contains("data_base64")) return "two data";
  return "";
}

const char* kEvents[] = {
    R"({"lsn":"0/10","xid":5,"ts":"2026-11-29T07:41:02.123456Z","op":"c","schema":"public","table":"orders","key":{"id":1},"before":null,"after":{"id":1}})",
    R"({"lsn":"0/10","xid":5,"ts":"2026-11-29T07:41:02.123456Z","op":"u","schema":"public","table":"orders","key":{"id":1},"before":null,"after":{"id":1}})",
    R"({"lsn":"0/10","xid":5,"ts":"2026-11-29T07:41:02.123456Z","op":"d","schema":"public","table":"orders","key":{"id":1},"before":null,"after":null})",
    R"({"lsn":"0/10","xid":5,"ts":"2026-11-29T07:41:02.123456Z","op":"t","schema":"public","table":"orders","key":null,"before":null,"after":null,"options":{"cascade":false,"restart_identity":false}})",
    R"({"lsn":"0/10","xid":5,"ts":"2026-11-29T07:41:02.123456Z","op":"r","schema":"sales","table":"odd \"name\"","key":{"id":1},"before":null,"after":{"id":1}})",
    R"({"lsn":"0/10","xid":5,"ts":"2026-11-29T07:41:02.123456Z","op":"m","prefix":"p","content":"hi","transactional":true})",
    R"({"lsn":"0/10","xid":5,"ts":"2026-11-29T07:41:02.123456Z","op":"s","schema":"public","table":"orders","key":null,"before":null,"after":null,"columns":[]})",
};
const char* kTypes[] = {"insert", "update",  "delete", "truncate",
                        "read",   "message", "schema"};

TEST_CASE("cloudevents output follows the CloudEvents 1.0 JSON schema",
          "[event][cloudevents]") {
  SourceInfo src;
  src.log_id = "893d7fe3732a252221cf1d036563f303";
  src.system_id = "7300000000000000001";
  src.database = "shop db/é";
  RenderOptions o;
  o.format = Format::kCloudEvents;
  auto r = MakeRenderer(o, src);
  std::set<std::string> ids;
  for (size_t i = 0; i < std::size(kEvents); ++i) {
    INFO(kEvents[i]);
    std::string out;
    const bool last = i + 1 == std::size(kEvents);
    REQUIRE(r->Append(100 + i, kEvents[i], last, &out).ok());
    REQUIRE(out.find('\n') == out.size() - 1);
    Json e = Json::parse(out);
    CHECK(Violation(e) == "");
    CHECK(e["id"] == src.log_id + "-" + std::to_string(100 + i));
    ids.insert(e["id"]);
    CHECK(e["source"] ==
          "cdc://postgresql/7300000000000000001/"
          "shop%20db%2F%C3%A9/893d7fe3732a252221cf1d036563f303");
    CHECK(e["type"] == std::string("io.cdc.postgresql.") + kTypes[i]);
    CHECK(e["time"] == "2026-11-29T07:41:02.123456Z");
    CHECK(e["datacontenttype"] == "application/json");
    // data is the native event, exactly
    std::string native;
    AppendNative(100 + i, kEvents[i], last, &native);
    CHECK(e["data"] == Json::parse(native));
    if (kTypes[i] == std::string("message")) {
      CHECK_FALSE(e.contains("subject"));
    } else if (kTypes[i] == std::string("read")) {
      CHECK(e["subject"] == "sales.odd \"name\"");
    } else {
      CHECK(e["subject"] == "public.orders");
    }
    // The same event rendered again (a replay) has the same id.
    auto again = MakeRenderer(o, src);
    std::string replay;
    REQUIRE(again->Append(100 + i, kEvents[i], last, &replay).ok());
    CHECK(replay == out);
  }
  CHECK(ids.size() == std::size(kEvents));
}

TEST_CASE("the schema checker rejects what the schema rejects",
          "[event][cloudevents]") {
  Json ok = Json::parse(
      R"({"specversion":"1.0","id":"a","source":"cdc://x/y","type":"t"})");
  CHECK(Violation(ok) == "");
  for (
      const char* bad :
      {R"({"id":"a","source":"s","type":"t"})",
       R"({"specversion":"1.0","id":"","source":"s","type":"t"})",
       R"({"specversion":"1.0","id":"a","source":"has space","type":"t"})",
       R"({"specversion":"1.0","id":"a","source":"s","type":"t","time":"yesterday"})",
       R"({"specversion":"1.0","id":"a","source":"s","type":"t","Bad":"x"})",
       R"({"specversion":"1.0","id":1,"source":"s","type":"t"})"}) {
    INFO(bad);
    CHECK(Violation(Json::parse(bad)) != "");
  }
}

TEST_CASE("a log without a source names the log alone",
          "[event][cloudevents]") {
  SourceInfo src;
  src.log_id = "00000000000000000000000000000001";
  RenderOptions o;
  o.format = Format::kCloudEvents;
  auto r = MakeRenderer(o, src);
  std::string out;
  REQUIRE(r->Append(1, kEvents[0], true, &out).ok());
  Json e = Json::parse(out);
  CHECK(e["source"] == "cdc://import/00000000000000000000000000000001");
  CHECK(Violation(e) == "");
}

}  // namespace
}  // namespace cdc::event
