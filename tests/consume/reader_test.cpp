#include "cdc/consume/reader.h"

#include <sqlite3.h>

#include <catch2/catch.hpp>

#include "cdc/base/time.h"
#include "cdc/consume/source.h"
#include "cdc/cursor/consumers.h"
#include "cdc/log/retention.h"
#include "runners.h"
#include "test_util.h"

namespace cdc::consume {

namespace {

// Transaction t (1-based) holds `per_txn` events of table public.t(t % 3).
std::unique_ptr<Reader> OpenReader(Options o) {
  auto r = Reader::Open(std::move(o));
  REQUIRE(r.ok());
  return std::move(r).value();
}

std::vector<uint64_t> SeqsOf(Reader& r) {
  std::vector<uint64_t> seqs;
  Event e;
  for (;;) {
    auto got = r.Next(&e);
    REQUIRE(got.ok());
    if (!*got) break;
    seqs.push_back(e.seq);
  }
  return seqs;
}

}  // namespace

TEST_CASE("a selection hands out matching events and consumes the rest",
          "[consume][selection]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  test::WriteTxns(log, 1, 6, 2);  // seq 2t-1, 2t: table t(t % 3)
  Options o;
  o.log_dir = log;
  auto sel = Selection::Make(log, {"public.t1"}, "", "");
  REQUIRE(sel.ok());
  o.selection = *sel;
  auto r = OpenReader(o);
  CHECK(SeqsOf(*r) == std::vector<uint64_t>{1, 2, 7, 8});
  CHECK(r->consumed_seq() == 12);  // past the filtered tail
  CHECK_FALSE(r->stopped());

  // A glob on the table name alone, an op that matches nothing.
  sel = Selection::Make(log, {"t[02]"}, "c", "");
  REQUIRE(sel.ok());
  o.selection = *sel;
  CHECK(SeqsOf(*OpenReader(o)) ==
        std::vector<uint64_t>{3, 4, 5, 6, 9, 10, 11, 12});
  sel = Selection::Make(log, {}, "u,d", "");
  REQUIRE(sel.ok());
  o.selection = *sel;
  r = OpenReader(o);
  CHECK(SeqsOf(*r).empty());
  CHECK(r->consumed_seq() == 12);

  // --to SEQ stops on reaching it; --to lsn:X/Y after its transaction.
  sel = Selection::Make(log, {}, "", "5");
  REQUIRE(sel.ok());
  o.selection = *sel;
  r = OpenReader(o);
  CHECK(SeqsOf(*r) == std::vector<uint64_t>{1, 2, 3, 4, 5});
  CHECK(r->stopped());
  sel = Selection::Make(log, {}, "", "lsn:0/30");
  REQUIRE(sel.ok());
  o.selection = *sel;
  o.from = "3";
  r = OpenReader(o);
  CHECK(SeqsOf(*r) == std::vector<uint64_t>{3, 4, 5, 6});
  CHECK(r->stopped());
  CHECK(r->consumed_seq() == 6);

  auto bad = Selection::Make(log, {}, "c,x", "");
  CHECK(bad.status().code() == Code::kUsage);
  CHECK(bad.status().message() ==
        "--op: unknown operation 'x' (use c,u,d,r,t,m,s)");
  bad = Selection::Make(log, {}, ",", "");
  CHECK(bad.status().message() ==
        "--op \",\" names no operation (use c,u,d,r,t,m,s)");
  CHECK(Selection::Make(log, {}, "", "soon").status().code() == Code::kUsage);
}

TEST_CASE("a selection judges the stored head without copying it",
          "[consume][selection]") {
  using V = Selection::Verdict;
  auto row = [](const char* op, const char* table, const char* rest = "") {
    return std::string(R"({"lsn":"0/5","xid":9,"ts":"T","op":")") + op +
           R"(","schema":"public","table":")" + table + "\"" + rest + "}";
  };
  const std::string watermark =
      R"({"lsn":"0/5","xid":0,"ts":"T","op":"m","prefix":"cdc.snapshot",)"
      R"("content":"{}","transactional":true})";
  const std::string message =
      R"({"lsn":"0/5","xid":0,"ts":"T","op":"m","prefix":"app","content":"x",)"
      R"("transactional":false})";
  // cdc-tail's default view: no schema changes, no watermarks.
  auto sel = Selection::Make("", {}, "", "", {}, false);
  REQUIRE(sel.ok());
  CHECK(sel->Judge(1, row("c", "t")) == V::kTake);
  CHECK(sel->Judge(2, row("s", "t")) == V::kSkip);
  CHECK(sel->Judge(3, watermark) == V::kSkip);
  CHECK(sel->Judge(4, message) == V::kTake);
  // A row whose columns read like a watermark is a row.
  CHECK(sel->Judge(
            5, row("c", "t",
                   R"(,"after":{"id":1,"op":"m","prefix":"cdc.snapshot"})")) ==
        V::kTake);
  // A head ScanHead declines (an escaped name) is parsed instead.
  CHECK(sel->Judge(6, R"({"lsn":"0/5","xid":9,"ts":"T","op":"s","schema":)"
                      R"("a\"b","table":"t"})") == V::kSkip);
  sel->set_watermarks(true);
  CHECK(sel->Judge(7, watermark) == V::kTake);

  // Literal names and globs, on schema.table and on the table alone.
  sel = Selection::Make("", {"public.t1", "t2", "x[0-9]"}, "", "", {"x7"});
  REQUIRE(sel.ok());
  CHECK(sel->Judge(1, row("c", "t1")) == V::kTake);
  CHECK(sel->Judge(2, row("u", "t2")) == V::kTake);
  CHECK(sel->Judge(3, row("d", "t3")) == V::kSkip);
  CHECK(sel->Judge(4, row("c", "x5")) == V::kTake);
  CHECK(sel->Judge(5, row("c", "x7")) == V::kSkip);
  CHECK(sel->Judge(6, R"({"lsn":"0/5","xid":9,"ts":"T","op":"c","schema":)"
                      R"("public","table":"t\u0031"})") == V::kTake);
}

TEST_CASE("a new consumer is created at --from; an existing one refuses it",
          "[consume][cursor]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  test::WriteTxns(log, 1, 5, 2);
  Options o;
  o.log_dir = log;
  o.consumer = "sink";
  o.from = "lsn:0/30";  // transaction 3: seq 5
  auto r = OpenReader(o);
  CHECK(SeqsOf(*r) == std::vector<uint64_t>{5, 6, 7, 8, 9, 10});
  auto store = cursor::ConsumerStore::Open(log);
  REQUIRE(store.ok());
  CHECK((*(*store)->Get("sink"))->acked_seq == 4);  // reading never acks
  REQUIRE(r->Ack(7).ok());
  REQUIRE(r->Ack(6).ok());  // cumulative: never back
  CHECK((*(*store)->Get("sink"))->acked_seq == 7);

  auto again = Reader::Open(o);
  CHECK(again.status().code() == Code::kUsage);
  CHECK(again.status().message() ==
        "consumer sink exists; --from only places a new consumer (move this "
        "one with \"cdc-ack -c sink --seek POS\")");
  o.from.clear();
  r = OpenReader(o);
  CHECK(SeqsOf(*r) == std::vector<uint64_t>{8, 9, 10});

  // A new consumer without --from starts at the earliest event.
  o.consumer = "fresh";
  CHECK(SeqsOf(*OpenReader(o)).size() == 10);
  o.consumer = "bad name";
  CHECK(Reader::Open(o).status().code() == Code::kUsage);
  // Without a consumer there is nothing to ack.
  o.consumer.clear();
  CHECK(OpenReader(o)->Ack(1).code() == Code::kUsage);
}

TEST_CASE("a consumer whose next event was removed is expired",
          "[consume][cursor][retention]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  log::WriterOptions opts;
  opts.segment_bytes = 2048;
  test::WriteTxns(log, 1, 60, 4, opts);
  Options o;
  o.log_dir = log;
  o.consumer = "slow";
  REQUIRE(Reader::Open(o).ok());  // created at seq 0
  log::RetentionPolicy keep2;
  keep2.max_segments = 2;
  REQUIRE(log::ApplyRetention(log, keep2, NowMicros(), false).ok());
  auto r = Reader::Open(o);
  CHECK(r.status().code() == Code::kExpired);
  CHECK(r.status().message() ==
        "consumer slow is expired: its next event (seq 1) was removed by "
        "retention; run \"cdc-ack -c slow --seek earliest\" (or another "
        "position) to continue from what is retained");
}

TEST_CASE("a cursor beyond the log's end, or negative, is refused",
          "[consume][cursor]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  test::WriteTxns(log, 1, 5, 2);  // seq 1-10
  {
    auto store = cursor::ConsumerStore::Open(log);
    REQUIRE(store.ok());
    REQUIRE((*store)->Create("c", 0).ok());
  }
  // What a damaged consumers.db holds: SQLite takes any integer.
  auto set = [&](const char* value) {
    sqlite3* h = nullptr;
    REQUIRE(sqlite3_open((log + "/consumers.db").c_str(), &h) == SQLITE_OK);
    const std::string sql =
        std::string("UPDATE consumers SET acked_seq = ") + value;
    REQUIRE(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr) ==
            SQLITE_OK);
    sqlite3_close(h);
  };
  Options o;
  o.log_dir = log;
  o.consumer = "c";
  std::string out;
  auto run = [&](int (*tool)(int, char**), std::vector<std::string> args) {
    return test::RunTool(tool, args, &out);
  };

