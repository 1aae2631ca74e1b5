// The DBLog window of incremental snapshots (cdc-capture(1), "Incremental
// snapshots"), with a fake ChunkSource: a chunk's rows reach the log only
// at a high watermark whose low one opened the window, and without the rows
// the stream changed inside it.
#include "cdc/capture/incremental.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "cdc/base/time.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/snapshots.h"
#include "test_util.h"

namespace cdc::capture {

namespace {

// Rows keyed 1..kRows of public.t, read in key order.
constexpr int kRows = 5;

std::string RowLine(int id) {
  return R"({"lsn":"0/5","xid":9,"ts":"T","op":"r","schema":"public","table":"t","key":{"id":)" +
         std::to_string(id) + R"(},"before":null,"after":{"id":)" +
         std::to_string(id) + "}}";
}

class FakeSource : public ChunkSource {
 public:
  struct Rows : Chunk {
    std::vector<int> ids;
  };
  Result<uint64_t> Validate(const log::IncrementalSnapshot&) override {
    return uint64_t{kRows};
  }
  Status Watermark(const std::string& content) override {
    std::lock_guard<std::mutex> l(mu_);
    marks_.push_back(content);
    return Status::OK();
  }
  Status Begin() override { return Status::OK(); }
  Result<std::unique_ptr<Chunk>> Read(
      const log::IncrementalSnapshot& req) override {
    auto c = std::make_unique<Rows>();
    int from = req.last_key ? std::stoi(req.last_key->at(0)) + 1 : 1;
    for (int id = from; id <= kRows && c->ids.size() < req.chunk_rows; ++id)
      c->ids.push_back(id);
    c->rows = c->ids.size();
    if (!c->ids.empty())
      c->last_key = std::vector<std::string>{std::to_string(c->ids.back())};
    return std::unique_ptr<Chunk>(std::move(c));
  }
  Status Commit() override {
    std::lock_guard<std::mutex> l(mu_);
    ++commits_;
    return Status::OK();
  }
  void Drop() override {}
  Status RenderSchema(Chunk*, event::EventLines*) override {
    return Status::OK();
  }
  Status RenderRow(Chunk* c, size_t i, event::EventLines* events) override {
    *events->Add() = RowLine(static_cast<Rows*>(c)->ids[i]);
    return Status::OK();
  }

  size_t commits() {
    std::lock_guard<std::mutex> l(mu_);
    return commits_;
  }
  std::vector<std::string> marks() {
    std::lock_guard<std::mutex> l(mu_);
    return marks_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> marks_;
  size_t commits_ = 0;
};

struct Harness {
  test::TempDir dir;
  Options o;
  Metrics m;
  std::unique_ptr<log::LogWriter> w;
  FakeSource* src = nullptr;
  std::unique_ptr<Incremental> inc;

