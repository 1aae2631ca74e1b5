// bench/log: append, tail, size and follow-latency figures for the event log.
//
//   cdc-bench-log --bin build/tools [--dir /tmp] [--json out.json]
//                 [--events 2000000] [--runs 3] [--follow-seconds 10]
//                 [--workload-events 500000] [--workload-follow-seconds 5]
//   cdc-bench-log --make-log ROWS --dir D [--events N]   (only writes D)
//   cdc-bench-log --append-only --dir D [--events N] [--runs R]
//                 (the append figure alone, each run's on a line: to set
//                 two builds of the writer side by side)
//   cdc-bench-log --tail-vs-cat --bin build/tools [--dir /tmp]
//                 [--json out.json] [--events 1000000] [--runs 5]
//
// Prints a table and writes the same figures as JSON. Each figure is the
// median of --runs runs. A second table compares the frame formats on
// pgbench-like rows in 1-, 4- and 100-row transactions: format 1 (one
// frame per transaction, as earlier releases wrote) against format 2
// (the transactions of a group-commit window share a frame), each with
// bytes on disk per byte of NDJSON, append and tail rates and the follow
// latency.
//
// --tail-vs-cat measures only `cdc-tail --log L [FLAGS] | wc -c` against
// `cat F | wc -c` in the same run (runs alternate, medians reported), on
// pgbench-like rows in 100- and 1-row transactions: native, --table,
// --op, debezium and cloudevents. F is the NDJSON the log holds (native
// cdc-tail's output) for native, --table and --op, and what cdc-tail
// prints for debezium and cloudevents. Prints a table (pipe cpu: user and
// system time of cdc-tail and wc together), writes JSON.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cdc/base/time.h"
#include "cdc/event/event.h"
#include "cdc/event/renderer.h"
#include "cdc/log/reader.h"
#include "cdc/log/writer.h"
#include "paced.h"
#include "pgbench_rows.h"