  SECTION("at the last seq: nothing left to read, and fine") {
    set("10");
    auto r = OpenReader(o);
    CHECK(SeqsOf(*r).empty());
    CHECK(run(tail::RunCli, {"cdc-tail", "--log", log, "-c", "c"}) == 0);
    CHECK(run(logtool::RunCli, {"cdc-log", "consumers", "--log", log}) == 0);
    CHECK_THAT(out, Catch::Contains(" 10 ") && Catch::Contains(" ok "));
  }
  SECTION("beyond it") {
    set("15");
    auto r = Reader::Open(o);
    CHECK(r.status().code() == Code::kBadInput);
    CHECK(r.status().message() ==
          "consumer c is damaged: its cursor, acked seq 15, is beyond the end "
          "of the log (last seq 10); move it with \"cdc-ack -c c --seek "
          "POS\"");
    CHECK(consume::OpenLogSource(log, "c", std::nullopt, false, "")
              .status()
              .code() == Code::kBadInput);
    CHECK(run(tail::RunCli, {"cdc-tail", "--log", log, "-c", "c"}) == 65);
    CHECK(out.empty());
    // An ack leaves the later cursor where it is: not a success.
    CHECK(run(ack::RunCli, {"cdc-ack", "--log", log, "-c", "c", "5"}) == 65);
    CHECK(run(logtool::RunCli, {"cdc-log", "consumers", "--log", log}) == 65);
    CHECK_THAT(out, Catch::Matches("NAME .*\nc +15 +- +damaged .*\n"));
    CHECK(run(logtool::RunCli,
              {"cdc-log", "consumers", "--log", log, "--json"}) == 65);
    CHECK_THAT(out, Catch::Contains("\"acked_seq\":15,\"lag\":null,"
                                    "\"expired\":false,\"damaged\":true"));
    CHECK(run(logtool::RunCli, {"cdc-log", "stats", "--log", log}) == 65);
    CHECK_THAT(out, Catch::Contains(" lag - damaged\n"));
    CHECK(run(logtool::RunCli, {"cdc-log", "stats", "--log", log, "--json"}) ==
          65);
    CHECK_THAT(out, Catch::Contains("\"damaged\":true"));
    CHECK(run(logtool::RunCli,
              {"cdc-log", "stats", "--log", log, "--prometheus"}) == 0);
    CHECK_THAT(out, Catch::Contains("cdc_log_consumer_damaged{") &&
                        !Catch::Contains("cdc_log_consumer_lag_events{"));
    // A seek is how it is repaired.
    REQUIRE(run(ack::RunCli,
                {"cdc-ack", "--log", log, "-c", "c", "--seek", "7"}) == 0);
    CHECK(SeqsOf(*OpenReader(o)) == std::vector<uint64_t>{7, 8, 9, 10});
  }
  SECTION("negative") {
    set("-5");
    auto r = Reader::Open(o);
    CHECK(r.status().code() == Code::kBadInput);
    CHECK(r.status().message() ==
          "consumer c is damaged: its cursor, acked seq -5, is negative (last "
          "seq 10); move it with \"cdc-ack -c c --seek POS\"");
    CHECK(run(tail::RunCli, {"cdc-tail", "--log", log, "-c", "c"}) == 65);
    CHECK(run(logtool::RunCli, {"cdc-log", "consumers", "--log", log}) == 65);
    CHECK_THAT(out, Catch::Matches("NAME .*\nc +-5 +- +damaged .*\n"));
    set("-1");  // acked_seq + 1 would wrap to 0: "expired", wrongly
    CHECK(Reader::Open(o).status().code() == Code::kBadInput);
  }
}

