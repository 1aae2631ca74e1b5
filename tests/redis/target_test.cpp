// redis::Target driven by the sink engine against an in-memory Redis
// (fake_redis.h) that cuts the connection after any command: effectively
// once must hold whatever the cut, in both modes, with the engine
// reconnecting by itself and with the process dying and starting again.
#include "cdc/redis/target.h"

#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cdc/sink/engine.h"
#include "redis/fake_redis.h"
#include "sink/sink_test.h"

namespace cdc::redis {

namespace {

using test::Ev;
using test::VectorSource;
using test::Workload;

// Every key but the sink's own bookkeeping (__cdc_applied,
// __cdc_unconfirmed), in FakeRedis::Dump's form.
std::string Data(const test::FakeRedis& r) {
  test::FakeRedis copy;
  for (const auto& [k, v] : r.keys)
    if (k.find("__cdc_applied:") == std::string::npos &&
        k.find("__cdc_unconfirmed:") == std::string::npos)
      copy.keys[k] = v;
  return copy.Dump();
}

using Run = test::SinkRun;

// One process: a fresh target and engine over `server`, resuming as
// cdc-redis does. Every ack is checked by `check_ack` while Redis is in
// exactly the state the engine acknowledged.
struct World {
  std::vector<Ev> evs = Workload();
  test::FakeRedis server;
  uint64_t cursor = 0;
  Mode mode = Mode::kStream;
  size_t batch = 3;
  double reconnect_max_s = 60;
  std::function<void(uint64_t)> check_ack = [](uint64_t) {};

