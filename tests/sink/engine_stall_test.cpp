// The engine's stall rule: work in flight with no answer of any kind for
// reconnect_max_s is given up; a target that keeps answering (statements
// of a long batch) is not stalled, however long the batch takes.
#include <chrono>
#include <thread>

#include "cdc/sink/target.h"
#include "sink/sink_test.h"

namespace cdc::test {

namespace {

// Confirms each batch after `polls` calls of Poll of 40 ms each, counting
// an answer on each call when `answering`.
class SlowTarget final : public sink::Target {
 public:
  SlowTarget(int polls, bool answering)
      : polls_(polls), answering_(answering) {}
  Result<std::optional<uint64_t>> Open() override {
    pending_ = 0;
    return applied_ ? std::optional<uint64_t>(applied_) : std::nullopt;
  }
  bool HasRoom() const override { return pending_ == 0; }
  Status Submit(const consume::SinkBatch& b) override {
    if (b.events.empty() || b.events.back().seq <= applied_)
      return Status::OK();
    pending_ = b.events.back().seq;
    count_ = b.events.size();
    left_ = polls_;
    return Status::OK();
  }
  Status Poll(int) override {
    if (pending_ == 0) return Status::OK();
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    if (answering_) ++answers_;
    if (--left_ == 0) {
      applied_ = pending_;
      pending_ = 0;
    }
    return Status::OK();
  }
  uint64_t confirmed() const override { return applied_; }
  size_t in_flight() const override { return pending_ == 0 ? 0 : count_; }
  uint64_t answers() const override { return answers_; }
  std::string Name() const override { return "slow"; }
  std::string MetricPrefix() const override { return "slow_"; }

 private:
  int polls_, left_ = 0;
  bool answering_;
  uint64_t applied_ = 0, pending_ = 0, answers_ = 0;
  size_t count_ = 0;
};

}  // namespace

TEST_CASE("sink engine: a batch that keeps answering is not stalled",
          "[sink]") {
  const std::vector<Ev> evs = Workload();
  uint64_t cursor = 0;
  // 10 polls of 40 ms: 0.4 s per batch against a 0.2 s limit.
  SlowTarget answering(10, true);
  SinkRun r = RunEngine(&answering, &evs, &cursor, 1000, 0.2, [](uint64_t) {});
  REQUIRE_OK(r.status);
  CHECK(r.acked == evs.back().seq);

  cursor = 0;
  SlowTarget silent(10, false);
  r = RunEngine(&silent, &evs, &cursor, 1000, 0.2, [](uint64_t) {});
  REQUIRE_FALSE(r.status.ok());
  CHECK(r.status.code() == Code::kUnavailable);
  CHECK(r.status.message().find("slow: nothing confirmed for 0 s") !=
        std::string::npos);
  CHECK(r.acked == 0);
}

}  // namespace cdc::test