TEST_CASE("batches hold whole transactions up to a bound", "[consume][batch]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  // Transactions of 3, 3, 7 and 2 events: seq 1-3, 4-6, 7-13, 14-15.
  test::WriteTxns(log, 1, 2, 3);
  test::WriteTxns(log, 3, 1, 7);
  test::WriteTxns(log, 4, 1, 2);
  Options o;
  o.log_dir = log;
  auto r = OpenReader(o);
  TxnBatch b;
  auto seqs = [&] {
    std::vector<uint64_t> v;
    for (size_t i = 0; i < b.size(); ++i) v.push_back(b[i].seq);
    return v;
  };
  // 5: the second transaction does not fit beside the first.
  REQUIRE(*r->ReadBatch(5, &b));
  CHECK(seqs() == std::vector<uint64_t>{1, 2, 3});
  CHECK(b.end_seq == 3);
  CHECK(b.ends_txn);
  CHECK(b[2].last);
  CHECK(b[0].stored == test::EventLine(1, 0));
  REQUIRE(*r->ReadBatch(5, &b));
  CHECK(seqs() == std::vector<uint64_t>{4, 5, 6});
  CHECK(b.end_seq == 6);
  // 7 events alone exceed the bound: the batch ends inside it.
  REQUIRE(*r->ReadBatch(5, &b));
  CHECK(seqs() == std::vector<uint64_t>{7, 8, 9, 10, 11});
  CHECK(b.end_seq == 11);
  CHECK_FALSE(b.ends_txn);
  REQUIRE(*r->ReadBatch(5, &b));
  CHECK(seqs() == std::vector<uint64_t>{12, 13, 14, 15});
  CHECK(b.end_seq == 15);
  CHECK(b.ends_txn);
  CHECK(b[3].stored == test::EventLine(4, 1));
  CHECK_FALSE(*r->ReadBatch(5, &b));
  CHECK(b.empty());

  // A bound larger than everything: one batch, at the end of the log.
  r = OpenReader(o);
  REQUIRE(*r->ReadBatch(100, &b));
  CHECK(b.size() == 15);
  CHECK(b.end_seq == 15);

  // Filtered events move end_seq even when no event is selected.
  auto sel = Selection::Make(log, {"t1"}, "", "");  // transaction 1 and 4
  REQUIRE(sel.ok());
  o.selection = *sel;
  r = OpenReader(o);
  REQUIRE(*r->ReadBatch(3, &b));
  CHECK(seqs() == std::vector<uint64_t>{1, 2, 3});
  CHECK(b.end_seq == 3);
  REQUIRE(*r->ReadBatch(3, &b));
  CHECK(seqs() == std::vector<uint64_t>{14, 15});
  CHECK(b.end_seq == 15);
  sel = Selection::Make(log, {"t2"}, "", "");  // transaction 2 only
  REQUIRE(sel.ok());
  o.selection = *sel;
  r = OpenReader(o);
  REQUIRE(*r->ReadBatch(2, &b));
  CHECK(seqs() == std::vector<uint64_t>{4, 5});  // larger than 2
  CHECK(b.end_seq == 5);
  CHECK_FALSE(b.ends_txn);
  REQUIRE(*r->ReadBatch(2, &b));
  CHECK(seqs() == std::vector<uint64_t>{6});
  CHECK(b.end_seq == 15);
  CHECK(b.ends_txn);
  CHECK_FALSE(*r->ReadBatch(2, &b));

  // A stop inside a transaction ends the batch there.
  sel = Selection::Make(log, {}, "", "9");
  REQUIRE(sel.ok());
  o.selection = *sel;
  r = OpenReader(o);
  REQUIRE(*r->ReadBatch(100, &b));
  CHECK(b.size() == 9);
  CHECK(b.end_seq == 9);
  CHECK_FALSE(b.ends_txn);
  CHECK(r->stopped());
}

}  // namespace cdc::consume