  Run Start() {
    SinkOptions so;
    so.mode = mode;
    so.consumer = "c";
    Target t(ConnectOptions{}, so,
             [this](const ConnectOptions&) { return server.Connect(); });
    return test::RunEngine(&t, &evs, &cursor, batch, reconnect_max_s,
                           check_ack);
  }
};

// The data Redis holds after the events up to each transaction's end,
// applied without a fault: what an ack of that seq promises.
std::map<uint64_t, std::string> Prefixes(Mode mode) {
  std::map<uint64_t, std::string> out;
  World w;
  for (const Ev& e : w.evs) {
    if (!e.last) continue;
    World p;
    p.mode = mode;
    p.evs.resize(e.seq);
    Run r = p.Start();
    REQUIRE_OK(r.status);
    out[e.seq] = Data(p.server);
  }
  return out;
}

// An ack of `seq` is honest when Redis then holds the events up to `seq`
// (and possibly the next ones: a later batch may be executed already).
void CheckAck(const test::FakeRedis& server,
              const std::map<uint64_t, std::string>& prefixes, uint64_t seq) {
  const std::string now = Data(server);
  bool found = false;
  for (auto it = prefixes.lower_bound(seq); it != prefixes.end(); ++it)
    found = found || it->second == now;
  INFO("ack of seq " << seq << " while Redis holds:\n" << now);
  CHECK(found);
}

}  // namespace

TEST_CASE("redis target: a cut after any command loses and repeats nothing",
          "[redis][sink]") {
  for (Mode mode : {Mode::kStream, Mode::kHash}) {
    const auto prefixes = Prefixes(mode);
    World base;
    base.mode = mode;
    Run clean = base.Start();
    REQUIRE_OK(clean.status);
    REQUIRE(clean.acked == base.evs.back().seq);
    const std::string want = Data(base.server);
    REQUIRE(want == prefixes.rbegin()->second);
    const uint64_t commands = base.server.received;
    REQUIRE(commands > 40);

    for (uint64_t cut = 1; cut <= commands; ++cut) {
      INFO("mode " << (mode == Mode::kHash ? "hash" : "stream") << ", cut at "
                   << cut << " of " << commands << " commands");
      // The engine reconnects by itself.
      World w;
      w.mode = mode;
      w.server.cut_at = cut;
      w.check_ack = [&](uint64_t seq) { CheckAck(w.server, prefixes, seq); };
      Run r = w.Start();
      REQUIRE_OK(r.status);
      CHECK(Data(w.server) == want);
      CHECK(r.acked == w.evs.back().seq);
      CHECK(w.server.connects <= 2);

      // The process dies at the cut (the server is down when it tries
      // again) and a new one starts from what Redis and the cursor say.
      World d;
      d.mode = mode;
      d.server.cut_at = cut;
      d.server.stay_down = true;
      d.reconnect_max_s = 0;
      d.check_ack = [&](uint64_t seq) { CheckAck(d.server, prefixes, seq); };
      Run dead = d.Start();
      // (A cut while tidying up at the end is harmless: nothing to redo.)
      REQUIRE((dead.status.ok() || dead.status.code() == Code::kUnavailable));
      d.server.refuse = 0;
      Run again = d.Start();
      REQUIRE_OK(again.status);
      CHECK(Data(d.server) == want);
      CHECK(again.acked == d.evs.back().seq);
    }
  }
}

TEST_CASE("redis target: pipelining, one event per batch and big batches",
          "[redis][sink]") {
  for (size_t batch : {size_t{1}, size_t{1000}}) {
    World base;
    base.batch = batch;
    REQUIRE_OK(base.Start().status);
    World w;
    w.batch = batch;
    w.server.cut_at = base.server.received / 2;
    Run r = w.Start();
    REQUIRE_OK(r.status);
    CHECK(r.Saw("Redis: server closed the connection; retrying in 100 ms"));
    CHECK(Data(w.server) == Data(base.server));
    CHECK(r.acked == w.evs.back().seq);
  }
}

TEST_CASE(
    "redis target: WRONGTYPE inside EXEC stops the sink, puts the applied "
    "seq back and acks nothing of the batch; fixed, the batch is applied "
    "whole",
    "[redis][sink]") {
  for (Mode mode : {Mode::kStream, Mode::kHash}) {
    World base;
    base.mode = mode;
    REQUIRE_OK(base.Start().status);
    const std::string want = Data(base.server);
    // A key the sink writes to, already holding another type: t2's stream,
    // or the hash of t2's row 4 (first written by the 4th transaction).
    const std::string blocked =
        mode == Mode::kStream ? "cdc:public.t2" : "cdc:public.t2:[4]";
    const uint64_t first_blocked = mode == Mode::kStream ? 2 : 8;
    // Uninterrupted, then cut after each command of the first run.
    World probe;
    probe.mode = mode;
    probe.server.Run({mode == Mode::kStream ? "SADD" : "SET", blocked, "x"});
    REQUIRE(probe.Start().status.code() == Code::kBadInput);
    const uint64_t commands = probe.server.received;
    for (uint64_t cut = 0; cut <= commands; ++cut) {
      INFO("mode " << (mode == Mode::kHash ? "hash" : "stream") << ", cut at "
                   << cut);
      World w;
      w.mode = mode;
      w.server.Run({mode == Mode::kStream ? "SADD" : "SET", blocked, "x"});
      w.server.cut_at = cut;
      Run r = w.Start();
      REQUIRE(r.status.code() == Code::kBadInput);
      CHECK(r.status.message().find("WRONGTYPE") != std::string::npos);
      CHECK(r.acked < first_blocked);
      // A restart without the fix fails the same way, acking nothing more.
      w.server.cut_at = 0;
      Run again = w.Start();
      CHECK(again.status.code() == Code::kBadInput);
      CHECK(again.acked < first_blocked);
      // The operator removes the key: everything is applied, once.
      w.server.Run({"DEL", blocked});
      Run fixed = w.Start();
      REQUIRE_OK(fixed.status);
      CHECK(Data(w.server) == want);
      CHECK(fixed.acked == w.evs.back().seq);
    }
  }
}

TEST_CASE(
    "redis target: a read-only replica is retried, then given up on (69), "
    "nothing applied or acked",
    "[redis][sink]") {
  World w;
  w.server.readonly = true;
  w.reconnect_max_s = 0.2;
  Run r = w.Start();
  CHECK(r.status.code() == Code::kUnavailable);
  CHECK(r.status.message().find("gave up after") != std::string::npos);
  CHECK(r.status.message().find("READONLY") != std::string::npos);
  CHECK(r.Saw("retrying in"));
  CHECK(r.acked == 0);
  CHECK(Data(w.server) == "");
  // Writable again (a failover): everything is applied, once.
  w.server.readonly = false;
  w.reconnect_max_s = 60;
  Run again = w.Start();
  REQUIRE_OK(again.status);
  World base;
  REQUIRE_OK(base.Start().status);
  CHECK(Data(w.server) == Data(base.server));
}

TEST_CASE(
    "redis target: events hidden at the end of the log (a watermark) are "
    "acked once everything before them is confirmed",
    "[redis][sink]") {
  World w;
  const uint64_t last = w.evs.back().seq;
  w.evs.push_back({last + 1, "", true});  // an incremental snapshot's mark
  w.check_ack = [&](uint64_t seq) { CHECK(seq <= last + 1); };
  Run r = w.Start();
  REQUIRE_OK(r.status);
  CHECK(r.acked == last + 1);
  // Hidden in the middle: acked only with what follows it.
  World m;
  m.evs.insert(m.evs.begin() + 4, {0, "", true});
  for (size_t i = 0; i < m.evs.size(); ++i) m.evs[i].seq = i + 1;
  REQUIRE_OK(m.Start().status);
  CHECK(m.cursor == m.evs.back().seq);
}

TEST_CASE("redis target: the applied seq wins over a cursor behind it",
          "[redis][sink]") {
  World w;
  REQUIRE_OK(w.Start().status);
  const std::string want = Data(w.server);
  const uint64_t received = w.server.received;
  // The cursor was lost (a restored log directory): Redis says where to
  // go on, and nothing is sent again.
  w.cursor = 0;
  Run r = w.Start();
  REQUIRE_OK(r.status);
  CHECK(Data(w.server) == want);
  CHECK(r.acked == w.evs.back().seq);
  // CLIENT SETNAME, ID and LIST, GET, GET, (DEL)
  CHECK(w.server.received - received <= 6);
}

}  // namespace cdc::redis