  Harness() {
    REQUIRE(log::CreateLog(dir.path(), std::nullopt).ok());
    auto opened = log::LogWriter::Open(dir.path(), {});
    REQUIRE(opened.ok());
    w = std::move(*opened);
    REQUIRE(log::RequestIncrementalSnapshot(dir.path(), "public", "t", 3,
                                            NowMicros())
                .ok());
    o.log = dir.path();
    o.quiet = true;
    auto s = std::make_unique<FakeSource>();
    src = s.get();
    inc = std::make_unique<Incremental>(o, w.get(), std::move(s), &m);
    REQUIRE(inc->Load().ok());
  }
  // Ticks until the worker has read chunk number `n` (counting every
  // attempt) and handed it over; returns its low and high watermarks.
  // With `tick_after`, one more Tick (which takes the rows) before the
  // watermarks are delivered.
  std::pair<std::string, std::string> NextChunk(size_t n,
                                                bool tick_after = true) {
    for (int i = 0; i < 5000 && src->commits() < n; ++i) {
      // Without tick_after, no Tick once the worker began the chunk (its
      // low watermark written): nothing takes its rows before delivery.
      if (tick_after || src->marks().size() < 2 * n - 1)
        inc->Tick(NowMicros(), /*dry=*/true);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    REQUIRE(src->commits() == n);
    if (tick_after) inc->Tick(NowMicros(), true);
    auto marks = src->marks();
    REQUIRE(marks.size() == 2 * n);
    return {marks[2 * n - 2], marks[2 * n - 1]};
  }
  // The watermark's own event, as the stream delivers it.
  static std::string MarkLine(const std::string& content) {
    return R"({"lsn":"0/10","xid":7,"ts":"T","op":"m","prefix":"cdc.snapshot","content":)" +
           nlohmann::json(content).dump() + R"(,"transactional":true})";
  }
  event::EventLines Deliver(const std::string& content) {
    event::EventLines ev;
    *ev.Add() = MarkLine(content);
    REQUIRE(inc->OnWatermark(content, 0x10, &ev).ok());
    return ev;
  }
};

}  // namespace

TEST_CASE("incremental: a chunk's rows reach the log at its high watermark",
          "[capture][incremental]") {
  Harness h;
  auto [low, high] = h.NextChunk(1);
  CHECK(nlohmann::json::parse(low)["w"] == "low");
  CHECK(nlohmann::json::parse(high)["w"] == "high");
  CHECK(h.Deliver(low).empty());  // a low watermark is no event
  event::EventLines ev = h.Deliver(high);
  REQUIRE(ev.size() == 4);  // three rows, then the watermark
  for (int i = 0; i < 3; ++i) {
    CHECK_THAT(ev[i], Catch::Contains(
                          "\"key\":{\"id\":" + std::to_string(i + 1) + "}"));
    CHECK_THAT(ev[i], Catch::EndsWith(",\"snapshot\":\"incremental\"}"));
  }
  CHECK(ev[3] == Harness::MarkLine(high));
}

TEST_CASE(
    "incremental: a high watermark whose low one was not seen writes no "
    "rows, and the chunk is read again",
    "[capture][incremental]") {
  Harness h;
  auto [low, high] = h.NextChunk(1);
  (void)low;  // lost: the stream never shows it
  CHECK(h.Deliver(high).empty());
  // Read again, under a new attempt: this time the window opens.
  auto [low2, high2] = h.NextChunk(2);
  CHECK(nlohmann::json::parse(low2)["attempt"] !=
        nlohmann::json::parse(low)["attempt"]);
  CHECK(h.Deliver(low2).empty());
  event::EventLines ev = h.Deliver(high2);
  REQUIRE(ev.size() == 4);
  CHECK_THAT(ev[0], Catch::Contains("\"key\":{\"id\":1}"));
}

TEST_CASE("incremental: a row the stream changed inside the window is left out",
          "[capture][incremental]") {
  Harness h;
  auto [low, high] = h.NextChunk(1);
  CHECK(h.Deliver(low).empty());
  event::EventLines change;
  *change.Add() =
      R"({"lsn":"0/8","xid":8,"ts":"T","op":"u","schema":"public","table":"t","key":{"id":2},"before":null,"after":{"id":2}})";
  h.inc->Observe(change);
  event::EventLines ev = h.Deliver(high);
  REQUIRE(ev.size() == 3);  // rows 1 and 3, then the watermark
  CHECK_THAT(ev[0], Catch::Contains("\"key\":{\"id\":1}"));
  CHECK_THAT(ev[1], Catch::Contains("\"key\":{\"id\":3}"));
  // The next chunk goes on after the last key, its window fresh.
  auto [low2, high2] = h.NextChunk(2);
  CHECK(h.Deliver(low2).empty());
  CHECK(h.Deliver(high2).size() == 3);  // rows 4 and 5, the watermark
}

TEST_CASE(
    "incremental: a high watermark that comes before the next Tick still "
    "finds its rows",
    "[capture][incremental]") {
  // A busy stream: the worker committed the chunk's high watermark, and
  // the stream brings it before capture's loop reaches a Tick. The rows
  // were handed over before that commit, so they are there to take; the
  // chunk must not be read again (under a stream that is always busy,
  // every chunk would be, and the snapshot would never advance).
  Harness h;
  auto [low, high] = h.NextChunk(1, /*tick_after=*/false);
  CHECK(h.Deliver(low).empty());
  event::EventLines ev = h.Deliver(high);
  REQUIRE(ev.size() == 4);
  CHECK_THAT(ev[0], Catch::Contains("\"key\":{\"id\":1}"));
  auto [low2, high2] = h.NextChunk(2, false);
  CHECK(h.Deliver(low2).empty());
  CHECK(h.Deliver(high2).size() == 3);  // rows 4 and 5, the watermark
}

}  // namespace cdc::capture
