// bench/log: how long a seek takes as the log grows.
//
//   cdc-bench-seek --bin build/tools [--dir /tmp] [--gb 1,10,40] [--runs 5]
//                  [--json bench/results/seek.json] [--keep] [--repeat]
//                  [--reuse]
//
// Grows one log (default 64 MiB segments, retention off) to each size in
// --gb in turn, of events in 100-event transactions whose 300-byte payload
// is random, so the bytes on disk are what --gb says rather than a fifth
// of it. At each size it times `cdc-tail --from POS -n 1` from the moment
// the process starts to its first line on stdout (the user's "time to
// first event"), for POS = seq:, lsn: and time: at 10%, 50% and 90% of the
// log, and checks that the line is the event sought. Warm: the median of
// --runs after one run that fills the page cache. Cold (as root only):
// the page cache dropped before each run, then cdc-tail's program and
// libraries loaded again, so only the log comes from disk. `--from earliest` is
// the floor (starting the process and opening the log). Prints a table, writes
// JSON.
//
// --repeat: every transaction carries the same 100 event lines (those of
// the first), so the frames' compressed bytes repeat and a filesystem that
// compresses (btrfs with compress-force=zstd) can hold a log larger than
// its disk. Seqs, commit LSNs, times, frame headers and seal records stay
// distinct, and they are all a seek reads; the free-space check is skipped.
//
// --reuse: measure the log a run with --keep (and the same --repeat) left
// in DIR, growing it only where it is smaller than a size asked for.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cdc/base/lsn.h"
#include "cdc/base/time.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/writer.h"

