// bench/log/alternatives: the experiment behind the multi-transaction frame
// (man/cdc-log-format.5, "Why transactions share frames").
//
//   cdc-bench-log-alternatives [--events 50000]
//
// For pgbench-like rows in 1-, 4- and 100-row transactions it stores the
// same events four ways and prints bytes on disk per byte of NDJSON and the
// compression cost per event:
//   per-txn   one frame per transaction, as format 1 writes it (frames
//             under 1 KiB stored, under 4 KiB at level -1, else level 1);
//   dict      one frame per transaction, each compressed at level 1 with a
//             16 KiB zstd dictionary trained on the first 2,000 events;
//   group:W   the transactions of one write window in one frame (W raw
//             bytes, or 8 transactions: an idle-ish stream), level 1, with
//             a 6-byte-per-transaction table;
//   both:W    grouped, and compressed with the dictionary.
// Each frame pays the 64-byte header.
#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>
#include <zstd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "pgbench_rows.h"

namespace {

constexpr size_t kHeader = 64;
constexpr size_t kTableEntry = 6;

double Now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Out {
  size_t bytes = 0;
  double seconds = 0;
};

// Compresses `raw` as the format-1 writer would (no dictionary) or at
// level 1 with `cdict`; returns the stored payload size.
size_t Store(ZSTD_CCtx* c, const std::string& raw, const ZSTD_CDict* cdict,
             bool v1_thresholds, std::string* buf) {
  buf->resize(ZSTD_compressBound(raw.size()));
  size_t n = 0;
  if (cdict) {
    n = ZSTD_compress_usingCDict(c, buf->data(), buf->size(), raw.data(),
                                 raw.size(), cdict);
  } else if (!v1_thresholds || raw.size() >= 4096) {
    n = ZSTD_compressCCtx(c, buf->data(), buf->size(), raw.data(), raw.size(),
                          1);
  } else if (raw.size() >= 1024) {
    n = ZSTD_compressCCtx(c, buf->data(), buf->size(), raw.data(), raw.size(),
                          -1);
  }
  if (n == 0 || ZSTD_isError(n) || n >= raw.size()) return raw.size();
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  size_t events = 50000;
  for (int i = 1; i + 1 < argc; i += 2)
    if (!strcmp(argv[i], "--events")) events = strtoull(argv[i + 1], 0, 10);
  ZSTD_CCtx* c = ZSTD_createCCtx();
  std::string buf;
  printf("%-14s %-12s %10s %10s %12s\n", "workload", "layout", "disk/ndjson",
         "ndjson/disk", "us/event");
  for (int rows : {1, 4, 100}) {
    std::mt19937_64 rng(rows);
    std::vector<std::string> txns;  // raw NDJSON of each transaction
    size_t ndjson = 0;
    uint64_t lsn = 0x1634F28;
    std::vector<std::string> samples;
    std::vector<size_t> sample_sizes;
    std::string sample_buf;
    for (size_t e = 0, t = 0; e < events; ++t) {
      std::string raw;
      lsn += 200 + rng() % 300;
      for (int i = 0; i < rows && e < events; ++i, ++e) {
        std::string r = cdc_bench::PgbenchRow(rng, t, rows == 1 ? 0 : i, lsn);
        // cdc-tail adds "seq":N, and "last":true on a transaction's end.
        ndjson += r.size() + 1 + 8 + std::to_string(e + 1).size() +
                  (i + 1 == rows ? 12 : 0);
        if (e < 2000) {
          sample_buf += r;
          sample_sizes.push_back(r.size() + 1);
          sample_buf += '\n';
        }
        raw += r;
        raw += '\n';
      }
      txns.push_back(raw);
    }
    std::string dict(16 << 10, '\0');
    size_t dn = ZDICT_trainFromBuffer(
        dict.data(), dict.size(), sample_buf.data(), sample_sizes.data(),
        static_cast<unsigned>(sample_sizes.size()));
    if (ZDICT_isError(dn)) dn = 0;
    dict.resize(dn);
    ZSTD_CDict* cd = dn ? ZSTD_createCDict(dict.data(), dn, 1) : nullptr;

    auto report = [&](const char* layout, Out o) {
      printf("%-14s %-12s %10.3f %10.2f %12.3f\n",
             (std::to_string(rows) + "-row txns").c_str(), layout,
             double(o.bytes) / ndjson, double(ndjson) / o.bytes,
             o.seconds * 1e6 / events);
    };
    auto per_txn = [&](const ZSTD_CDict* d) {
      Out o;
      double t0 = Now();
      for (const auto& t : txns) o.bytes += kHeader + Store(c, t, d, !d, &buf);
      o.seconds = Now() - t0;
      if (d) o.bytes += dn;
      return o;
    };
    // Windows of `window` raw bytes, or of `max_txns` transactions.
    auto grouped = [&](const ZSTD_CDict* d, size_t window, size_t max_txns) {
      Out o;
      double t0 = Now();
      std::string g;
      size_t n = 0;
      auto flush = [&] {
        if (n == 0) return;
        o.bytes += kHeader + kTableEntry * n + Store(c, g, d, false, &buf);
        g.clear();
        n = 0;
      };
      for (const auto& t : txns) {
        g += t;
        ++n;
        if (g.size() >= window || n >= max_txns) flush();
      }
      flush();
      o.seconds = Now() - t0;
      if (d) o.bytes += dn;
      return o;
    };
    report("per-txn", per_txn(nullptr));
    report("dict", per_txn(cd));
    report("group:8txn", grouped(nullptr, SIZE_MAX, 8));
    report("group:64K", grouped(nullptr, 64 << 10, SIZE_MAX));
    report("both:8txn", grouped(cd, SIZE_MAX, 8));
    report("both:64K", grouped(cd, 64 << 10, SIZE_MAX));
    ZSTD_freeCDict(cd);
  }
  ZSTD_freeCCtx(c);
  return 0;
}
