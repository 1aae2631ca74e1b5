#include "cdc/pg/event_builder.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cdc/base/time.h"
#include "cdc/event/event.h"
#include "pg/wire.h"

namespace cdc::pg {
namespace {

using test::Wire;

const int64_t kCommit = *ParseTimestamp("2026-11-29T07:41:02.123456Z");
const int64_t kClock = kCommit + 1000000;
constexpr Lsn kCommitLsn = 0x1634F28;
constexpr Oid kOrders = 16384;
constexpr Oid kItems = 16390;
const std::string kHead =
    R"({"lsn":"0/1634F28","xid":750,"ts":"2026-11-29T07:41:02.123456Z")";

TupleColumn T(std::string v) {
  return {TupleColumn::Kind::kText, std::move(v), {}};
}
TupleColumn N() { return {TupleColumn::Kind::kNull, {}, {}}; }
TupleColumn U() { return {TupleColumn::Kind::kUnchangedToast, {}, {}}; }

// public.orders (id int4 key, status text, total numeric, doc text); under
// REPLICA IDENTITY FULL every column is flagged as key.
Relation Orders(bool full = false) {
  Relation r;
  r.oid = kOrders;
  r.nspname = "public";
  r.relname = "orders";
  r.replica_identity = full ? 'f' : 'd';
  uint8_t other = full ? 1 : 0;
  r.columns = {{1, "id", 23, -1},
               {other, "status", 25, -1},
               {other, "total", 1700, -1},
               {other, "doc", 25, -1}};
  return r;
}

Relation Items() {
  Relation r;
  r.oid = kItems;
  r.nspname = "shop";
  r.relname = "items";
  r.replica_identity = 'n';
  r.columns = {{0, "name", 25, -1}};
  return r;
}

// Each stored line must be what `cdc-log import` would store for it.
void CheckStoredForm(const std::string& line) {
  INFO(line);
  auto imported = event::ParseImportLine(line);
  REQUIRE(imported.ok());
  CHECK(imported->stored == line);
  event::EventHead head;
  CHECK(event::ParseHead(line, &head));
}

struct Fixture {
  EventBuilder builder{nullptr, [] { return kClock; }};
  EventLines events;