namespace {

struct Args {
  std::string bin = "build/tools";
  std::string dir = "/tmp";
  std::string json = "bench/results/seek.json";
  std::vector<double> gb = {1, 10, 40};
  int runs = 5;
  bool keep = false;
  bool repeat = false;
  bool reuse = false;
};

void Check(const cdc::Status& s) {
  if (!s.ok()) {
    fprintf(stderr, "cdc-bench-seek: %s\n", s.message().c_str());
    exit(1);
  }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

constexpr uint64_t kPerTxn = 100;
constexpr int64_t kTime0 = 1764402062000000;  // 2025-11-29T07:41:02Z
// Transaction t (from 1) commits at LSN 0x1000 * t, time kTime0 + 1000 t.
uint64_t LsnOf(uint64_t txn) { return 0x1000 * txn; }
int64_t TimeOf(uint64_t txn) {
  return kTime0 + 1000 * static_cast<int64_t>(txn);
}

// Appends transactions to the log at `dir` until its segments hold
// `bytes`; returns the number of transactions now in it.
uint64_t GrowTo(const std::string& dir, uint64_t bytes, bool repeat) {
  auto w = cdc::log::LogWriter::Open(dir, cdc::log::WriterOptions{});
  Check(w.status());
  uint64_t txns = ((*w)->next_seq() - 1) / kPerTxn;
  std::mt19937_64 rng(txns + 1);
  static constexpr char kAlpha[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string payload(300, 'x'), line;
  std::vector<std::string> first;  // --repeat: the lines of transaction 1
  const std::string segs = dir + "/segments";
  auto on_disk = [&] {
    uint64_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(segs))
      if (e.path().extension() == ".seg") n += e.file_size();
    return n;
  };
  uint64_t have = on_disk();
  while (have < bytes) {
    for (int k = 0; k < 2000; ++k) {  // ~60 MB of raw events between checks
      const uint64_t t = ++txns;
      for (uint64_t i = 0; i < kPerTxn; ++i) {
        if (repeat && first.size() == kPerTxn) {
          Check((*w)->Append(first[i]));
          continue;
        }
        const uint64_t seq = (t - 1) * kPerTxn + i + 1;
        for (size_t j = 0; j < payload.size(); j += 8) {
          uint64_t r = rng();
          for (size_t b = 0; b < 8 && j + b < payload.size(); ++b, r >>= 6)
            payload[j + b] = kAlpha[r & 63];
        }
        line = "{\"lsn\":\"" + cdc::FormatLsn(LsnOf(t)) +
               "\",\"xid\":" + std::to_string(t) + ",\"ts\":\"" +
               cdc::FormatTimestamp(TimeOf(t)) +
               "\",\"op\":\"c\",\"schema\":\"public\",\"table\":\"blobs\","
               "\"key\":{\"id\":" +
               std::to_string(seq) +
               "},\"before\":null,\"after\":{\"id\":" + std::to_string(seq) +
               ",\"data\":\"" + payload + "\"}}";
        Check((*w)->Append(line));
        if (repeat) first.push_back(line);
      }
      Check((*w)->Commit(LsnOf(t), TimeOf(t), t));
    }
    Check((*w)->Sync());
    have = on_disk();
    fprintf(stderr, "\r  %.1f of %.1f GB", have / 1e9, bytes / 1e9);
  }
  fprintf(stderr, "\n");
  return txns;
}

// Empties the page cache, then loads cdc-tail and its libraries again, so
// that a cold run reads the log from disk but not the program.
void DropCaches(const std::string& bin) {
  sync();
  std::ofstream("/proc/sys/vm/drop_caches") << "3\n";
  if (system((bin + "/cdc-tail --version > /dev/null").c_str()) != 0) exit(1);
}

// Seconds from starting `cmd` to its first line on stdout; the line in
// `first`. Exits on failure.
double TimeToFirstLine(const std::string& cmd, std::string* first) {
  const int64_t start = cdc::MonoMicros();
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) {
    perror("popen");
    exit(1);
  }
  char buf[4096];
  first->clear();
  while (fgets(buf, sizeof buf, p) != nullptr) {
    first->append(buf);
    if (!first->empty() && first->back() == '\n') break;
  }
  const double s = (cdc::MonoMicros() - start) / 1e6;
  while (fgets(buf, sizeof buf, p) != nullptr) {
  }
  if (pclose(p) != 0 || first->empty()) {
    fprintf(stderr, "cdc-bench-seek: failed: %s\n", cmd.c_str());
    exit(1);
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--keep" || k == "--repeat" || k == "--reuse") {
      (k == "--keep" ? a.keep : k == "--repeat" ? a.repeat : a.reuse) = true;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "cdc-bench-seek: %s needs a value\n", k.c_str());
      return 64;
    }
    const std::string v = argv[++i];
    try {
      if (k == "--runs" && std::stoi(v) < 1) throw std::invalid_argument(v);
    } catch (const std::exception&) {
      fprintf(stderr, "cdc-bench-seek: %s: not a positive number: '%s'\n",
              k.c_str(), v.c_str());
      return 64;
    }
    if (k == "--bin") {
      a.bin = v;
    } else if (k == "--dir") {
      a.dir = v;
    } else if (k == "--json") {
      a.json = v;
    } else if (k == "--runs") {
      a.runs = std::stoi(v);
    } else if (k == "--gb") {
      a.gb.clear();
      for (size_t at = 0; at <= v.size();) {
        size_t comma = v.find(',', at);
        if (comma == std::string::npos) comma = v.size();
        double gb = 0;
        try {
          gb = std::stod(v.substr(at, comma - at));
        } catch (const std::exception&) {
        }
        if (!(gb > 0)) {
          fprintf(stderr, "cdc-bench-seek: --gb: not a list of sizes: '%s'\n",
                  v.c_str());
          return 64;
        }
        a.gb.push_back(gb);
        at = comma + 1;
      }
      std::sort(a.gb.begin(), a.gb.end());
    } else {
      fprintf(stderr, "cdc-bench-seek: unknown flag %s\n", k.c_str());
      return 64;
    }
  }
  const bool cold = geteuid() == 0;
  const std::string dir = a.dir + "/cdc-bench-seek";
  // The log is real bytes on disk: refuse a size that would fill it.
  const double free_gb = std::filesystem::space(a.dir).available / 1e9;
  if (a.gb.empty() || (!a.repeat && a.gb.back() > free_gb - 2)) {
    fprintf(stderr,
            "cdc-bench-seek: --gb %.1f does not fit in %s (%.1f GB free, 2 GB "
            "kept spare)\n",
            a.gb.empty() ? 0 : a.gb.back(), a.dir.c_str(), free_gb);
    return 1;
  }
  if (!a.reuse || !std::filesystem::exists(dir + "/segments")) {
    std::filesystem::remove_all(dir);
    Check(cdc::log::CreateLog(dir, std::nullopt).status());
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  uint64_t txns = 0;
  printf("%8s %9s %-22s %10s %10s %10s %s\n", "log GB", "segments", "seek",
         "warm ms", "cold ms", "target", "met");
  for (double gb : a.gb) {
    txns = GrowTo(dir, static_cast<uint64_t>(gb * 1e9), a.repeat);
    size_t segments = 0;
    uint64_t bytes = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir + "/segments"))
      if (e.path().extension() == ".seg") {
        ++segments;
        bytes += e.file_size();
      }
    struct Case {
      std::string name, from;
      uint64_t expect_seq;  // 0: any
    };
    std::vector<Case> cases = {{"earliest (the floor)", "earliest", 1}};
    for (int pct : {10, 50, 90}) {
      const uint64_t t = std::max<uint64_t>(1, txns * pct / 100);
      const uint64_t seq = (t - 1) * kPerTxn + 1;
      const std::string at = " at " + std::to_string(pct) + "%";
      cases.push_back({"seq" + at, std::to_string(seq + 17), seq + 17});
      cases.push_back({"lsn" + at, "lsn:" + cdc::FormatLsn(LsnOf(t)), seq});
      cases.push_back(
          {"time" + at, "time:" + cdc::FormatTimestamp(TimeOf(t)), seq});
    }
    for (const Case& c : cases) {
      const std::string cmd =
          a.bin + "/cdc-tail --log " + dir + " --from " + c.from + " -n 1";
      std::string line;
      auto check = [&] {
        const std::string want =
            "{\"seq\":" + std::to_string(c.expect_seq) + ",";
        if (line.rfind(want, 0) != 0) {
          fprintf(stderr, "cdc-bench-seek: --from %s printed %.80s\n",
                  c.from.c_str(), line.c_str());
          exit(1);
        }
      };
      TimeToFirstLine(cmd, &line);  // warm the page cache
      check();
      std::vector<double> warm, colds;
      for (int r = 0; r < a.runs; ++r) {
        warm.push_back(TimeToFirstLine(cmd, &line) * 1000);
        check();
      }
      if (cold)
        for (int r = 0; r < std::max(1, a.runs / 2); ++r) {
          DropCaches(a.bin);
          colds.push_back(TimeToFirstLine(cmd, &line) * 1000);
          check();
        }
      const double w = Median(warm), cm = cold ? Median(colds) : -1;
      const bool met = w < 50;  // the target is for a warm cache
      printf("%8.1f %9zu %-22s %10.1f %10s %10s %s\n", bytes / 1e9, segments,
             c.name.c_str(), w,
             cold ? std::to_string(cm).substr(0, 6).c_str() : "-", "< 50 ms",
             met ? "yes" : "NO");
      fflush(stdout);
      out.push_back({{"log_bytes", bytes},
                     {"segments", segments},
                     {"seek", c.name},
                     {"from", c.from},
                     {"warm_ms_median", w},
                     {"warm_ms_runs", warm},
                     {"cold_ms_median", cold ? nlohmann::json(cm) : nullptr},
                     {"cold_ms_runs", colds},
                     {"met", met}});
    }
  }
  if (!a.keep) std::filesystem::remove_all(dir);
  nlohmann::ordered_json j;
  j["events_per_txn"] = kPerTxn;
  j["payload_bytes"] = 300;
  j["repeat"] = a.repeat;
  j["results"] = out;
  const auto parent = std::filesystem::path(a.json).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::ofstream(a.json) << j.dump(2) << "\n";
  return 0;
}
