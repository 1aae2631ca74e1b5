// bench/capture: what capture spends on one row of an initial snapshot
// between the server's bytes and the copier's batch, on one core.
//
//   cdc-bench-render [--rows 1000000] [--runs 5]
//                    [--json bench/results/render.json]
//
// The rows are bench/snapshot's: a bigint key and 256 bytes of text, as
// binary COPY sends them (4,096 distinct rows, used in turn). Each run
// parses --rows of them (CopyBinaryReader) and renders each as a snapshot
// read into a 256 KiB batch of lines, which is emptied when full, three
// ways, taking turns:
//   line:   EventBuilder::ApplySnapshotRead into a line of its own, then
//           copied into the batch (a streamed insert's path, and the
//           snapshot's before rows went straight into the batch);
//   batch:  EventBuilder::AppendSnapshotRead straight into the batch (the
//           snapshot's copiers now);
//   floor:  the same bytes written by hand (prefixes fixed in advance, the
//           text escaped and checked as UTF-8), no builder: how far the
//           builder is from the least this work can cost.
// The three must give byte-identical batches (checked by their XXH3 hash:
// the bench fails otherwise). Prints ns per row, best and median of --runs;
// writes JSON.
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "cdc/event/json_text.h"
#include "cdc/pg/copy_binary.h"
#include "cdc/pg/event_builder.h"

