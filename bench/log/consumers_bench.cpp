// bench/log: what many named consumers cost the tools that read them all.
//
//   cdc-bench-consumers --bin build/tools [--dir /tmp] [--consumers 10000]
//                       [--events 1000000] [--runs 5] [--json out.json]
//
// Writes a log of --events events in 100-event transactions over several
// segments, creates --consumers consumers spread over it (the library, one
// committed transaction each, as cdc-ack --create makes them), then times
// each command below (median of --runs, wall time of the process) against
// the target of 1 s: listing them (text and JSON), stats (text and
// Prometheus), one consumer's ack and seek among them, a reader opening as
// one of them, and retention's dry run, which checks every cursor against
// what it would remove, then retention for real once. Prints a table,
// writes JSON.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cdc/base/time.h"
#include "cdc/cursor/consumers.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/writer.h"

namespace {

struct Args {
  std::string bin = "build/tools";
  std::string dir = "/tmp";
  std::string json = "bench/results/consumers.json";
  uint64_t consumers = 10000;
  uint64_t events = 1000000;
  int runs = 5;
};

void Check(const cdc::Status& s) {
  if (!s.ok()) {
    fprintf(stderr, "cdc-bench-consumers: %s\n", s.message().c_str());
    exit(1);
  }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Seconds `sh -c cmd` took; exits on failure.
double Time(const std::string& cmd) {
  const int64_t start = cdc::MonoMicros();
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    fprintf(stderr, "cdc-bench-consumers: failed: %s\n", cmd.c_str());
    exit(1);
  }
  return (cdc::MonoMicros() - start) / 1e6;
}

void WriteLog(const std::string& dir, uint64_t events) {
  std::filesystem::remove_all(dir);
  Check(cdc::log::CreateLog(dir, std::nullopt).status());
  cdc::log::WriterOptions o;
  o.segment_bytes = 8u << 20;  // several segments for retention to weigh
  auto w = cdc::log::LogWriter::Open(dir, o);
  Check(w.status());
  char line[400];
  for (uint64_t seq = 1, txn = 1; seq <= events; ++txn) {
    for (int i = 0; i < 100 && seq <= events; ++i, ++seq) {
      snprintf(line, sizeof line,
               "{\"lsn\":\"0/%llX\",\"xid\":%llu,\"ts\":\"2026-11-29T07:41:02."
               "000000Z\",\"op\":\"c\",\"schema\":\"public\",\"table\":"
               "\"orders\",\"key\":{\"id\":%llu},\"before\":null,\"after\":"
               "{\"id\":%llu,\"note\":\"order %llu of the bench, paid\"}}",
               static_cast<unsigned long long>(txn * 64),
               static_cast<unsigned long long>(txn),
               static_cast<unsigned long long>(seq),
               static_cast<unsigned long long>(seq),
               static_cast<unsigned long long>(seq));
      Check((*w)->Append(line));
    }
    Check((*w)->Commit(txn * 64, 1764402062000000 + static_cast<int64_t>(txn),
                       txn));
  }
  Check((*w)->Sync());
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--bin")
      a.bin = v;
    else if (k == "--dir")
      a.dir = v;
    else if (k == "--json")
      a.json = v;
    else if (k == "--consumers")
      a.consumers = std::stoull(v);
    else if (k == "--events")
      a.events = std::stoull(v);
    else if (k == "--runs")
      a.runs = std::stoi(v);
    else {
      fprintf(stderr, "cdc-bench-consumers: unknown flag %s\n", k.c_str());
      return 64;
    }
  }
  const std::string dir = a.dir + "/cdc-bench-consumers";
  WriteLog(dir, a.events);
  int64_t start = cdc::MonoMicros();
  {
    auto store = cdc::cursor::ConsumerStore::Open(dir);
    Check(store.status());
    for (uint64_t i = 0; i < a.consumers; ++i)
      Check((*store)
                ->Create("c" + std::to_string(i), i * a.events / a.consumers)
                .status());
  }
  const double create_s = (cdc::MonoMicros() - start) / 1e6;
  const std::string log = " --log " + dir;
  const std::string mid = "c" + std::to_string(a.consumers / 2);
  struct Case {
    const char* name;
    std::string cmd;
  };
  const std::vector<Case> cases = {
      {"cdc-log consumers",
       a.bin + "/cdc-log consumers" + log + " > /dev/null"},
      {"cdc-log consumers --json",
       a.bin + "/cdc-log consumers --json" + log + " > /dev/null"},
      {"cdc-log stats", a.bin + "/cdc-log stats" + log + " > /dev/null"},
      {"cdc-log stats --prometheus",
       a.bin + "/cdc-log stats --prometheus" + log + " > /dev/null"},
      {"cdc-ack --seek (one of them)",
       a.bin + "/cdc-ack" + log + " -c " + mid + " --seek earliest"},
      {"cdc-ack from stdin (one of them)",
       "echo '{\"seq\":5}' | " + a.bin + "/cdc-ack" + log + " -c " + mid},
      {"cdc-tail -c (one of them) -n 1",
       a.bin + "/cdc-tail" + log + " -c " + mid + " -n 1 > /dev/null"},
      {"cdc-log retain --dry-run",
       a.bin + "/cdc-log retain" + log +
           " --retain-segments 1 --dry-run > /dev/null"},
  };
  printf(
      "%llu consumers on a log of %llu events; created in %.2f s "
      "(%.2f ms each)\n",
      static_cast<unsigned long long>(a.consumers),
      static_cast<unsigned long long>(a.events), create_s,
      create_s * 1000 / static_cast<double>(a.consumers));
  printf("%-36s %10s %10s %-7s %s\n", "command", "median s", "max s", "target",
         "met");
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Case& c : cases) {
    Time(c.cmd);  // warm the page cache
    std::vector<double> t;
    for (int r = 0; r < a.runs; ++r) t.push_back(Time(c.cmd));
    const double med = Median(t);
    const double max = *std::max_element(t.begin(), t.end());
    printf("%-36s %10.3f %10.3f %-7s %s\n", c.name, med, max, "< 1 s",
           med < 1 ? "yes" : "NO");
    fflush(stdout);
    out.push_back({{"command", c.name},
                   {"median_s", med},
                   {"runs_s", t},
                   {"target_s", 1},
                   {"met", med < 1}});
  }
  // Retention for real, once: it removes every segment but the newest and
  // marks the consumers it passes as expired.
  const double retain_s = Time(a.bin + "/cdc-log retain" + log +
                               " --retain-segments 1 > /dev/null");
  printf("%-36s %10.3f %10s %-7s %s\n", "cdc-log retain (removes segments)",
         retain_s, "", "< 1 s", retain_s < 1 ? "yes" : "NO");
  out.push_back({{"command", "cdc-log retain (removes segments)"},
                 {"median_s", retain_s},
                 {"runs_s", {retain_s}},
                 {"target_s", 1},
                 {"met", retain_s < 1}});
  std::filesystem::remove_all(dir);
  nlohmann::ordered_json j;
  j["consumers"] = a.consumers;
  j["events"] = a.events;
  j["create_s"] = create_s;
  j["results"] = out;
  const auto parent = std::filesystem::path(a.json).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  if (FILE* f = fopen(a.json.c_str(), "w")) {
    fputs((j.dump(2) + "\n").c_str(), f);
    fclose(f);
  }
  return 0;
}
