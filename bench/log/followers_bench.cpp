// bench/log: how the cost of following grows with the number of followers.
//
//   cdc-bench-followers --bin build/tools [--dir /tmp] [--followers
//   1,10,100,500]
//                       [--rate 20000] [--seconds 10] [--json out.json]
//
// For each count N: a writer appends --rate events/s (10-event
// transactions, group commit every millisecond) for --seconds while N
// `cdc-tail -f` follow the log. Up to 8 of them write into pipes this
// program reads, to time each event from its append (its "t_us") to its
// arrival; the others write to /dev/null. At the end, from /proc, each
// follower's CPU time (user + system), open descriptors and inotify
// watches. Prints per N: CPU µs per event per follower, latency p50/p99
// of the sampled followers, descriptors and watches per follower, and the
// writer's achieved rate; writes JSON. The target (issue: per-follower cost
// flat from 1 to 100) is the CPU column staying level.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cdc/base/time.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/writer.h"
#include "paced.h"

namespace {

void Check(const cdc::Status& s) {
  if (!s.ok()) {
    fprintf(stderr, "cdc-bench-followers: %s\n", s.message().c_str());
    exit(1);
  }
}

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

// utime + stime of `pid` in seconds (/proc/PID/stat fields 14 and 15).
double CpuSeconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)),
                   std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i)
    if (i == 14 || i == 15) ticks += std::stod(field);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Open descriptors of `pid`, and how many inotify watches they hold.
std::pair<int, int> FdsAndWatches(pid_t pid) {
  const std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd";
  int fds = 0, watches = 0;
  DIR* d = opendir(fd_dir.c_str());
  if (d == nullptr) return {0, 0};
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    ++fds;
    std::ifstream info("/proc/" + std::to_string(pid) + "/fdinfo/" + e->d_name);
    for (std::string line; std::getline(info, line);)
      if (line.rfind("inotify wd:", 0) == 0) ++watches;
  }
  closedir(d);
  return {fds, watches};
}

struct Result {
  int followers = 0;
  double cpu_us_per_event = 0;  // per follower
  double p50_ms = 0, p99_ms = 0;
  double fds = 0, watches = 0;  // per follower
  double achieved_rate = 0;
};

