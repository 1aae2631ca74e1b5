// pgbench-like rows in stored form, shared by bench/log's programs.
#pragma once

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>

namespace cdc_bench {

// Rows as cdc-capture stores them for pgbench's tables (native form, no
// "seq"/"last"; ~320 bytes as cdc-tail prints them): row i % 4 of a
// transaction is an accounts, tellers or branches update or a history
// insert.
inline std::string PgbenchRow(std::mt19937_64& rng, uint64_t txn, int i,
                              uint64_t lsn) {
  char buf[512];
  const unsigned long long xid = 7000 + txn;
  const char* ts = "2026-11-29T07:41:02.";
  const unsigned long long us = (txn * 137) % 1000000;
  const long long delta = static_cast<long long>(rng() % 10000) - 5000;
  switch (i % 4) {
    case 0:
      snprintf(buf, sizeof buf,
               "{\"lsn\":\"0/%llX\",\"xid\":%llu,\"ts\":\"%s%06lluZ\",\"op\":"
               "\"u\",\"schema\":\"public\",\"table\":\"pgbench_accounts\","
               "\"key\":{\"aid\":%llu},\"before\":null,\"after\":{\"aid\":%llu,"
               "\"bid\":%llu,\"abalance\":%lld,\"filler\":\"%84s\"}}",
               static_cast<unsigned long long>(lsn), xid, ts, us,
               static_cast<unsigned long long>(rng() % 1000000),
               static_cast<unsigned long long>(rng() % 1000000),
               static_cast<unsigned long long>(rng() % 10 + 1), delta, "");
      break;
    case 1:
      snprintf(buf, sizeof buf,
               "{\"lsn\":\"0/%llX\",\"xid\":%llu,\"ts\":\"%s%06lluZ\",\"op\":"
               "\"u\",\"schema\":\"public\",\"table\":\"pgbench_tellers\","
               "\"key\":{\"tid\":%llu},\"before\":null,\"after\":{\"tid\":%llu,"
               "\"bid\":%llu,\"tbalance\":%lld,\"filler\":null}}",
               static_cast<unsigned long long>(lsn), xid, ts, us,
               static_cast<unsigned long long>(rng() % 100),
               static_cast<unsigned long long>(rng() % 100),
               static_cast<unsigned long long>(rng() % 10 + 1), delta);
      break;
    case 2:
      snprintf(buf, sizeof buf,
               "{\"lsn\":\"0/%llX\",\"xid\":%llu,\"ts\":\"%s%06lluZ\",\"op\":"
               "\"u\",\"schema\":\"public\",\"table\":\"pgbench_branches\","
               "\"key\":{\"bid\":%llu},\"before\":null,\"after\":{\"bid\":%llu,"
               "\"bbalance\":%lld,\"filler\":null}}",
               static_cast<unsigned long long>(lsn), xid, ts, us,
               static_cast<unsigned long long>(rng() % 10),
               static_cast<unsigned long long>(rng() % 10), delta);
      break;
    default:
      snprintf(buf, sizeof buf,
               "{\"lsn\":\"0/%llX\",\"xid\":%llu,\"ts\":\"%s%06lluZ\",\"op\":"
               "\"c\",\"schema\":\"public\",\"table\":\"pgbench_history\","
               "\"key\":null,\"before\":null,\"after\":{\"tid\":%llu,\"bid\":"
               "%llu,\"aid\":%llu,\"delta\":%lld,\"mtime\":\"2026-11-29T07:41:"
               "02.%06llu\",\"filler\":null}}",
               static_cast<unsigned long long>(lsn), xid, ts, us,
               static_cast<unsigned long long>(rng() % 100),
               static_cast<unsigned long long>(rng() % 10),
               static_cast<unsigned long long>(rng() % 1000000), delta, us);
  }
  return buf;
}

}  // namespace cdc_bench