namespace {

using cdc::log::LogWriter;

struct Args {
  std::string bin = "build/tools";
  std::string dir = "/tmp";
  std::string json = "bench/results/log.json";
  uint64_t events = 2000000;
  int runs = 3;
  int follow_seconds = 10;
  int follow_rate = 50000;
  uint64_t workload_events = 500000;
  int workload_follow_seconds = 5;
  int make_rows = 0;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// An event with a ~256-byte payload of words and numbers: compressible the
// way real row text is, not a run of one byte.
std::string MakeEvent(std::mt19937_64& rng, uint64_t txn, uint64_t i,
                      int64_t stamp) {
  static const char* kWords[] = {"order",    "paid",    "shipped", "refund",
                                 "customer", "invoice", "pending", "express",
                                 "berlin",   "lisbon",  "tokyo",   "cancel",
                                 "priority", "gift",    "note",    "warehouse"};
  std::string payload;
  while (payload.size() < 256) {
    payload += kWords[rng() % 16];
    payload += ' ';
    payload += std::to_string(rng() % 100000);
    payload += ' ';
  }
  payload.resize(256);
  char head[200];
  snprintf(head, sizeof head,
           "{\"lsn\":\"0/%llX\",\"xid\":%llu,\"ts\":\"2026-11-29T07:41:02."
           "%06lluZ\",\"op\":\"c\",\"schema\":\"public\",\"table\":\"orders\","
           "\"key\":{\"id\":%llu},\"before\":null,\"after\":{\"id\":%llu,"
           "\"t_us\":%lld,\"payload\":\"",
           static_cast<unsigned long long>(txn * 64),
           static_cast<unsigned long long>(txn),
           static_cast<unsigned long long>(txn % 1000000),
           static_cast<unsigned long long>(txn * 100 + i),
           static_cast<unsigned long long>(txn * 100 + i),
           static_cast<long long>(stamp));
  return std::string(head) + payload + "\"}}";
}

void Check(const cdc::Status& s) {
  if (!s.ok()) {
    fprintf(stderr, "cdc-bench-log: %s\n", s.message().c_str());
    exit(1);
  }
}

struct AppendResult {
  double seconds = 0;
  uint64_t raw_bytes = 0;  // native NDJSON as cdc-tail prints it
  uint64_t disk_bytes = 0;
};

// `rows`-event transactions, group commit: one fdatasync per 5 ms window.
// `pgbench`: pgbench-like rows (else MakeEvent's); `format`: the frame
// format written.
AppendResult Append(const std::string& dir, uint64_t events, int rows = 100,
                    bool pgbench = false,
                    int format = cdc::log::kFormatVersion) {
  std::filesystem::remove_all(dir);
  Check(cdc::log::CreateLog(dir, std::nullopt,
                            format == cdc::log::kFormatVersion1
                                ? 1
                                : cdc::log::kLogFormatVersion)
            .status());
  cdc::log::WriterOptions opts;
  opts.format_version = format;
  auto w = LogWriter::Open(dir, opts);
  Check(w.status());
  std::mt19937_64 rng(1);
  std::vector<std::string> lines;
  AppendResult r;
  // Line k is written as event k+1 (mod 1000), and `rows` divides 1000, so
  // the pgbench lines of one transaction share its head (commit lsn, xid
  // and time), as in a log cdc-capture writes.
  for (uint64_t i = 0; i < 1000; ++i)
    lines.push_back(pgbench ? cdc_bench::PgbenchRow(
                                  rng, i / rows, rows == 1 ? 0 : int(i % 4),
                                  0x1634F28 + i / rows * 30000)
                            : MakeEvent(rng, 1, i, 0));
  const int64_t start = cdc::MonoMicros();
  int64_t last_sync = start;
  uint64_t seq = 1;
  for (uint64_t txn = 1; seq <= events; ++txn) {
    for (int i = 0; i < rows; ++i, ++seq) {
      const std::string& l = lines[(seq - 1) % lines.size()];
      Check((*w)->Append(l));
      r.raw_bytes += l.size() + 8 + std::to_string(seq).size();
    }
    r.raw_bytes += 12;  // ,"last":true
    Check((*w)->Commit(txn * 64, static_cast<int64_t>(txn), txn));
    int64_t now = cdc::MonoMicros();
    if (now - last_sync >= 5000) {
      Check((*w)->RequestSync());
      last_sync = now;
    }
  }
  Check((*w)->Sync());
  r.seconds = (cdc::MonoMicros() - start) / 1e6;
  for (auto& e :
       std::filesystem::recursive_directory_iterator(dir + "/segments"))
    if (e.path().extension() == ".seg") r.disk_bytes += e.file_size();
  return r;
}

// `format`: cdc-tail's --format (native is the default).
double TimeTail(const std::string& bin, const std::string& dir,
                const char* format = "native") {
  const int64_t start = cdc::MonoMicros();
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    dup2(fd, 1);
    execl((bin + "/cdc-tail").c_str(), "cdc-tail", "--log", dir.c_str(),
          "--format", format, static_cast<char*>(nullptr));
    _exit(127);
  }
  int st;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    fprintf(stderr, "cdc-bench-log: cdc-tail failed\n");
    exit(1);
  }
  return (cdc::MonoMicros() - start) / 1e6;
}

// Reads the whole log in this process and renders every event in `format`
// into a buffer written to /dev/null: what one core does for cdc-tail
// --format FMT, without the process around it. Returns events/s.
double RenderRate(const std::string& dir, cdc::event::Format format) {
  cdc::event::RenderOptions o;
  o.format = format;
  cdc::event::SourceInfo src;
  src.log_id = "00000000000000000000000000000001";
  src.database = "bench";
  auto renderer = cdc::event::MakeRenderer(o, src);
  renderer->Restart(true);
  int fd = open("/dev/null", O_WRONLY);
  const int64_t start = cdc::MonoMicros();
  auto reader = cdc::log::LogReader::Open(dir);
  Check(reader.status());
  Check((*reader)->SeekEarliest());
  cdc::log::Batch batch;
  std::string out;
  uint64_t n = 0;
  for (;;) {
    auto got = (*reader)->Next(&batch);
    Check(got.status());
    if (!*got) break;
    batch.ForEach([&](uint64_t seq, std::string_view line, bool last) {
      Check(renderer->Append(seq, line, last, &out));
      ++n;
    });
    if (out.size() >= (1 << 18)) {
      if (write(fd, out.data(), out.size()) < 0) exit(1);
      out.clear();
    }
  }
  if (write(fd, out.data(), out.size()) < 0) exit(1);
  const double seconds = (cdc::MonoMicros() - start) / 1e6;
  close(fd);
  return n / seconds;
}

