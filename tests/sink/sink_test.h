// What the sink tests feed a target through the engine: a fixed workload
// and a consume::Source over it that behaves as the log does for a named
// consumer.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cdc/base/logging.h"
#include "cdc/consume/source.h"
#include "cdc/sink/engine.h"

// REQUIRE that names the failure.
#define REQUIRE_OK(status)             \
  do {                                 \
    const ::cdc::Status s_ = (status); \
    INFO(s_.message());                \
    REQUIRE(s_.ok());                  \
  } while (0)

namespace cdc::test {

struct Ev {
  uint64_t seq;
  std::string line;  // empty: hidden by the consumer's selection
  bool last;
};

// A workload over two tables: inserts, updates, a key change, deletes and
// a truncate, in transactions of one to four events.
inline std::vector<Ev> Workload() {
  std::vector<Ev> evs;
  uint64_t seq = 0;
  auto row = [](const char* table, const char* op, int id, int v) {
    std::string s = std::string("{\"op\":\"") + op +
                    "\",\"schema\":\"public\",\"table\":\"" + table +
                    "\",\"key\":{\"id\":" + std::to_string(id) + "}";
    if (std::string(op) != "d")
      s += ",\"after\":{\"id\":" + std::to_string(id) +
           ",\"v\":" + std::to_string(v) + "}";
    return s + "}";
  };
  auto tx = [&](std::vector<std::string> lines) {
    for (size_t i = 0; i < lines.size(); ++i)
      evs.push_back({++seq, lines[i], i + 1 == lines.size()});
  };
  for (int i = 1; i <= 6; ++i)
    tx({row("t1", "c", i, i), row("t2", "c", i, 10 * i)});
  tx({row("t1", "u", 2, 20)});
  tx({row("t1", "d", 3, 0), row("t2", "u", 3, 33), row("t1", "c", 7, 7)});
  tx({"{\"op\":\"u\",\"schema\":\"public\",\"table\":\"t1\",\"key\":"
      "{\"id\":5},\"after\":{\"id\":50,\"v\":5}}"});
  tx({"{\"op\":\"t\",\"schema\":\"public\",\"table\":\"t2\"}"});
  for (int i = 1; i <= 4; ++i)
    tx({row("t2", "c", 100 + i, i), row("t1", "u", i, 100 + i),
        row("t1", "d", 6, 0)});
  tx({row("t1", "c", 6, 66)});
  tx({row("t2", "d", 101, 0), row("t2", "d", 102, 0), row("t1", "u", 1, 1),
      row("t2", "c", 200, 2)});
  return evs;
}

// The log as a consumer sees it: whole transactions from just after the
// target's applied seq, or after the consumer's cursor when the target
// holds none. The cursor is kept by the test, across "processes".
class VectorSource final : public consume::Source {
 public:
  VectorSource(const std::vector<Ev>* evs, uint64_t after,
               std::function<void(uint64_t)> on_ack)
      : evs_(evs), on_ack_(std::move(on_ack)) {
    while (pos_ < evs_->size() && (*evs_)[pos_].seq <= after) ++pos_;
  }
  Result<bool> Fill(consume::SinkBatch* b, size_t max) override {
    size_t added = 0;
    while (pos_ < evs_->size() && added < max) {
      do {
        const Ev& e = (*evs_)[pos_++];
        if (e.line.empty()) continue;  // hidden, as a selection hides some
        b->Add(e.seq, e.line, e.last);
        ++added;
      } while (!(*evs_)[pos_ - 1].last);
    }
    return added > 0;
  }
  Result<bool> Wait(int) override { return false; }
  Result<uint64_t> LastSeq() override { return evs_->back().seq; }
  uint64_t NextSeq() const override {
    return pos_ < evs_->size() ? (*evs_)[pos_].seq : evs_->back().seq + 1;
  }
  Status Ack(uint64_t seq) override {
    on_ack_(seq);
    return Status::OK();
  }

 private:
  const std::vector<Ev>* evs_;
  std::function<void(uint64_t)> on_ack_;
  size_t pos_ = 0;
};

// What the code under test logs while one lives (instead of stderr).
class LogCapture {
 public:
  LogCapture() {
    lines().clear();
    SetLogSink([](LogLevel, std::string_view m) { lines().emplace_back(m); });
  }
  ~LogCapture() { SetLogSink(nullptr); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  static std::vector<std::string>& lines() {
    static std::vector<std::string> v;
    return v;
  }
};

// What one run of the engine ended with.
struct SinkRun {
  Status status;
  uint64_t acked = 0;            // the consumer's cursor after it
  std::vector<std::string> log;  // warnings and notes, in order
  bool Saw(const std::string& text) const {
    for (const std::string& l : log)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }
};

// The engine, as a sink tool runs it, over `evs` into `t`, from the
// consumer's cursor `*cursor` (moved to the target's applied seq first,
// as the log does, and by every ack; `check_ack` sees each ack before
// the cursor moves). Retries do not sleep.
inline SinkRun RunEngine(sink::Target* t, const std::vector<Ev>* evs,
                         uint64_t* cursor, size_t batch, double reconnect_max_s,
                         const std::function<void(uint64_t)>& check_ack) {
  LogCapture log;
  sink::EngineOptions o;
  o.batch = batch;
  o.reconnect_max_s = reconnect_max_s;
  o.sleep = [](int64_t) {};
  sink::Engine e(o, t, [&](std::optional<uint64_t> applied) {
    if (applied) *cursor = *applied;
    return Result<std::unique_ptr<consume::Source>>(
        std::make_unique<VectorSource>(evs, *cursor, [&](uint64_t seq) {
          REQUIRE(seq >= *cursor);
          check_ack(seq);
          *cursor = seq;
        }));
  });
  SinkRun r;
  r.status = e.Run();
  r.acked = *cursor;
  r.log = LogCapture::lines();
  return r;
}

}  // namespace cdc::test
