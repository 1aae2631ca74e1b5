// Reading the log allocates nothing per event: cdc-tail's native path and
// the --table/--op paths run on buffers that stop growing once the first
// frames have been read. Counted by replacing the global operator new of
// the test binary (a relaxed counter, so every other test is unaffected).
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <new>

#include "cdc/consume/reader.h"
#include "cdc/event/event.h"
#include "test_util.h"

namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
// Every form that pairs with the deletes below, so that none comes from
// the C++ runtime or a sanitizer (which checks that new and delete match).
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept {
  return ::operator new(n, t);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace cdc::consume {

namespace {

// A line of transaction `t`, row `i`: ops c, u and d in turn, over tables
// t0..t2 (test::EventLine), all sharing the transaction's head.
std::string Line(uint64_t t, uint64_t i) {
  std::string l = test::EventLine(t, i, 200);
  const size_t at = l.find("\"op\":\"c\"") + 6;
  l[at] = "cud"[i % 3];
  return l;
}

// `txns` transactions of `rows` rows, in grouped frames where they are
// small, with a watermark (which the default view hides) every 10th.
void WriteLog(const std::string& dir, uint64_t txns, uint64_t rows) {
  REQUIRE(log::OpenOrCreateLog(dir).ok());
  auto w = log::LogWriter::Open(dir, log::WriterOptions{});
  REQUIRE(w.ok());
  for (uint64_t t = 1; t <= txns; ++t) {
    for (uint64_t i = 0; i < rows; ++i) REQUIRE((*w)->Append(Line(t, i)).ok());
    if (t % 10 == 0) {
      char m[200];
      snprintf(m, sizeof m,
               "{\"lsn\":\"0/%llX\",\"xid\":%llu,\"ts\":\"2026-11-29T07:41:02."
               "000000Z\",\"op\":\"m\",\"prefix\":\"cdc.snapshot.low\","
               "\"content\":\"x\",\"transactional\":true}",
               static_cast<unsigned long long>(t * 16),
               static_cast<unsigned long long>(t));
      REQUIRE((*w)->Append(m).ok());
    }
    REQUIRE((*w)->Commit(t * 16, 1764402062000000 + static_cast<int64_t>(t), t)
                .ok());
  }
  REQUIRE((*w)->Sync().ok());
}

// Reads the whole log through a Reader with `sel`, rendering each selected
// event natively into a buffer that is emptied as cdc-tail's output is;
// returns the allocations made after the first `warm` events.
uint64_t AllocationsReading(const std::string& dir, Selection sel,
                            uint64_t warm, uint64_t* taken) {
  Options o;
  o.log_dir = dir;
  o.selection = std::move(sel);
  auto r = Reader::Open(std::move(o));
  REQUIRE(r.ok());
  std::string out;
  out.reserve(1 << 20);
  Event e;
  bool selected = false;
  uint64_t read = 0, before = 0, after = 0;
  *taken = 0;
  for (;;) {
    if (read == warm) before = g_allocations.load(std::memory_order_relaxed);
    auto got = (*r)->NextConsumed(&e, &selected);
    REQUIRE(got.ok());
    if (!*got) break;
    after = g_allocations.load(std::memory_order_relaxed);
    ++read;
    if (!selected) continue;
    ++*taken;
    event::AppendNative(e.seq, e.stored, e.last, &out);
    if (out.size() > (1 << 19)) out.clear();
  }
  REQUIRE(read > warm);
  // Up to the last event: reaching the end of the log is not per event.
  return after - before;
}

}  // namespace

TEST_CASE("reading the log allocates nothing per event", "[consume][alloc]") {
  for (uint64_t rows : {100, 1}) {
    test::TempDir d;
    const std::string dir = d.sub("log");
    const uint64_t txns = rows == 1 ? 20000 : 300;
    WriteLog(dir, txns, rows);
    struct Case {
      const char* name;
      std::vector<std::string> tables;
      std::string ops;
      uint64_t expect;  // events taken
    };
    // Transaction t's rows are of table t(t % 3); row i's op is "cud"[i % 3].
    const uint64_t all = txns * rows;
    const Case cases[] = {
        {"the default view", {}, "", all},
        {"--table public.t1", {"public.t1"}, "", (txns + 2) / 3 * rows},
        {"--op u,d", {}, "u,d", rows == 1 ? 0 : txns * 66},
    };
    for (const Case& c : cases) {
      CAPTURE(rows, c.name);
      auto sel = Selection::Make(dir, c.tables, c.ops, "", {}, false);
      REQUIRE(sel.ok());
      uint64_t taken = 0;
      const uint64_t allocations =
          AllocationsReading(dir, std::move(sel).value(), 1000, &taken);
      CHECK(taken == c.expect);
      CHECK(allocations == 0);
    }
  }
}

}  // namespace cdc::consume