struct Latency {
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  uint64_t events = 0;
  double rate = 0;
};

// Percentiles of latencies in ms (sorted here).
Latency Summarize(std::vector<double> lat) {
  Latency l;
  l.events = lat.size();
  std::sort(lat.begin(), lat.end());
  if (!lat.empty()) {
    l.p50_ms = lat[lat.size() / 2];
    l.p99_ms = lat[lat.size() * 99 / 100];
    l.max_ms = lat.back();
  }
  return l;
}

// A writer paces `rows`-event transactions at `rate` events/s with group
// commit every millisecond; `cdc-tail -f` follows; each line's "t_us" (set
// when the event was appended) is compared with when the line arrives.
Latency Follow(const std::string& bin, const std::string& dir, int rate,
               int seconds, int rows = 10,
               int format = cdc::log::kFormatVersion) {
  std::filesystem::remove_all(dir);
  Check(cdc::log::CreateLog(dir, std::nullopt,
                            format == cdc::log::kFormatVersion1
                                ? 1
                                : cdc::log::kLogFormatVersion)
            .status());
  int pfd[2];
  if (pipe(pfd) != 0) exit(1);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pfd[1], 1);
    close(pfd[0]);
    execl((bin + "/cdc-tail").c_str(), "cdc-tail", "--log", dir.c_str(), "-f",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pfd[1]);
  std::vector<double> lat;
  std::thread reader([&] {
    std::string buf;
    char chunk[1 << 16];
    ssize_t n;
    while ((n = read(pfd[0], chunk, sizeof chunk)) > 0) {
      const int64_t now = cdc::NowMicros();
      buf.append(chunk, static_cast<size_t>(n));
      size_t start = 0, nl;
      while ((nl = buf.find('\n', start)) != std::string::npos) {
        size_t p = buf.find("\"t_us\":", start);
        if (p != std::string::npos && p < nl)
          lat.push_back((now - std::atoll(buf.c_str() + p + 7)) / 1000.0);
        start = nl + 1;
      }
      buf.erase(0, start);
    }
  });
  {
    cdc::log::WriterOptions opts;
    opts.format_version = format;
    auto w = LogWriter::Open(dir, opts);
    Check(w.status());
    std::mt19937_64 rng(2);
    const uint64_t total = static_cast<uint64_t>(rate) * seconds;
    Check(cdc_bench::AppendPaced(**w, total, rate, rows,
                                 [&](uint64_t txn, int i) {
                                   return MakeEvent(rng, txn,
                                                    static_cast<uint64_t>(i),
                                                    cdc::NowMicros());
                                 })
              .status());
    // Let the follower drain, then stop it.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  kill(pid, SIGTERM);
  int st;
  waitpid(pid, &st, 0);
  reader.join();
  close(pfd[0]);
  Latency l = Summarize(std::move(lat));
  l.rate = rate;
  return l;
}

// The commit time on one input line of --stdin-latency: an event's "ts", or
// the "(at ...)" of a COMMIT line of test_decoding with include-timestamp,
// which PostgreSQL prints as "2026-11-29 13:46:11.12345+00".
std::optional<int64_t> LineCommitTime(std::string_view line) {
  auto parse = [](std::string_view text) -> std::optional<int64_t> {
    auto ts = cdc::ParseTimestamp(text);
    if (!ts.ok()) return std::nullopt;
    return *ts;
  };
  if (size_t p = line.find("\"ts\":\""); p != std::string_view::npos) {
    size_t q = line.find('"', p + 6);
    if (q == std::string_view::npos) return std::nullopt;
    return parse(line.substr(p + 6, q - p - 6));
  }
  if (line.starts_with("COMMIT ")) {
    size_t p = line.find("(at ");
    size_t q = line.rfind(')');
    if (p == std::string_view::npos || q == std::string_view::npos || q < p)
      return std::nullopt;
    std::string text(line.substr(p + 4, q - p - 4));
    size_t zone = text.find_last_of("+-");
    if (zone != std::string::npos && text.size() - zone == 3) text += ":00";
    return parse(text);
  }
  return std::nullopt;
}

