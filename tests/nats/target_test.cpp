// nats::Target driven by the sink engine against an in-memory JetStream
// stream (fake_jetstream.h): exactly once under a dropped publish, a lost
// answer, a failing stream info and a killed process, whichever publish
// they hit, with and without the server's duplicate window.
#include "cdc/nats/target.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cdc/event/renderer.h"
#include "cdc/sink/engine.h"
#include "nats/fake_jetstream.h"
#include "sink/sink_test.h"

namespace cdc::nats {

namespace {

using test::Ev;
using test::VectorSource;

using Run = test::SinkRun;

struct World {
  std::vector<Ev> evs = test::Workload();
  test::FakeJetStream js;
  uint64_t cursor = 0;
  size_t batch = 3;
  size_t max_pending = 4;
  double reconnect_max_s = 60;
  std::string log_id = "L1";
  std::function<void(uint64_t)> check_ack = [](uint64_t) {};

  Run Start() {
    StreamOptions so;
    so.name = "ORDERS";
    SinkOptions sk;
    sk.stream = so.name;
    sk.log_id = log_id;
    sk.native_input = true;  // the lines are sent as they are
    sk.max_pending = max_pending;
    Target t(ConnectOptions{}, so, sk,
             event::MakeRenderer(event::RenderOptions{}, event::SourceInfo{}),
             [this](const ConnectOptions&) { return js.Connect(); });
    return test::RunEngine(&t, &evs, &cursor, batch, reconnect_max_s,
                           check_ack);
  }

  // The seqs of this log's messages in stream order.
  std::vector<uint64_t> Stored() const {
    std::vector<uint64_t> out;
    for (const auto& m : js.messages)
      if (m.head.log_id == log_id) out.push_back(std::stoull(m.head.seq));
    return out;
  }

  // Every event once, in order, as it was, with Cdc-Last where its
  // transaction ends.
  void CheckExactlyOnce() const {
    std::vector<uint64_t> want;
    for (const Ev& e : evs) want.push_back(e.seq);
    REQUIRE(Stored() == want);
    for (size_t i = 0; i < evs.size(); ++i) {
      CHECK(js.messages[i].payload == evs[i].line);
      CHECK(js.messages[i].head.last == evs[i].last);
    }
  }