namespace cdc::consume {

TEST_CASE("relative positions: -N, now, time:-DURATION", "[consume]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  // seqs 1-30, committed (by their commit times) on 2025-11-29.
  test::WriteTxns(log, 1, 10, 3);
  auto from = [&](const std::string& pos) {
    Options o;
    o.log_dir = log;
    o.from = pos;
    auto r = OpenReader(o);
    return SeqsOf(*r);
  };
  auto range = [](uint64_t a, uint64_t b) {
    std::vector<uint64_t> v;
    for (uint64_t s = a; s <= b; ++s) v.push_back(s);
    return v;
  };
  CHECK(from("-5") == range(26, 30));  // may start mid-transaction, as SEQ
  CHECK(from("-30") == range(1, 30));
  CHECK(from("-1000") == range(1, 30));  // fewer retained: all of them
  CHECK(from("-0").empty());
  CHECK(from("now").empty());
  CHECK(from("time:-1h").empty());  // all older than that
  CHECK(from("time:-3600").empty());
  CHECK(from("time:-5000d") == range(1, 30));
  CHECK(from("time:-1000w") == range(1, 30));
  for (const char* bad : {"-", "--5", "-5x", "time:-", "time:-1y", "time:-h",
                          "time:-99999999999999w", "-99999999999999999999"}) {
    INFO(bad);
    auto p = ParsePosition(bad);
    REQUIRE_FALSE(p.ok());
    CHECK(p.status().code() == Code::kUsage);
  }
  auto p = ParsePosition("time:-1s");
  REQUIRE(p.ok());
  CHECK(p->kind == Position::Kind::kTime);
  CHECK(NowMicros() - p->time >= 1000000);
}

}  // namespace cdc::consume