Result Run(const std::string& bin, const std::string& dir, int n, int rate,
           int seconds) {
  std::filesystem::remove_all(dir);
  Check(cdc::log::CreateLog(dir, std::nullopt).status());
  const int sampled = std::min(n, 8);
  std::vector<pid_t> pids;
  std::vector<int> pipes;
  for (int i = 0; i < n; ++i) {
    int pfd[2] = {-1, -1};
    // Close-on-exec: no follower inherits another's pipe (dup2 onto its
    // stdout clears the flag there).
    if (i < sampled && pipe2(pfd, O_CLOEXEC) != 0) exit(1);
    pid_t pid = fork();
    if (pid == 0) {
      if (i < sampled) {
        dup2(pfd[1], 1);
        close(pfd[0]);
      } else {
        const int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
      }
      execl((bin + "/cdc-tail").c_str(), "cdc-tail", "--log", dir.c_str(), "-f",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    pids.push_back(pid);
    if (i < sampled) {
      close(pfd[1]);
      pipes.push_back(pfd[0]);
    }
  }
  std::vector<std::vector<double>> lat(pipes.size());
  std::vector<std::atomic<uint64_t>> got_events(pipes.size());
  std::vector<std::thread> readers;
  for (size_t r = 0; r < pipes.size(); ++r)
    readers.emplace_back([&, r] {
      std::string buf;
      char chunk[1 << 16];
      ssize_t got;
      while ((got = read(pipes[r], chunk, sizeof chunk)) > 0) {
        const int64_t now = cdc::NowMicros();
        buf.append(chunk, static_cast<size_t>(got));
        size_t start = 0, nl;
        while ((nl = buf.find('\n', start)) != std::string::npos) {
          const size_t p = buf.find("\"t_us\":", start);
          if (p != std::string::npos && p < nl) {
            lat[r].push_back((now - std::atoll(buf.c_str() + p + 7)) / 1000.0);
            got_events[r].fetch_add(1, std::memory_order_relaxed);
          }
          start = nl + 1;
        }
        buf.erase(0, start);
      }
    });
  // Every follower watching before the first event.
  std::this_thread::sleep_for(std::chrono::milliseconds(200 + 4 * n));
  std::vector<double> cpu_before;
  for (pid_t p : pids) cpu_before.push_back(CpuSeconds(p));
  const uint64_t total = static_cast<uint64_t>(rate) * seconds;
  double elapsed = 0;
  {
    auto w = cdc::log::LogWriter::Open(dir, cdc::log::WriterOptions{});
    Check(w.status());
    char line[512];
    auto made =
        cdc_bench::AppendPaced(**w, total, rate, 10, [&](uint64_t txn, int i) {
          const uint64_t seq = (txn - 1) * 10 + static_cast<uint64_t>(i);
          snprintf(line, sizeof line,
                   "{\"lsn\":\"0/%llX\",\"xid\":%llu,\"ts\":\"2026-11-29T07:"
                   "41:02.000000Z\",\"op\":\"c\",\"schema\":\"public\","
                   "\"table\":\"orders\",\"key\":{\"id\":%llu},\"before\":"
                   "null,\"after\":{\"id\":%llu,\"t_us\":%lld,\"note\":\"a "
                   "follower's event, about two hundred bytes as NDJSON\"}}",
                   static_cast<unsigned long long>(txn * 64),
                   static_cast<unsigned long long>(txn),
                   static_cast<unsigned long long>(seq),
                   static_cast<unsigned long long>(seq),
                   static_cast<long long>(cdc::NowMicros()));
          return std::string_view(line);
        });
    Check(made.status());
    elapsed = *made;
  }
  // Let the followers drain (the sampled ones have every event; with more
  // followers than the cores serve at this rate that takes a while), then
  // measure before stopping them.
  const int64_t drain_until = cdc::MonoMicros() + 300 * 1000000ll;
  for (;;) {
    bool all = true;
    for (auto& g : got_events)
      all = all && g.load(std::memory_order_relaxed) >= total;
    if (all || cdc::MonoMicros() > drain_until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200 + 2 * n));
  Result res;
  res.followers = n;
  res.achieved_rate = total / elapsed;
  double cpu = 0;
  int64_t fds = 0, watches = 0;
  for (size_t i = 0; i < pids.size(); ++i) {
    cpu += CpuSeconds(pids[i]) - cpu_before[i];
    auto [f, w] = FdsAndWatches(pids[i]);
    fds += f;
    watches += w;
  }
  res.cpu_us_per_event = cpu * 1e6 / static_cast<double>(n) / total;
  res.fds = static_cast<double>(fds) / n;
  res.watches = static_cast<double>(watches) / n;
  for (pid_t p : pids) kill(p, SIGTERM);
  for (pid_t p : pids) waitpid(p, nullptr, 0);
  for (auto& t : readers) t.join();
  for (int fd : pipes) close(fd);
  std::vector<double> all;
  for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
  res.p50_ms = Percentile(all, 0.5);
  res.p99_ms = Percentile(all, 0.99);
  if (all.size() != total * static_cast<size_t>(sampled)) {
    fprintf(stderr,
            "cdc-bench-followers: %d followers: the sampled ones got %zu of "
            "%llu events\n",
            n, all.size(), static_cast<unsigned long long>(total * sampled));
    exit(1);
  }
  std::filesystem::remove_all(dir);
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  std::string bin = "build/tools", dir = "/tmp",
              json = "bench/results/followers.json", counts = "1,10,100,500";
  int rate = 20000, seconds = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--bin")
      bin = v;
    else if (k == "--dir")
      dir = v;
    else if (k == "--json")
      json = v;
    else if (k == "--followers")
      counts = v;
    else if (k == "--rate")
      rate = std::stoi(v);
    else if (k == "--seconds")
      seconds = std::stoi(v);
    else {
      fprintf(stderr, "cdc-bench-followers: unknown flag %s\n", k.c_str());
      return 64;
    }
  }
  signal(SIGPIPE, SIG_IGN);
  printf("%9s %14s %9s %9s %8s %8s %12s\n", "followers", "cpu us/ev/each",
         "p50 ms", "p99 ms", "fds", "watches", "written ev/s");
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  std::stringstream list(counts);
  for (std::string c; std::getline(list, c, ',');) {
    const Result r =
        Run(bin, dir + "/cdc-bench-followers", std::stoi(c), rate, seconds);
    printf("%9d %14.3f %9.2f %9.2f %8.1f %8.1f %12.0f\n", r.followers,
           r.cpu_us_per_event, r.p50_ms, r.p99_ms, r.fds, r.watches,
           r.achieved_rate);
    fflush(stdout);
    out.push_back({{"followers", r.followers},
                   {"cpu_us_per_event_per_follower", r.cpu_us_per_event},
                   {"p50_ms", r.p50_ms},
                   {"p99_ms", r.p99_ms},
                   {"fds_per_follower", r.fds},
                   {"inotify_watches_per_follower", r.watches},
                   {"written_events_per_s", r.achieved_rate}});
  }
  nlohmann::ordered_json j;
  j["rate"] = rate;
  j["seconds"] = seconds;
  j["results"] = out;
  const auto parent = std::filesystem::path(json).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  if (FILE* f = fopen(json.c_str(), "w")) {
    fputs((j.dump(2) + "\n").c_str(), f);
    fclose(f);
  }
  return 0;
}