  // An ack of `seq` is honest when the stream holds every event up to it.
  void CheckAck(uint64_t seq) const {
    std::vector<uint64_t> s = Stored();
    size_t n = 0;
    while (n < s.size() && s[n] == n + 1) ++n;
    INFO("ack of seq " << seq << " with the stream holding 1.." << n);
    CHECK(n >= seq);
  }
};

}  // namespace

TEST_CASE("nats target: an uninterrupted run stores every event once",
          "[nats][sink]") {
  World w;
  w.check_ack = [&](uint64_t seq) { w.CheckAck(seq); };
  Run r = w.Start();
  REQUIRE_OK(r.status);
  w.CheckExactlyOnce();
  CHECK(r.acked == w.evs.back().seq);
  CHECK(w.js.received == w.evs.size());
}

TEST_CASE(
    "nats target: a dropped publish, a lost answer or a killed process at "
    "any publish stores every event exactly once",
    "[nats][sink]") {
  const uint64_t n = test::Workload().size();
  for (bool dedupe : {true, false}) {
    for (uint64_t at = 1; at <= n; ++at) {
      INFO("fault at publish " << at
                               << (dedupe ? "" : ", no duplicate window"));
      for (bool drop : {true, false}) {
        // A publish that never reached the stream, or whose answer was
        // lost after it was stored.
        INFO((drop ? "dropped" : "answer lost"));
        World w;
        w.js.dedupe = dedupe;
        (drop ? w.js.drop_at : w.js.lose_answer_at) = at;
        w.check_ack = [&](uint64_t seq) { w.CheckAck(seq); };
        Run r = w.Start();
        REQUIRE_OK(r.status);
        w.CheckExactlyOnce();
        CHECK(r.acked == w.evs.back().seq);
        // The publishes refused after a lost one are no sign of another
        // publisher.
        CHECK_FALSE(r.Saw("moved under this sink"));
      }
      {
        // Killed right after the publish reached the stream: the next
        // process resumes from the stream's last message, not from the
        // cursor, and (the duplicate window long past) must neither
        // publish that event again nor skip the one after it.
        INFO("killed");
        World w;
        w.js.dedupe = dedupe;
        w.js.die_at = at;
        w.reconnect_max_s = 0;
        w.check_ack = [&](uint64_t seq) { w.CheckAck(seq); };
        Run dead = w.Start();
        REQUIRE((dead.status.ok() || dead.status.code() == Code::kUnavailable));
        w.reconnect_max_s = 60;
        Run r = w.Start();
        REQUIRE_OK(r.status);
        w.CheckExactlyOnce();
        CHECK(r.acked == w.evs.back().seq);
        CHECK(w.js.refused == 0);
      }
    }
  }
}

TEST_CASE(
    "nats target: another publisher of the log storing an event first is "
    "noticed, and nothing is stored twice",
    "[nats][sink]") {
  World w;
  w.js.dedupe = false;
  bool done = false;
  w.check_ack = [&](uint64_t seq) {
    w.CheckAck(seq);
    if (done) return;
    done = true;
    // Another cdc-nats stores the next event (from another copy of the
    // log) before this one gets to it.
    const Ev& next = w.evs[seq];
    test::FakeJetStream::Message m;
    m.head.stream_seq = w.js.messages.size() + 1;
    m.head.msg_id = "L1:" + std::to_string(next.seq);
    m.head.log_id = "L1";
    m.head.seq = m.head.seq_header = std::to_string(next.seq);
    m.head.last = next.last;
    m.payload = next.line;
    w.js.messages.push_back(m);
  };
  Run r = w.Start();
  REQUIRE_OK(r.status);
  w.CheckExactlyOnce();
  CHECK(w.js.refused > 0);
  CHECK(r.Saw("moved under this sink"));
}

TEST_CASE("nats target: a stream info failing during a resync is retried",
          "[nats][sink]") {
  World w;
  w.js.drop_at = 5;
  // The first Info (resume) works; the resync's fails twice.
  w.js.fail_info_at = 2;
  w.js.info_failures = 2;
  w.check_ack = [&](uint64_t seq) { w.CheckAck(seq); };
  Run r = w.Start();
  REQUIRE_OK(r.status);
  w.CheckExactlyOnce();
  CHECK(w.js.info_calls == 4);
}

TEST_CASE("nats target: resuming after a finished run publishes nothing",
          "[nats][sink]") {
  World w;
  REQUIRE_OK(w.Start().status);
  const uint64_t received = w.js.received;
  w.cursor = 0;  // a lost cursor: the stream says where to go on
  w.js.dedupe = false;
  Run r = w.Start();
  REQUIRE_OK(r.status);
  CHECK(w.js.received == received);
  w.CheckExactlyOnce();
  CHECK(r.acked == w.evs.back().seq);
}

TEST_CASE("nats target: a stream of another log or publisher is refused",
          "[nats][sink]") {
  World w;
  REQUIRE_OK(w.Start().status);
  World other;
  other.js = w.js;
  other.log_id = "L2";
  Run r = other.Start();
  CHECK(r.status.code() == Code::kConfig);
  CHECK(r.status.message().find("holds the events of log L1") !=
        std::string::npos);
  CHECK(other.js.messages.size() == w.js.messages.size());

  World foreign;
  foreign.js = w.js;
  foreign.js.PublishForeign("cdc.public.t1", "{}");
  Run f = foreign.Start();
  CHECK(f.status.code() == Code::kBusy);
  CHECK(foreign.js.messages.size() == w.js.messages.size() + 1);
}

}  // namespace cdc::nats