namespace cdc::consume {

// A sink's source reads ahead into the transaction that did not fit its
// batch; NextSeq (what the engine acks when nothing is in flight) must not
// count those events, or a crash before the next batch loses them.
TEST_CASE("a log source's NextSeq stops at what it handed out",
          "[consume][sink]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  test::WriteTxns(log, 1, 4, 3);  // seqs 1-12, three per transaction
  auto src = OpenLogSource(log, "s", std::nullopt, false, "test");
  REQUIRE(src.ok());
  Source& s = **src;
  CHECK(s.NextSeq() == 1);
  SinkBatch b;
  // Room for 5: the first transaction (3), the second held back whole.
  auto got = s.Fill(&b, 5);
  REQUIRE(got.ok());
  REQUIRE(*got);
  REQUIRE(b.items.size() == 3);
  CHECK(b.items.back().seq == 3);
  CHECK(s.NextSeq() == 4);
  b.clear();
  got = s.Fill(&b, 5);
  REQUIRE(got.ok());
  REQUIRE(b.items.size() >= 3);
  CHECK(b.items.front().seq == 4);
  CHECK(s.NextSeq() == b.items.back().seq + 1);
}

// How a transaction larger than the batch (3) is handed out: whole, in
// pieces (cdc-nats), or in pieces while it holds only snapshot reads and
// schema events (cdc-redis, cdc-pg). Each piece's NextSeq follows it.
TEST_CASE("a log source hands out pieces of large transactions as told",
          "[consume][sink]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  // Transaction 1: 7 inserts (c). Transaction 2: a schema event and 6
  // snapshot reads. Transaction 3: 4 snapshot reads, then 3 inserts.
  // Transaction 4: 2 snapshot reads.
  {
    REQUIRE(log::OpenOrCreateLog(log).ok());
    auto w = log::LogWriter::Open(log, {});
    REQUIRE(w.ok());
    auto line = [](int txn, const char* op, int id) {
      const std::string head = "{\"lsn\":\"0/" + std::to_string(txn * 100) +
                               "\",\"xid\":" + std::to_string(txn) +
                               ",\"ts\":\"2026-11-29T07:00:00Z\",\"op\":\"" +
                               op + "\",\"schema\":\"public\",\"table\":\"t\"";
      if (op[0] == 's')
        return head +
               ",\"key\":null,\"before\":null,\"after\":null,\"columns\":[]}";
      const std::string k = std::to_string(id);
      return head + ",\"key\":{\"id\":" + k +
             "},\"before\":null,\"after\":{\"id\":" + k + "}}";
    };
    auto add = [&](int txn, int n, const char* op, int first) {
      for (int i = 0; i < n; ++i)
        REQUIRE((*w)->Append(line(txn, op, first + i)).ok());
    };
    auto commit = [&](int txn) {
      REQUIRE((*w)->Commit(static_cast<Lsn>(txn * 256), 1764402062000000, txn)
                  .ok());
    };
    add(1, 7, "c", 1);
    commit(1);
    REQUIRE((*w)->AppendSchema(line(2, "s", 0)).ok());
    add(2, 6, "r", 1);
    commit(2);
    add(3, 4, "r", 1);
    add(3, 3, "c", 10);
    commit(3);
    add(4, 2, "r", 20);
    commit(4);
    REQUIRE((*w)->Sync().ok());
  }
  using Runs = std::vector<std::vector<uint64_t>>;
  const struct {
    consume::Pieces how;
    Runs want;
  } cases[] = {
      {consume::Pieces::kNever,
       {{1, 2, 3, 4, 5, 6, 7},
        {8, 9, 10, 11, 12, 13, 14},
        {15, 16, 17, 18, 19, 20, 21, 22, 23}}},
      {consume::Pieces::kAlways,
       {{1, 2, 3},
        {4, 5, 6},
        {7},
        {8, 9, 10},
        {11, 12, 13},
        {14},
        {15, 16, 17},
        {18, 19, 20},
        {21, 22, 23}}},
      // Transaction 3 is handed out in pieces until its first insert
      // shows up; the rest of it is then held whole. (A batch that ends a
      // transaction with room left takes the next one whole: 22 and 23.)
      {consume::Pieces::kSnapshots,
       {{1, 2, 3, 4, 5, 6, 7},
        {8, 9, 10},
        {11, 12, 13},
        {14},
        {15, 16, 17},
        {18, 19, 20, 21, 22, 23}}},
  };
  for (const auto& c : cases) {
    INFO("pieces: " << static_cast<int>(c.how));
    auto src = OpenLogSource(log, "c" + std::to_string(static_cast<int>(c.how)),
                             std::nullopt, false, "test", true, c.how);
    REQUIRE(src.ok());
    Source& s = **src;
    Runs got;
    for (;;) {
      SinkBatch b;
      auto more = s.Fill(&b, 3);
      REQUIRE(more.ok());
      if (!*more) break;
      got.emplace_back();
      for (const auto& i : b.items) {
        got.back().push_back(i.seq);
        // Only a transaction's last event is marked.
        CHECK(i.last ==
              (i.seq == 7 || i.seq == 14 || i.seq == 21 || i.seq == 23));
      }
      CHECK(s.NextSeq() == b.items.back().seq + 1);
    }
    CHECK(got == c.want);
  }
}

}  // namespace cdc::consume
