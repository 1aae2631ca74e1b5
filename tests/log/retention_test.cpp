#include "cdc/log/retention.h"

#include <unistd.h>

#include <catch2/catch.hpp>

#include "cdc/base/time.h"
#include "cdc/cursor/consumers.h"
#include "cdc/log/reader.h"
#include "cdc/log/verify.h"
#include "runners.h"
#include "test_util.h"

namespace cdc::log {

TEST_CASE("retention removes whole sealed segments, oldest first",
          "[log][retention]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  WriterOptions opts;
  opts.segment_bytes = 2048;
  test::WriteTxns(log, 1, 60, 4, opts);
  auto before = ListSegments(log);
  REQUIRE(before->size() >= 5);

  RetentionPolicy keep3;
  keep3.max_segments = 3;
  auto dry = ApplyRetention(log, keep3, NowMicros(), true);
  REQUIRE(dry.ok());
  CHECK(dry->removed.size() == before->size() - 3);
  CHECK(ListSegments(log)->size() == before->size());  // dry run kept all

  auto res = ApplyRetention(log, keep3, NowMicros(), false);
  REQUIRE(res.ok());
  auto after = ListSegments(log);
  REQUIRE(after->size() == 3);
  CHECK(res->first_seq == (*after)[0].base_seq);
  CHECK((*after)[0].base_seq == (*before)[before->size() - 3].base_seq);
  auto rep = VerifyLog(log);
  REQUIRE(rep.ok());
  CHECK(rep->ok());
  auto got = test::ReadAll(log);
  CHECK(got.seqs.front() == res->first_seq);
  CHECK(got.seqs.back() == 240);

  // Age: every commit is from 2025, so a one-day limit leaves the newest.
  RetentionPolicy age;
  age.max_age_us = 86400ll * 1000000;
  res = ApplyRetention(log, age, NowMicros(), false);
  REQUIRE(res.ok());
  CHECK(ListSegments(log)->size() == 1);  // never the active segment

  RetentionPolicy bytes;
  bytes.max_bytes = 1;
  res = ApplyRetention(log, bytes, NowMicros(), false);
  CHECK(res->removed.empty());
}

TEST_CASE("an expired consumer fails until an operator seeks it",
          "[log][retention][cursor]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  WriterOptions opts;
  opts.segment_bytes = 2048;
  test::WriteTxns(log, 1, 60, 4, opts);
  REQUIRE(test::RunTool(ack::RunCli, {"cdc-ack", "--log", log, "-c", "slow",
                                      "--create"}) == 0);
  REQUIRE(test::RunTool(ack::RunCli,
                        {"cdc-ack", "--log", log, "-c", "slow", "5"}) == 0);
  RetentionPolicy keep2;
  keep2.max_segments = 2;
  auto res = ApplyRetention(log, keep2, NowMicros(), false);
  REQUIRE(res.ok());
  REQUIRE(res->first_seq > 6);

  std::string out;
  CHECK(test::RunTool(tail::RunCli, {"cdc-tail", "--log", log, "-c", "slow"},
                      &out) == 10);
  CHECK(out.empty());
  // Acks of what is gone do not revive it; a seek does.
  CHECK(test::RunTool(ack::RunCli, {"cdc-ack", "--log", log, "-c", "slow",
                                    "--seek", "earliest"}) == 0);
  CHECK(test::RunTool(tail::RunCli,
                      {"cdc-tail", "--log", log, "-c", "slow", "-n", "1"},
                      &out) == 0);
  CHECK(out.rfind("{\"seq\":" + std::to_string(res->first_seq) + ",", 0) == 0);
  auto store = cursor::ConsumerStore::Open(log);
  CHECK((*(*store)->Get("slow"))->acked_seq == res->first_seq - 1);
}

}  // namespace cdc::log

namespace cdc::log {

TEST_CASE(
    "a reader reads on through a segment deleted under it, and is expired "
    "only when the next one is gone too",
    "[log][retention][reader]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  WriterOptions opts;
  opts.segment_bytes = 2048;
  test::WriteTxns(log, 1, 60, 4, opts);
  auto segs = ListSegments(log);
  REQUIRE(segs->size() >= 5);
  auto remove = [](const SegmentInfo& s) {
    REQUIRE(::unlink(s.path.c_str()) == 0);
    REQUIRE(::unlink(SealRecordPath(s.path).c_str()) == 0);
  };
  auto reader = LogReader::Open(log);
  REQUIRE(reader.ok());
  Batch b;
  REQUIRE(*(*reader)->Next(&b));
  std::vector<uint64_t> seqs;
  b.ForEach([&](uint64_t seq, std::string_view, bool) { seqs.push_back(seq); });

  SECTION("the segment being read") {
    remove((*segs)[0]);
    for (;;) {
      auto got = (*reader)->Next(&b);
      REQUIRE(got.ok());
      if (!*got) break;
      b.ForEach(
          [&](uint64_t seq, std::string_view, bool) { seqs.push_back(seq); });
    }
    REQUIRE(seqs.size() == 240);
    for (size_t i = 0; i < seqs.size(); ++i) CHECK(seqs[i] == i + 1);
  }
  SECTION("the segment being read and the next") {
    remove((*segs)[0]);
    remove((*segs)[1]);
    Status err;
    for (;;) {
      auto got = (*reader)->Next(&b);
      if (!got.ok()) {
        err = got.status();
        break;
      }
      REQUIRE(*got);
      b.ForEach(
          [&](uint64_t seq, std::string_view, bool) { seqs.push_back(seq); });
    }
    // All of the open segment, then a clear expiry.
    CHECK(seqs.size() == (*segs)[1].base_seq - 1);
    CHECK(err.code() == Code::kExpired);
    CHECK(err.message() ==
          "events from seq " + std::to_string((*segs)[1].base_seq) +
              " were removed by retention while being read (the earliest "
              "retained event is now seq " +
              std::to_string((*segs)[2].base_seq) + ")");
  }
}

}  // namespace cdc::log