// --stdin-latency: reads NDJSON events (e.g. from `cdc-tail -f`), or
// test_decoding's text (from pg_recvlogical, the reference), until EOF and
// prints the latency between each line's commit time and the moment it
// arrived, as JSON. Cheap enough not to be the bottleneck it measures.
// Also "series": [second, p50 ms, p99 ms] for each second of arrivals,
// for a chart of latency over time.
int StdinLatency() {
  std::vector<double> lat;
  std::vector<std::pair<int64_t, double>> timed;  // (arrival µs, latency)
  std::string buf;
  char chunk[1 << 16];
  ssize_t n;
  while ((n = read(0, chunk, sizeof chunk)) > 0) {
    const int64_t now = cdc::NowMicros();
    buf.append(chunk, static_cast<size_t>(n));
    size_t start = 0, nl;
    while ((nl = buf.find('\n', start)) != std::string::npos) {
      auto ts = LineCommitTime(std::string_view(buf).substr(start, nl - start));
      if (ts) {
        lat.push_back((now - *ts) / 1000.0);
        timed.emplace_back(now, lat.back());
      }
      start = nl + 1;
    }
    buf.erase(0, start);
  }
  nlohmann::ordered_json series = nlohmann::ordered_json::array();
  for (size_t i = 0; i < timed.size();) {
    const int64_t second = (timed[i].first - timed[0].first) / 1000000;
    std::vector<double> in;
    for (; i < timed.size() &&
           (timed[i].first - timed[0].first) / 1000000 == second;
         ++i)
      in.push_back(timed[i].second);
    const Latency s = Summarize(std::move(in));
    series.push_back({second, s.p50_ms, s.p99_ms});
  }
  const Latency l = Summarize(std::move(lat));
  nlohmann::ordered_json j;
  j["events"] = l.events;
  if (l.events > 0) {
    j["p50_ms"] = l.p50_ms;
    j["p99_ms"] = l.p99_ms;
    j["max_ms"] = l.max_ms;
  }
  j["series"] = series;
  printf("%s\n", j.dump().c_str());
  return 0;
}

// Format 1 against format 2 on pgbench-like rows in 1-, 4- and 100-row
// transactions; prints a table, returns the same as JSON.
nlohmann::ordered_json Workloads(const Args& a, const std::string& dir) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  printf("\n%-14s %-6s %12s %12s %12s %10s %10s\n", "workload", "format",
         "ndjson/disk", "append ev/s", "tail ev/s", "follow p50", "p99 (ms)");
  for (int rows : {1, 4, 100}) {
    for (int format :
         {int{cdc::log::kFormatVersion1}, int{cdc::log::kFormatVersion}}) {
      std::vector<double> append_eps, tail_eps;
      double ratio = 0;
      for (int r = 0; r < a.runs; ++r) {
        AppendResult ar = Append(dir, a.workload_events, rows, true, format);
        append_eps.push_back(a.workload_events / ar.seconds);
        ratio = static_cast<double>(ar.raw_bytes) / ar.disk_bytes;
        tail_eps.push_back(a.workload_events / TimeTail(a.bin, dir));
      }
      ::sync();
      // The follow rate in transactions stays as the default's (5,000/s
      // of 10 events) for 1 and 4 rows; 100-row ones at 500/s.
      const int rate = rows == 100 ? a.follow_rate : 5000 * rows;
      Latency lat =
          Follow(a.bin, dir, rate, a.workload_follow_seconds, rows, format);
      const std::string name = std::to_string(rows) + "-row txns";
      printf("%-14s %-6d %12.2f %12.0f %12.0f %10.2f %10.2f\n", name.c_str(),
             format, ratio, Median(append_eps), Median(tail_eps), lat.p50_ms,
             lat.p99_ms);
      fflush(stdout);
      out.push_back({{"rows", rows},
                     {"format", format},
                     {"ndjson_per_disk_byte", ratio},
                     {"append_events_per_s", Median(append_eps)},
                     {"tail_events_per_s", Median(tail_eps)},
                     {"follow_rate", rate},
                     {"follow_p50_ms", lat.p50_ms},
                     {"follow_p99_ms", lat.p99_ms},
                     {"follow_events_seen", lat.events}});
    }
  }
  return out;
}

