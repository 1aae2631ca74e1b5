#include "cdc/cursor/consumers.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <vector>

#include "test_util.h"

namespace cdc::cursor {

TEST_CASE("acks are cumulative and monotonic; seeks move anywhere",
          "[cursor]") {
  test::TempDir dir;
  auto s = ConsumerStore::Open(dir.path());
  REQUIRE(s.ok());
  auto& store = **s;
  REQUIRE(store.Create("x", 0).ok());
  CHECK(store.Create("x", 5).status().code() == Code::kCannotCreate);
  CHECK(*store.Ack("x", 10) == 10);
  CHECK(*store.Ack("x", 4) == 10);  // an older ack never moves it back
  CHECK(*store.Ack("x", 12) == 12);
  REQUIRE(store.Seek("x", 3).ok());  // explicit seek may go backward
  CHECK((*store.Get("x"))->acked_seq == 3);
  CHECK(store.Ack("nobody", 1).status().code() == Code::kNotFound);
  CHECK(store.Seek("nobody", 1).code() == Code::kNotFound);

  // A second connection (as another process would) sees the durable state.
  auto other = ConsumerStore::Open(dir.path());
  REQUIRE(other.ok());
  CHECK((*(*other)->Get("x"))->acked_seq == 3);
  bool created = true;
  auto y = (*other)->GetOrCreate("y", 7, &created);
  REQUIRE(y.ok());
  CHECK(created);
  auto y2 = store.GetOrCreate("y", 1, &created);
  CHECK_FALSE(created);
  CHECK(y2->acked_seq == 7);
  auto all = store.List();
  REQUIRE(all.ok());
  REQUIRE(all->size() == 2);
  CHECK((*all)[0].name == "x");
  REQUIRE(store.Delete("x").ok());
  CHECK(store.Delete("x").code() == Code::kNotFound);
}

// Tools that start together in a pipe (cdc-tail | ... | cdc-ack) open a
// fresh store at the same moment; each must wait for the other, not fail.
TEST_CASE("processes opening a new store at once all succeed", "[cursor]") {
  constexpr int kRounds = 100;
  constexpr int kProcs = 6;
  int failures = 0;
  for (int round = 0; round < kRounds; ++round) {
    test::TempDir dir;
    std::vector<pid_t> kids;
    for (int i = 0; i < kProcs; ++i) {
      pid_t pid = fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        auto s = ConsumerStore::Open(dir.path());
        bool created = false;
        bool ok = s.ok() && (*s)->GetOrCreate("c", 0, &created).ok();
        _exit(ok ? 0 : 1);
      }
      kids.push_back(pid);
    }
    for (pid_t pid : kids) {
      int st = 0;
      REQUIRE(waitpid(pid, &st, 0) == pid);
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) ++failures;
    }
  }
  CHECK(failures == 0);
}

TEST_CASE("consumer names are validated", "[cursor]") {
  CHECK(ValidateConsumerName("billing-v2.prod_1").ok());
  CHECK(ValidateConsumerName("").code() == Code::kUsage);
  CHECK(ValidateConsumerName("a b").code() == Code::kUsage);
  CHECK(ValidateConsumerName(std::string(65, 'a')).code() == Code::kUsage);
}

}  // namespace cdc::cursor