namespace cdc::redis {

namespace {

std::vector<EventRef> Refs(const std::vector<test::Ev>& evs, size_t from,
                           size_t to) {
  std::vector<EventRef> out;
  for (size_t i = from; i < to; ++i)
    out.push_back({evs[i].seq, evs[i].line, evs[i].last});
  return out;
}

SinkOptions Options(Mode mode) {
  SinkOptions so;
  so.mode = mode;
  so.consumer = "c";
  return so;
}

// A connection to `server` on which `sink` has read the applied seq.
std::unique_ptr<Connection> Opened(test::FakeRedis& server, Sink& sink,
                                   std::optional<uint64_t>* applied) {
  auto c = server.Connect();
  REQUIRE_OK(c.status());
  auto a = sink.ReadApplied(**c);
  REQUIRE_OK(a.status());
  *applied = *a;
  return std::move(*c);
}

}  // namespace

TEST_CASE(
    "redis sink: a connection given up on is fenced off before the next one "
    "reads its position",
    "[redis][sink][fence]") {
  // A sink gave up on its connection (a timeout on a silent network) with
  // a batch delivered but not executed. Its EXEC may still arrive after
  // the next connection has read the applied seq and applied newer
  // events: executed then, it would write older values over newer ones.
  const std::vector<test::Ev> evs = test::Workload();
  REQUIRE(evs.size() > 12);
  size_t mid = 0;
  while (!evs[mid].last || mid < 5) ++mid;
  ++mid;  // [0, mid): whole transactions
  for (Mode mode : {Mode::kStream, Mode::kHash}) {
    INFO("mode " << (mode == Mode::kHash ? "hash" : "stream"));
    test::FakeRedis server;
    Sink old_sink(Options(mode));
    std::optional<uint64_t> a;
    auto old_conn = Opened(server, old_sink, &a);
    // MULTI and the batch reach the server; EXEC is still to come.
    REQUIRE_OK(old_sink.Begin(*old_conn, Refs(evs, 0, mid), a));
    REQUIRE_OK(old_conn->SendIfOver(0));
    REQUIRE(server.sessions.size() == 1);
    REQUIRE(server.sessions.begin()->second->in_multi);

    Sink sink(Options(mode));
    std::optional<uint64_t> applied;
    auto conn = Opened(server, sink, &applied);
    CHECK_FALSE(applied.has_value());
    REQUIRE_OK(sink.Apply(*conn, Refs(evs, 0, evs.size()), applied).status());
    const std::string done = server.Dump();

    // The old connection's EXEC, late: it finds its connection closed.
    Status late = old_sink.Exec(*old_conn);
    if (late.ok()) late = old_sink.Finish(*old_conn).status();
    CHECK(late.code() == Code::kUnavailable);
    CHECK(server.Dump() == done);
    CHECK(server.sessions.size() == 1);
  }
}

TEST_CASE("redis sink: without CLIENT rights it warns and goes on",
          "[redis][sink][fence]") {
  test::FakeRedis server;
  server.deny_client = true;
  Sink sink(Options(Mode::kHash));
  std::optional<uint64_t> applied;
  auto conn = Opened(server, sink, &applied);
  const std::vector<test::Ev> evs = test::Workload();
  REQUIRE_OK(sink.Apply(*conn, Refs(evs, 0, evs.size()), applied).status());
  CHECK(server.keys.count("cdc:__cdc_applied:c") == 1);
}

TEST_CASE("redis sink: its connection's name is one per prefix and consumer",
          "[redis][sink][fence]") {
  SinkOptions a;
  a.consumer = "c";
  SinkOptions b = a;
  b.prefix = "other:";
  SinkOptions c = a;
  c.consumer = "d";
  const std::string n = Sink(a).ClientName();
  CHECK(n.size() == std::string("cdc-redis-").size() + 16);
  CHECK(n.rfind("cdc-redis-", 0) == 0);
  CHECK(n == Sink(a).ClientName());
  CHECK(n != Sink(b).ClientName());
  CHECK(n != Sink(c).ClientName());
  CHECK(Sink(b).ClientName() != Sink(c).ClientName());
}

}  // namespace cdc::redis