  void Ok(const Message& m) {
    Status s = builder.Apply(m, &events);
    INFO(s.ToString());
    REQUIRE(s.ok());
    for (const std::string& line : events) CheckStoredForm(line);
  }
  std::string Err(const Message& m) {
    size_t before = events.size();
    Status s = builder.Apply(m, &events);
    REQUIRE_FALSE(s.ok());
    CHECK(events.size() == before);
    return s.message();
  }
  // The log holds `r`'s schema event already (a capture before this one
  // wrote it): its first sight is no news.
  void Know(const Relation& r) {
    EventBuilder other{nullptr, [] { return kClock; }};
    EventLines lines;
    REQUIRE(other.Apply(Begin{kCommitLsn, kCommit, 1}, &lines).ok());
    REQUIRE(other.Apply(r, &lines).ok());
    REQUIRE(other.Apply(Truncate{0, {r.oid}}, &lines).ok());
    REQUIRE(lines.size() == 2);
    REQUIRE(lines.is_schema(0));
    builder.KnowSchemaEvent(lines[0]);
  }
  // Opens transaction 750 and describes the relations, whose schema
  // events the log holds.
  void Start(bool full = false) {
    Know(Orders(full));
    Know(Items());
    Ok(Begin{kCommitLsn, kCommit, 750});
    Ok(Orders(full));
    Ok(Items());
    REQUIRE(events.empty());
  }
  // The two lines a change yields after a relation's new description:
  // its schema event (returned in *schema) and the change (returned).
  std::string AfterSchema(std::string* schema = nullptr) {
    REQUIRE(events.size() == 2);
    CHECK(events.is_schema(0));
    CHECK_FALSE(events.is_schema(1));
    if (schema != nullptr) *schema = events[0];
    std::string line = events[1];
    events.clear();
    return line;
  }
  std::string Only() {
    REQUIRE(events.size() == 1);
    std::string line = events[0];
    events.clear();
    return line;
  }
};

TEST_CASE("insert: key from the new row, after the row", "[pg]") {
  Fixture f;
  f.Start();
  f.Ok(Insert{kOrders, {T("7"), T("new"), T("12.50"), N()}});
  CHECK(f.Only() == kHead + R"(,"op":"c","schema":"public","table":"orders",)"
                            R"("key":{"id":7},"before":null,)"
                            R"("after":{"id":7,"status":"new","total":"12.50",)"
                            R"("doc":null}})");
  // A relation without identity columns has a null key; binary values
  // are base64.
  f.Ok(Insert{kItems, {{TupleColumn::Kind::kBinary, "\xff", {}}}});
  CHECK(f.Only() == kHead +
                        R"(,"op":"c","schema":"shop","table":"items",)"
                        R"("key":null,"before":null,"after":{"name":"/w=="}})");
  f.Ok(Commit{0, kCommitLsn, kCommitLsn + 0x30, kCommit});
  CHECK(f.events.empty());
  CHECK_FALSE(f.builder.in_transaction());
}

TEST_CASE("update under DEFAULT: unchanged TOAST is listed, not invented",
          "[pg]") {
  Fixture f;
  f.Start();
  f.Ok(Update{kOrders, 0, {}, {T("7"), T("paid"), T("12.50"), U()}});
  CHECK(f.Only() == kHead +
                        R"(,"op":"u","schema":"public","table":"orders",)"
                        R"("key":{"id":7},"before":null,)"
                        R"("after":{"id":7,"status":"paid","total":"12.50"},)"
                        R"("unchanged":["doc"]})");
}

TEST_CASE("update under FULL: before is the old row, TOAST filled from it",
          "[pg]") {
  Fixture f;
  f.Start(/*full=*/true);
  f.Ok(Update{kOrders,
              'O',
              {T("7"), T("new"), T("12.50"), T("big doc")},
              {T("7"), T("paid"), T("12.50"), U()}});
  const std::string old_row =
      R"({"id":7,"status":"new","total":"12.50","doc":"big doc"})";
  CHECK(f.Only() == kHead +
                        R"(,"op":"u","schema":"public","table":"orders",)"
                        R"("key":)" +
                        old_row + R"(,"before":)" + old_row +
                        R"(,"after":{"id":7,"status":"paid","total":"12.50",)"
                        R"("doc":"big doc"}})");
}

TEST_CASE("update with a key change: key from the K tuple, before null",
          "[pg]") {
  Fixture f;
  f.Start();
  // In a K tuple the non-key columns come as 'n': "not sent", left out.
  f.Ok(Update{
      kOrders, 'K', {T("7"), N(), N(), N()}, {T("8"), T("paid"), N(), U()}});
  CHECK(f.Only() == kHead + R"(,"op":"u","schema":"public","table":"orders",)"
                            R"("key":{"id":7},"before":null,)"
                            R"("after":{"id":8,"status":"paid","total":null},)"
                            R"("unchanged":["doc"]})");
}

TEST_CASE("delete: key from the old tuple, before only under FULL", "[pg]") {
  Fixture f;
  f.Start();
  f.Ok(Delete{kOrders, 'K', {T("7"), N(), N(), N()}});
  CHECK(f.Only() == kHead + R"(,"op":"d","schema":"public","table":"orders",)"
                            R"("key":{"id":7},"before":null,"after":null})");

  Fixture full;
  full.Start(/*full=*/true);
  full.Ok(Delete{kOrders, 'O', {T("7"), T("paid"), N(), T("d")}});
  const std::string old_row =
      R"({"id":7,"status":"paid","total":null,"doc":"d"})";
  CHECK(full.Only() == kHead +
                           R"(,"op":"d","schema":"public","table":"orders",)"
                           R"("key":)" +
                           old_row + R"(,"before":)" + old_row +
                           R"(,"after":null})");
}

TEST_CASE("truncate: one event per relation with its options", "[pg]") {
  Fixture f;
  f.Start();
  f.Ok(Truncate{Truncate::kCascade, {kOrders, kItems}});
  REQUIRE(f.events.size() == 2);
  CHECK(f.events[0] == kHead +
                           R"(,"op":"t","schema":"public","table":"orders",)"
                           R"("key":null,"before":null,"after":null,)"
                           R"("options":{"cascade":true,)"
                           R"("restart_identity":false}})");
  CHECK(f.events[1] == kHead + R"(,"op":"t","schema":"shop","table":"items",)"
                               R"("key":null,"before":null,"after":null,)"
                               R"("options":{"cascade":true,)"
                               R"("restart_identity":false}})");
  f.events.clear();
  // One unknown relation: nothing at all for this message.
  CHECK(f.Err(Truncate{Truncate::kRestartIdentity, {kOrders, 1}}) ==
        "pgoutput Truncate for relation OID 1 that no Relation message "
        "described");
}

TEST_CASE("logical decoding messages", "[pg]") {
  Fixture f;
  f.Start();
  f.Ok(LogicalMessage{LogicalMessage::kTransactional, 0x1634F00, "app",
                      "hello \"x\""});
  CHECK(f.Only() == kHead + R"(,"op":"m","prefix":"app",)"
                            R"("content":"hello \"x\"","transactional":true})");
  f.Ok(Commit{0, kCommitLsn, kCommitLsn + 0x30, kCommit});
  // Non-transactional: outside any transaction, its own LSN, xid 0 and the
  // clock's time; content that is not UTF-8 goes as base64.
  f.Ok(LogicalMessage{0, 0x1700000, "app", std::string("\xff\x00", 2)});
  CHECK(f.Only() ==
        R"({"lsn":"0/1700000","xid":0,"ts":"2026-11-29T07:41:03.123456Z",)"
        R"("op":"m","prefix":"app","content":"/wA=",)"
        R"("content_encoding":"base64","transactional":false})");
  CHECK(f.Err(LogicalMessage{1, 1, "app", "x"}) ==
        "pgoutput Message message outside a transaction");
}

TEST_CASE("schema changes: new shapes are reported, repeats are not", "[pg]") {
  Fixture f;
  f.Start();
  f.Ok(Orders());  // an identical repeat
  f.Ok(Insert{kOrders, {T("1"), N(), N(), N()}});
  CHECK_FALSE(f.events.is_schema(0));
  f.events.clear();

  Relation added = Orders();
  added.columns.push_back({0, "note", 1043, 24});
  f.Ok(added);
  CHECK(f.events.empty());  // said before the next change to the table
  f.Ok(added);
  f.Ok(Insert{kOrders, {T("1"), N(), N(), N(), T("n")}});
  std::string schema;
  // The cache follows the new shape.
  CHECK(f.AfterSchema(&schema).find(R"("note":"n")") != std::string::npos);
  CHECK(schema == kHead + R"(,"op":"s","schema":"public","table":"orders",)"
                          R"("key":null,"before":null,"after":null,"columns":[)"
                          R"({"name":"id","type_oid":23,"key":true},)"
                          R"({"name":"status","type_oid":25,"key":false},)"
                          R"({"name":"total","type_oid":1700,"key":false},)"
                          R"({"name":"doc","type_oid":25,"key":false},)"
                          R"({"name":"note","type_oid":1043,"type_mod":24,)"
                          R"("key":false}]})");
  f.Ok(Insert{kOrders, {T("2"), N(), N(), N(), T("n")}});
  CHECK_FALSE(f.events.is_schema(0));  // once
  f.events.clear();

  const Delete del{kOrders, 'K', {T("1"), N(), N(), N(), N()}};
  Relation retyped = added;
  retyped.columns[1].type_oid = 1043;
  f.Ok(retyped);
  f.Ok(del);
  f.AfterSchema(&schema);
  CHECK(schema.find(R"({"name":"status","type_oid":1043,"key":false})") !=
        std::string::npos);
  Relation resized = retyped;
  resized.columns[1].type_modifier = 36;  // varchar(32) from varchar
  f.Ok(resized);
  f.Ok(del);
  f.AfterSchema(&schema);
  // The modifier is recorded: readers need it (numeric scale, precision).
  CHECK(schema.find(
            R"({"name":"status","type_oid":1043,"type_mod":36,"key":false})") !=
        std::string::npos);
  Relation renamed = resized;
  renamed.relname = "purchase_orders";
  f.Ok(renamed);
  CHECK(f.events.empty());
  // Two descriptions before a change: the last one is the news.
  Relation full = renamed;
  full.replica_identity = 'f';
  for (auto& c : full.columns) c.flags = 1;
  f.Ok(full);
  f.Ok(Truncate{0, {kOrders}});
  CHECK(f.AfterSchema(&schema).find(R"("op":"t")") != std::string::npos);
  CHECK(schema.find(R"("table":"purchase_orders")") != std::string::npos);
  CHECK(schema.find(R"({"name":"doc","type_oid":25,"key":true})") !=
        std::string::npos);
  // A new OID of a name and shape the log has: nothing to report.
  Relation other = Items();
  other.oid = 20000;
  f.Ok(other);
  f.Ok(Truncate{0, {20000}});
  CHECK_FALSE(f.events.is_schema(0));
  CHECK(f.Only().find(R"("table":"items")") != std::string::npos);
  REQUIRE(f.builder.FindRelation(20000) != nullptr);
  CHECK(f.builder.FindRelation(20000)->relname == "items");
  CHECK(f.builder.FindRelation(1) == nullptr);
}

TEST_CASE(
    "a relation's first change comes after a schema event, unless the "
    "log has its shape",
    "[pg]") {
  const std::string orders_s =
      kHead + R"(,"op":"s","schema":"public","table":"orders",)"
              R"("key":null,"before":null,"after":null,"columns":[)"
              R"({"name":"id","type_oid":23,"key":true},)"
              R"({"name":"status","type_oid":25,"key":false},)"
              R"({"name":"total","type_oid":1700,"key":false},)"
              R"({"name":"doc","type_oid":25,"key":false}]})";
  {
    Fixture f;
    f.Ok(Begin{kCommitLsn, kCommit, 750});
    f.Ok(Orders());
    f.Ok(Items());  // described, never changed: no schema event
    CHECK(f.events.empty());
    f.Ok(Insert{kOrders, {T("7"), T("new"), T("12.50"), N()}});
    std::string schema;
    CHECK(f.AfterSchema(&schema).find(R"("op":"c")") != std::string::npos);
    CHECK(schema == orders_s);
    f.Ok(Insert{kOrders, {T("8"), T("new"), T("12.50"), N()}});
    CHECK(f.Only().find(R"("op":"c")") != std::string::npos);
  }
  {
    // A later capture of the same log: the log's schema event (another
    // commit LSN in its head) is the shape PostgreSQL sends again.
    Fixture f;
    f.builder.KnowSchemaEvent(
        R"({"lsn":"0/1","xid":9,"ts":"2026-01-01T00:00:00Z")" +
        orders_s.substr(kHead.size()));
    f.Ok(Begin{kCommitLsn, kCommit, 750});
    f.Ok(Orders());
    f.Ok(Insert{kOrders, {T("7"), T("new"), T("12.50"), N()}});
    CHECK(f.Only().find(R"("op":"c")") != std::string::npos);
    // ... but not Orders once it changed while no one looked.
    Fixture g;
    g.builder.KnowSchemaEvent(
        R"({"lsn":"0/1","xid":9,"ts":"2026-01-01T00:00:00Z")" +
        orders_s.substr(kHead.size()));
    g.Ok(Begin{kCommitLsn, kCommit, 750});
    Relation added = Orders();
    added.columns.push_back({0, "note", 1043, 24});
    g.Ok(added);
    g.Ok(Insert{kOrders, {T("7"), T("new"), T("12.50"), N(), N()}});
    std::string schema;
    g.AfterSchema(&schema);
    CHECK(schema.find(R"("name":"note")") != std::string::npos);
  }
}

TEST_CASE("messages out of place and bad values are errors", "[pg]") {
  Fixture f;
  CHECK(f.Err(Insert{kOrders, {}}) ==
        "pgoutput Insert message outside a transaction");
  CHECK(f.Err(Commit{}) == "pgoutput Commit message outside a transaction");
  f.Start();
  CHECK(f.Err(Begin{1, 2, 751}) ==
        "pgoutput Begin of xid 751 inside transaction 750");
  CHECK(f.Err(Insert{999, {}}) ==
        "pgoutput Insert for relation OID 999 that no Relation message "
        "described");
  CHECK(f.Err(Update{kOrders, 'K', {T("1")}, {T("1"), N(), N(), N()}}) ==
        "pgoutput Update for public.orders has 1 columns but its Relation "
        "message has 4");
  CHECK(f.Err(Insert{kOrders, {T("x"), N(), N(), N()}}) ==
        "column \"id\" of public.orders: invalid int4 value \"x\"");
  CHECK(f.Err(Delete{kOrders, 'K', {T("1"), N(), N()}}) ==
        "pgoutput Delete for public.orders has 3 columns but its Relation "
        "message has 4");
}

TEST_CASE("decoded bytes to events, and a snapshot read of the same row",
          "[pg]") {
  EventBuilder builder(nullptr, [] { return kClock; });
  EventLines events;
  auto feed = [&](const Wire& w) {
    auto m = DecodeMessage(w.data(), 0x1634E00);
    INFO(m.status().ToString());
    REQUIRE(m.ok());
    Status s = builder.Apply(*m, &events);
    INFO(s.ToString());
    REQUIRE(s.ok());
  };
  const int64_t pg_time = kCommit - kPostgresEpochOffsetMicros;
  feed(Wire('B').U64(kCommitLsn).U64(pg_time).U32(750));
  feed(Wire('R')
           .U32(kOrders)
           .Str("public")
           .Str("orders")
           .U8('d')
           .I16(2)
           .U8(1)
           .Str("id")
           .U32(23)
           .I32(-1)
           .U8(0)
           .Str("tags")
           .U32(1009)
           .I32(-1));
  feed(Wire('I').U32(kOrders).U8('N').I16(2).Text("7").Text(
      R"({a,"b c",NULL})"));
  feed(Wire('C').U8(0).U64(kCommitLsn).U64(kCommitLsn + 0x30).U64(pg_time));
  REQUIRE(events.size() == 2);  // the relation's first sight, the insert
  CHECK(events.is_schema(0));
  CHECK(events[0] == kHead + R"(,"op":"s","schema":"public","table":"orders",)"
                             R"("key":null,"before":null,"after":null,)"
                             R"("columns":[{"name":"id","type_oid":23,)"
                             R"("key":true},{"name":"tags","type_oid":1009,)"
                             R"("key":false}]})");
  CHECK(events[1] == kHead + R"(,"op":"c","schema":"public","table":"orders",)"
                             R"("key":{"id":7},"before":null,)"
                             R"("after":{"id":7,"tags":["a","b c",null]}})");
  CheckStoredForm(events[1]);
  auto parsed = nlohmann::json::parse(events[1]);
  CHECK(parsed["after"]["tags"][2].is_null());

  // A snapshot copied the same row (COPY's text form is pgoutput's): the
  // same rendering under op r, in the snapshot's own transaction.
  events.clear();
  builder.BeginTransaction(0x2000, 0, kCommit);
  CHECK(builder.in_transaction());
  REQUIRE(builder
              .ApplySnapshotRead(
                  Insert{kOrders, {T("7"), T(R"({a,"b c",NULL})")}}, &events)
              .ok());
  CHECK(builder.ApplySnapshotRead(Insert{kOrders, {T("x"), N()}}, &events)
            .message() ==
        "column \"id\" of public.orders: invalid int4 value "
        "\"x\"");
  builder.EndTransaction();
  CHECK_FALSE(builder.in_transaction());
  REQUIRE(events.size() == 1);
  CHECK(events[0] ==
        R"({"lsn":"0/2000","xid":0,"ts":"2026-11-29T07:41:02.123456Z",)"
        R"("op":"r","schema":"public","table":"orders","key":{"id":7},)"
        R"("before":null,"after":{"id":7,"tags":["a","b c",null]}})");
}

TEST_CASE("a snapshot read rendered into a batch is ApplySnapshotRead's event",
          "[pg]") {
  // Two builders, one rendering each way. The relation's names and values
  // need escaping, the key is not the first column, a jsonb null is named
  // by pointer, and a second relation has no key at all.
  EventBuilder lines(nullptr, [] { return kClock; });
  EventBuilder batch(nullptr, [] { return kClock; });
  Relation rel;
  rel.oid = 16600;
  rel.nspname = "public";
  rel.relname = "we\"ird";
  rel.columns = {{0, "t\"x", 25, -1}, {1, "id", 20, -1},
                 {0, "vc", 1043, -1}, {0, "ch", 1042, -1},
                 {0, "i2", 21, -1},   {0, "i4", 23, -1},
                 {0, "j", 3802, -1},  {0, "n\u00e9", 25, -1}};
  Relation nokey = rel;
  nokey.oid = 16601;
  nokey.relname = "nokey";
  for (RelationColumn& c : nokey.columns) c.flags = 0;
  EventLines want, schema;
  std::string got = "earlier rows\n";
  for (EventBuilder* b : {&lines, &batch}) {
    b->BeginTransaction(0x3000, 0, kCommit);
    REQUIRE(b->Apply(Message{rel}, &want).ok());
    REQUIRE(b->Apply(Message{nokey}, &want).ok());
  }
  const std::vector<Insert> rows = {
      {16600,
       {T("tab\there \"q\" \\ h\xc3\xa9 \x01"), T("-9223372036854775808"),
        T("v"), T("ab   "), T("-32768"), T("2147483647"), T("null"), N()}},
      {16600,
       {N(), T("2"), N(), N(), N(), N(), T(R"({"a": [1, null]})"),
        T("\xf0\x9f\x98\x80")}},
      {16601, {T("x"), T("3"), T(""), T(""), T("0"), T("0"), T("[]"), T("")}},
  };
  for (const Insert& row : rows) {
    REQUIRE(lines.ApplySnapshotRead(row, &want).ok());
    const size_t before = got.size();
    REQUIRE(batch.AppendSnapshotRead(row, &schema, &got).ok());
    got.push_back('\n');
    CHECK(got.size() > before);
  }
  // `want`: each relation's schema event before its first row.
  REQUIRE(want.size() == 5);
  REQUIRE(schema.size() == 2);
  CHECK(schema[0] == want[0]);
  CHECK(schema[1] == want[3]);
  CHECK(got == "earlier rows\n" + std::string(want[1]) + "\n" +
                   std::string(want[2]) + "\n" + std::string(want[4]) + "\n");
  CHECK(std::string(want[1]).find(R"("json_null":["/after/j"])") !=
        std::string::npos);
  CHECK(std::string(want[4]).find(R"("key":null)") != std::string::npos);

  // A value that does not render: an error naming it, and neither the
  // batch nor the schema events changed.
  const std::string kept = got;
  Status s = batch.AppendSnapshotRead(
      {16600, {T("\xff"), T("4"), N(), N(), N(), N(), N(), N()}}, &schema,
      &got);
  CHECK(
      s.message() ==
      lines
          .ApplySnapshotRead(
              {16600, {T("\xff"), T("4"), N(), N(), N(), N(), N(), N()}}, &want)
          .message());
  CHECK_FALSE(s.ok());
  CHECK(got == kept);
  CHECK(schema.size() == 2);
  s = batch.AppendSnapshotRead({16600, {N(), T("4x")}}, &schema, &got);
  CHECK_FALSE(s.ok());
  CHECK(got == kept);
}

// docs (id int4 key, "d/o~c" jsonb, arr jsonb[]), REPLICA IDENTITY FULL
// when `full`.
Relation Docs(bool full) {
  Relation r;
  r.oid = 16500;
  r.nspname = "public";
  r.relname = "docs";
  r.replica_identity = full ? 'f' : 'd';
  uint8_t other = full ? 1 : 0;
  r.columns = {
      {1, "id", 23, -1}, {other, "d/o~c", 3802, -1}, {other, "arr", 3807, -1}};
  return r;
}

TEST_CASE("JSON nulls are named by pointer, apart from SQL NULLs", "[pg]") {
  Fixture f;
  f.Start();
  f.Know(Docs(false));
  f.Ok(Docs(false));
  f.Ok(Insert{16500, {T("1"), T("null"), T(R"({NULL,"null"})")}});
  CHECK(f.Only() == kHead +
                        R"(,"op":"c","schema":"public","table":"docs",)"
                        R"("key":{"id":1},"before":null,)"
                        R"("after":{"id":1,"d/o~c":null,"arr":[null,null]},)"
                        R"("json_null":["/after/d~1o~0c","/after/arr/1"]})");
  // SQL NULLs only: no "json_null" at all, and nothing carried over.
  f.Ok(Insert{16500, {T("2"), N(), T("{NULL}")}});
  CHECK(f.Only().find("json_null") == std::string::npos);
  // Under FULL, key, before and after each say where theirs are.
  Relation full = Docs(true);
  f.Ok(full);
  f.Ok(Update{16500,
              'O',
              {T("1"), T("null"), N()},
              {T("1"), T("{}"), T(R"({"null"})")}});
  // After the identity change's schema event:
  CHECK(f.AfterSchema() ==
        kHead + R"(,"op":"u","schema":"public","table":"docs",)"
                R"("key":{"id":1,"d/o~c":null,"arr":null},)"
                R"("before":{"id":1,"d/o~c":null,"arr":null},)"
                R"("after":{"id":1,"d/o~c":{},"arr":[null]},)"
                R"("json_null":["/key/d~1o~0c","/before/d~1o~0c",)"
                R"("/after/arr/0"]})");
  f.Ok(Delete{16500, 'O', {T("1"), T("null"), N()}});
  CHECK(f.Only().find(R"(,"after":null,"json_null":["/key/d~1o~0c",)"
                      R"("/before/d~1o~0c"]})") != std::string::npos);
}

TEST_CASE("message content is read in the server's encoding", "[pg]") {
  Fixture f;
  ServerText latin1;
  REQUIRE(latin1.SetEncoding("LATIN1").ok());
  f.builder.SetServerText(&latin1);
  f.Start();
  f.Ok(LogicalMessage{LogicalMessage::kTransactional, 1, "pr\xc3\xa9",
                      "caf\xe9 \xff"});
  CHECK(f.Only() == kHead + R"(,"op":"m","prefix":"pré",)"
                            R"("content":"café ÿ","transactional":true})");
  // Bytes that are not text of the encoding go as base64.
  ServerText euc;
  REQUIRE(euc.SetEncoding("EUC_JP").ok());
  f.builder.SetServerText(&euc);
  f.Ok(LogicalMessage{LogicalMessage::kTransactional, 1, "p", "\xff\xff"});
  CHECK(f.Only().find(R"("content":"//8=","content_encoding":"base64")") !=
        std::string::npos);
  ServerText utf8;
  REQUIRE(utf8.SetEncoding("UTF8").ok());
  CHECK(utf8.identity());
  ServerText mule;
  CHECK(mule.SetEncoding("MULE_INTERNAL").code() == Code::kConfig);
  CHECK(mule.identity());
  std::string out;
  CHECK(latin1.ToUtf8(std::string(1000000, '\xe9'), &out));
  CHECK(out.size() == 2000000);  // in several pieces
}

TEST_CASE("generated columns are named in schema changes", "[pg]") {
  Fixture f;
  const Truncate change{0, {kItems}};
  std::string schema;
  f.builder.SetGeneratedColumns(kItems, {"total"});
  f.Ok(Begin{kCommitLsn, kCommit, 750});
  f.Ok(Items());  // the first description names them
  f.Ok(change);
  f.AfterSchema(&schema);
  CHECK(schema.find(R"(,"generated":["total"]})") != std::string::npos);
  f.Ok(Items());
  f.Ok(change);
  CHECK_FALSE(f.events.is_schema(0));  // not looked up again: as they were
  f.events.clear();
  f.builder.SetGeneratedColumns(kItems, {"total"});
  f.Ok(Items());
  f.Ok(change);
  CHECK_FALSE(f.events.is_schema(0));  // looked up, unchanged
  f.events.clear();
  f.builder.SetGeneratedColumns(kItems, {"total", "tax"});
  f.Ok(Items());
  f.Ok(change);
  f.AfterSchema(&schema);
  CHECK(schema == kHead + R"(,"op":"s","schema":"shop","table":"items",)"
                          R"("key":null,"before":null,"after":null,)"
                          R"("columns":[{"name":"name","type_oid":25,)"
                          R"("key":false}],"generated":["total","tax"]})");
  f.builder.SetGeneratedColumns(kItems, {});
  f.Ok(Items());
  f.Ok(change);
  f.AfterSchema(&schema);
  CHECK(schema.find("generated") == std::string::npos);
}

}  // namespace
}  // namespace cdc::pg