// Wall and user+system CPU seconds of `sh -c cmd` and its children.
struct Timing {
  double wall = 0, cpu = 0;
};
Timing TimeShell(const std::string& cmd) {
  rusage before, after;
  getrusage(RUSAGE_CHILDREN, &before);
  const int64_t start = cdc::MonoMicros();
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int st;
  waitpid(pid, &st, 0);
  Timing t;
  t.wall = (cdc::MonoMicros() - start) / 1e6;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    fprintf(stderr, "cdc-bench-log: failed: %s\n", cmd.c_str());
    exit(1);
  }
  getrusage(RUSAGE_CHILDREN, &after);
  auto secs = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
  t.cpu = secs(after.ru_utime) - secs(before.ru_utime) + secs(after.ru_stime) -
          secs(before.ru_stime);
  return t;
}

int TailVsCat(const Args& a) {
  const std::string dir = a.dir + "/cdc-bench-tail";
  struct Case {
    const char* name;
    const char* flags;
    bool own_output;  // cat what this command prints, not the native NDJSON
    const char* target;
    double min_ratio;
  };
  const Case cases[] = {
      {"native", "", false, ">= 0.6", 0.6},
      {"--table pgbench_accounts", "--table pgbench_accounts", false, ">= 0.4",
       0.4},
      {"--op c", "--op c", false, ">= 0.4", 0.4},
      {"debezium", "--format debezium", true, "", 0},
      {"cloudevents", "--format cloudevents", true, "", 0},
  };
  printf("%-5s %-26s %9s %9s %9s %9s %7s %-7s %s\n", "rows", "cdc-tail",
         "tail s", "pipe cpu", "cat s", "MB out", "ratio", "target", "met");
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (int rows : {100, 1}) {
    Append(dir, a.events, rows, true);
    const std::string tail = a.bin + "/cdc-tail --log " + dir;
    const std::string native = dir + ".ndjson";
    const std::string own = dir + ".out.ndjson";
    TimeShell(tail + " > " + native);
    for (const Case& c : cases) {
      const std::string cmd = tail + " " + c.flags;
      std::string cat_file = native;
      if (c.own_output) {
        TimeShell(cmd + " > " + own);
        cat_file = own;
      }
      const double mb = std::filesystem::file_size(cat_file) / 1e6;
      std::vector<double> tw, tc, cw;
      // Writeback of the files just written would slow whichever command
      // meets it; then one unmeasured run of each warms the page cache.
      ::sync();
      TimeShell("cat " + cat_file + " | wc -c > /dev/null");
      TimeShell(cmd + " | wc -c > /dev/null");
      for (int r = 0; r < a.runs; ++r) {
        cw.push_back(
            TimeShell("cat " + cat_file + " | wc -c > /dev/null").wall);
        Timing t = TimeShell(cmd + " | wc -c > /dev/null");
        tw.push_back(t.wall);
        tc.push_back(t.cpu);
      }
      const double ratio = Median(cw) / Median(tw);
      printf("%-5d %-26s %9.3f %9.3f %9.3f %9.1f %7.2f %-7s %s\n", rows, c.name,
             Median(tw), Median(tc), Median(cw), mb, ratio, c.target,
             c.min_ratio == 0       ? ""
             : ratio >= c.min_ratio ? "yes"
                                    : "NO");
      fflush(stdout);
      out.push_back({{"rows", rows},
                     {"case", c.name},
                     {"cat_input_mb", mb},
                     {"tail_wall_s", Median(tw)},
                     {"tail_pipeline_cpu_s", Median(tc)},
                     {"cat_wall_s", Median(cw)},
                     {"cat_over_tail", ratio},
                     {"target", c.target},
                     {"min_ratio", c.min_ratio},
                     {"tail_wall_runs", tw},
                     {"cat_wall_runs", cw}});
    }
    std::filesystem::remove(own);
    std::filesystem::remove(native);
  }
  std::filesystem::remove_all(dir);
  nlohmann::ordered_json j;
  j["events"] = a.events;
  j["runs"] = a.runs;
  j["results"] = out;
  const auto parent = std::filesystem::path(a.json).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  FILE* f = fopen(a.json.c_str(), "w");
  if (f) {
    fputs((j.dump(2) + "\n").c_str(), f);
    fclose(f);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--stdin-latency")
    return StdinLatency();
  Args a;
  bool tail_vs_cat = false, append_only = false;
  if (argc > 1 && std::string(argv[1]) == "--append-only") {
    append_only = true;
    --argc;
    ++argv;
  }
  if (argc > 1 && std::string(argv[1]) == "--tail-vs-cat") {
    tail_vs_cat = true;
    a.events = 1000000;
    a.runs = 5;
    a.json = "bench/results/tail.json";
    --argc;
    ++argv;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--bin")
      a.bin = v;
    else if (k == "--dir")
      a.dir = v;
    else if (k == "--json")
      a.json = v;
    else if (k == "--events")
      a.events = std::stoull(v);
    else if (k == "--runs")
      a.runs = std::stoi(v);
    else if (k == "--follow-seconds")
      a.follow_seconds = std::stoi(v);
    else if (k == "--follow-rate")
      a.follow_rate = std::stoi(v);
    else if (k == "--workload-events")
      a.workload_events = std::stoull(v);
    else if (k == "--make-log")
      a.make_rows = std::stoi(v);

    else if (k == "--workload-follow-seconds")
      a.workload_follow_seconds = std::stoi(v);
    else {
      fprintf(stderr, "cdc-bench-log: unknown flag %s\n", k.c_str());
      return 64;
    }
  }
  if (tail_vs_cat) return TailVsCat(a);
  if (append_only) {
    const std::string dir = a.dir + "/cdc-bench-append";
    for (int r = 0; r < a.runs; ++r)
      printf("append %.0f ev/s\n", a.events / Append(dir, a.events).seconds);
    std::filesystem::remove_all(dir);
    return 0;
  }
  if (a.make_rows > 0) {  // a log to profile cdc-tail on, left in --dir
    Append(a.dir, a.events, a.make_rows, true);
    return 0;
  }
  const std::string dir = a.dir + "/cdc-bench-log";
  std::vector<double> append_eps, append_mbs, tail_eps, ratio;
  std::vector<double> render_native, render_debezium, render_cloudevents;
  std::vector<double> tail_debezium, tail_cloudevents;
  for (int r = 0; r < a.runs; ++r) {
    AppendResult ar = Append(dir, a.events);
    append_eps.push_back(a.events / ar.seconds);
    append_mbs.push_back(ar.raw_bytes / ar.seconds / 1e6);
    ratio.push_back(static_cast<double>(ar.raw_bytes) / ar.disk_bytes);
    double t = TimeTail(a.bin, dir);
    tail_eps.push_back(a.events / t);
    tail_debezium.push_back(a.events / TimeTail(a.bin, dir, "debezium"));
    tail_cloudevents.push_back(a.events / TimeTail(a.bin, dir, "cloudevents"));
    render_native.push_back(RenderRate(dir, cdc::event::Format::kNative));
    render_debezium.push_back(RenderRate(dir, cdc::event::Format::kDebezium));
    render_cloudevents.push_back(
        RenderRate(dir, cdc::event::Format::kCloudEvents));
    fprintf(stderr,
            "run %d: append %.0f ev/s, tail %.0f ev/s, %.2fx; render native "
            "%.0f, debezium %.0f, cloudevents %.0f ev/s\n",
            r + 1, append_eps.back(), tail_eps.back(), ratio.back(),
            render_native.back(), render_debezium.back(),
            render_cloudevents.back());
  }
  AppendResult sizes = Append(dir, a.events);
  // The append runs leave hundreds of MB of dirty pages; let writeback
  // finish so it does not stall the follow phase's fsyncs.
  ::sync();
  Latency lat = Follow(a.bin, dir, a.follow_rate, a.follow_seconds);
  nlohmann::ordered_json workloads = Workloads(a, dir);
  std::filesystem::remove_all(dir);

  struct Row {
    const char* name;
    double value;
    const char* unit;
    const char* target;
    bool met;
  };
  const Row rows[] = {
      {"append (100-event txns, 256 B payload)", Median(append_eps), "events/s",
       ">= 500000", Median(append_eps) >= 500000},
      {"append throughput (raw NDJSON)", Median(append_mbs), "MB/s", "", true},
      {"cdc-tail native to /dev/null", Median(tail_eps), "events/s",
       ">= 1000000", Median(tail_eps) >= 1000000},
      {"cdc-tail --format debezium to /dev/null", Median(tail_debezium),
       "events/s", ">= 300000", Median(tail_debezium) >= 300000},
      {"cdc-tail --format cloudevents to /dev/null", Median(tail_cloudevents),
       "events/s", ">= 300000", Median(tail_cloudevents) >= 300000},
      {"render native, one core", Median(render_native), "events/s", "", true},
      {"render debezium, one core", Median(render_debezium), "events/s",
       ">= 300000", Median(render_debezium) >= 300000},
      {"render cloudevents, one core", Median(render_cloudevents), "events/s",
       ">= 300000", Median(render_cloudevents) >= 300000},
      {"raw NDJSON / bytes on disk", Median(ratio), "x", ">= 4",
       Median(ratio) >= 4},
      {"bytes on disk per event",
       static_cast<double>(sizes.disk_bytes) / a.events, "B", "", true},
      {"raw NDJSON per event", static_cast<double>(sizes.raw_bytes) / a.events,
       "B", "", true},
      {"follow latency p50", lat.p50_ms, "ms", "", true},
      {"follow latency p99", lat.p99_ms, "ms", "<= 10", lat.p99_ms <= 10},
      {"follow latency max", lat.max_ms, "ms", "", true},
  };
  printf("%-42s %14s %-9s %-11s %s\n", "measure", "median", "unit", "target",
         "met");
  nlohmann::ordered_json j;
  j["events"] = a.events;
  j["runs"] = a.runs;
  j["follow_rate"] = a.follow_rate;
  j["follow_seconds"] = a.follow_seconds;
  j["follow_events_seen"] = lat.events;
  for (const auto& r : rows) {
    printf("%-42s %14.2f %-9s %-11s %s\n", r.name, r.value, r.unit, r.target,
           r.target[0] ? (r.met ? "yes" : "NO") : "");
    j["results"].push_back({{"measure", r.name},
                            {"value", r.value},
                            {"unit", r.unit},
                            {"target", r.target}});
  }
  j["append_runs"] = append_eps;
  j["tail_runs"] = tail_eps;
  j["tail_debezium_runs"] = tail_debezium;
  j["tail_cloudevents_runs"] = tail_cloudevents;
  j["render_native_runs"] = render_native;
  j["render_debezium_runs"] = render_debezium;
  j["render_cloudevents_runs"] = render_cloudevents;
  j["workloads"] = workloads;
  std::filesystem::create_directories(
      std::filesystem::path(a.json).parent_path().empty()
          ? "."
          : std::filesystem::path(a.json).parent_path());
  FILE* f = fopen(a.json.c_str(), "w");
  if (f) {
    fputs((j.dump(2) + "\n").c_str(), f);
    fclose(f);
  }
  return 0;
}