namespace {

using cdc::pg::CopyBinaryReader;
using cdc::pg::EventBuilder;
using cdc::pg::EventLines;
using cdc::pg::Insert;

constexpr cdc::pg::Oid kTable = 16384;
constexpr size_t kBatchBytes = 256 << 10;
constexpr int kDistinct = 4096;  // a power of two

[[noreturn]] void Die(const std::string& what) {
  fprintf(stderr, "cdc-bench-render: %s\n", what.c_str());
  exit(1);
}

void Check(const cdc::Status& s) {
  if (!s.ok()) Die(s.message());
}

void PutBe32(std::string* s, uint32_t v) {
  for (int i = 3; i >= 0; --i) s->push_back(static_cast<char>(v >> (8 * i)));
}

// Row k of bench/snapshot's tables as a binary COPY message: (id, payload).
std::string CopyRow(int k) {
  const uint64_t id = 1 + static_cast<uint64_t>(k) * 977;
  char hex[33];
  snprintf(hex, sizeof hex, "%08x%08x%08x%08x", k * 2654435761u, k * 40503u,
           ~static_cast<uint32_t>(k) * 7u, k + 12345u);
  std::string payload =
      std::string(hex) + hex + " order paid shipped customer berlin ";
  while (payload.size() < 256) payload += "note ";
  payload.resize(256);
  std::string m;
  m.push_back(0);
  m.push_back(2);  // fields
  PutBe32(&m, 8);
  PutBe32(&m, static_cast<uint32_t>(id >> 32));
  PutBe32(&m, static_cast<uint32_t>(id));
  PutBe32(&m, static_cast<uint32_t>(payload.size()));
  return m + payload;
}

struct Run {
  double ns_per_row = 0;
  uint64_t bytes = 0;
  uint64_t hash = 0;   // of every batch handed out, chained
  double hash_ns = 0;  // spent hashing, left out of ns_per_row
};

void Hash(const std::string& batch, Run* r) {
  const auto t0 = std::chrono::steady_clock::now();
  r->hash = XXH3_64bits_withSeed(batch.data(), batch.size(), r->hash);
  r->bytes += batch.size();
  r->hash_ns += std::chrono::duration<double, std::nano>(
                    std::chrono::steady_clock::now() - t0)
                    .count();
}

// One run of `mode` over `rows` rows. The time spent hashing the batches
// (to compare the modes' bytes without keeping them) is left out.
Run Once(const std::string& mode, const std::vector<std::string>& msgs,
         uint64_t rows) {
  EventBuilder builder(nullptr, [] { return int64_t{0}; });
  builder.BeginTransaction(0x60326A20, 0, 1796540000000000);
  cdc::pg::Relation rel;
  rel.oid = kTable;
  rel.nspname = "public";
  rel.relname = "t1";
  rel.columns = {{1, "id", 20, -1}, {0, "payload", 25, -1}};
  EventLines events;
  Check(builder.Apply(cdc::pg::Message{rel}, &events));
  CopyBinaryReader reader({20, 25});
  std::string header("PGCOPY\n\377\r\n\0", 11);
  header.append(8, '\0');
  bool got = false;
  Insert row;
  row.relation_oid = kTable;
  Check(reader.Next(header, &row.new_tuple, &got));
  // The floor's fixed parts, as the builder renders them.
  events.clear();
  Check(builder.ApplySnapshotRead(
      {kTable,
       {{cdc::pg::TupleColumn::Kind::kText, "7", {}},
        {cdc::pg::TupleColumn::Kind::kText, "x", {}}}},
      &events));
  const std::string sample = events[events.size() - 1];
  const std::string head = sample.substr(0, sample.find("7}"));
  const std::string mid = "},\"before\":null,\"after\":{\"id\":";
  const std::string after_id = ",\"payload\":";
  Run r;
  std::string batch;
  batch.reserve(kBatchBytes + 4096);
  const auto start = std::chrono::steady_clock::now();
  const int how = mode == "line" ? 0 : mode == "batch" ? 1 : 2;
  for (uint64_t k = 0; k < rows; ++k) {
    Check(reader.Next(msgs[k & (kDistinct - 1)], &row.new_tuple, &got));
    if (!got) Die("a row message held no row");
    if (batch.size() >= kBatchBytes) {
      Hash(batch, &r);
      batch.clear();
    }
    if (how == 0) {
      events.clear();
      Check(builder.ApplySnapshotRead(row, &events));
      batch.append(events[events.size() - 1]);
    } else if (how == 1) {
      events.clear();
      Check(builder.AppendSnapshotRead(row, &events, &batch));
    } else {
      const std::string_view id = row.new_tuple[0].text();
      batch.append(head);
      batch.append(id);
      batch.append(mid);
      batch.append(id);
      batch.append(after_id);
      if (!cdc::event::AppendJsonString(row.new_tuple[1].text(), &batch))
        Die("payload is not UTF-8");
      batch.append("}}");
    }
    batch.push_back('\n');
  }
  Hash(batch, &r);
  const auto end = std::chrono::steady_clock::now();
  r.ns_per_row =
      (std::chrono::duration<double, std::nano>(end - start).count() -
       r.hash_ns) /
      static_cast<double>(rows);
  return r;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t rows = 1000000;
  int runs = 5;
  std::string json = "bench/results/render.json";
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) {
      fprintf(stderr, "cdc-bench-render: %s needs a value\n", k.c_str());
      return 64;
    }
    const std::string v = argv[++i];
    if (k == "--json") {
      json = v;
      continue;
    }
    if (k != "--rows" && k != "--runs") {
      fprintf(stderr, "cdc-bench-render: unknown flag %s\n", k.c_str());
      return 64;
    }
    long long n = 0;
    try {
      size_t used = 0;
      n = std::stoll(v, &used);
      if (used != v.size() || n < 1) throw std::invalid_argument(v);
    } catch (const std::exception&) {
      fprintf(stderr, "cdc-bench-render: %s: not a positive number: '%s'\n",
              k.c_str(), v.c_str());
      return 64;
    }
    if (k == "--rows") {
      rows = static_cast<uint64_t>(n);
    } else if (n <= 1000) {
      runs = static_cast<int>(n);
    } else {
      fprintf(stderr, "cdc-bench-render: --runs: at most 1000, not %s\n",
              v.c_str());
      return 64;
    }
  }
  std::vector<std::string> msgs;
  for (int k = 0; k < kDistinct; ++k) msgs.push_back(CopyRow(k));
  const std::vector<std::string> modes = {"line", "batch", "floor"};
  std::vector<std::vector<double>> ns(modes.size());
  Run first;
  for (int run = 0; run < runs; ++run) {
    for (size_t m = 0; m < modes.size(); ++m) {
      // Take turns, each mode first in one run of every three.
      const size_t at = (m + static_cast<size_t>(run)) % modes.size();
      const Run r = Once(modes[at], msgs, rows);
      if (run == 0 && m == 0) first = r;
      if (r.bytes != first.bytes || r.hash != first.hash)
        Die("mode " + modes[at] + " rendered other bytes than mode line");
      ns[at].push_back(r.ns_per_row);
    }
  }
  printf("%-8s %14s %16s %10s\n", "mode", "ns/row (best)", "ns/row (median)",
         "vs line");
  nlohmann::ordered_json out;
  out["bench"] = "render";
  out["rows"] = rows;
  out["runs"] = runs;
  out["bytes_per_row"] = static_cast<double>(first.bytes) / rows;
  const double line = Median(ns[0]);
  for (size_t m = 0; m < modes.size(); ++m) {
    const double best = *std::min_element(ns[m].begin(), ns[m].end());
    const double med = Median(ns[m]);
    printf("%-8s %14.1f %16.1f %9.2fx\n", modes[m].c_str(), best, med,
           med / line);
    out["modes"][modes[m]] = {{"ns_per_row_best", best},
                              {"ns_per_row_median", med},
                              {"ns_per_row_runs", ns[m]}};
  }
  printf("%.1f bytes per row; the three gave identical batches\n",
         static_cast<double>(first.bytes) / rows);
  const auto parent = std::filesystem::path(json).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::ofstream(json) << out.dump(2) << "\n";
  printf("wrote %s\n", json.c_str());
  return 0;
}
