#include "log_snapshot.h"

#include <unistd.h>

#include <cstdio>
#include <thread>

#include "cdc/base/logging.h"
#include "cdc/base/time.h"
#include "cdc/cli/cli.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/snapshots.h"
#include "common.h"

namespace cdc::logtool {

namespace {

constexpr int64_t kTtyEveryUs = 500000;
constexpr int64_t kLogEveryUs = 60000000;

std::string Describe(const log::IncrementalSnapshot& s) {
  std::string line = s.id + "  " + s.QualifiedName() + "  " + s.state + "  " +
                     std::to_string(s.rows) + " rows";
  if (s.estimate > 0) line += " of ~" + std::to_string(s.estimate);
  line += ", " + std::to_string(s.chunks) + " chunks";
  if (!s.error.empty()) line += "  (" + s.error + ")";
  return line;
}

}  // namespace

Status RunSnapshot(const std::string& dir, const SnapshotFlags& f) {
  CDC_ASSIGN_OR_RETURN(auto name, log::ParseTableName(f.table));
  int64_t limit_us = -1;
  if (!f.timeout.empty()) {
    CDC_ASSIGN_OR_RETURN(limit_us, tools::ParseDuration(f.timeout));
  }
  CDC_RETURN_IF_ERROR(log::ReadIdentity(dir).status());
  CDC_ASSIGN_OR_RETURN(
      log::IncrementalSnapshot s,
      log::RequestIncrementalSnapshot(dir, name.first, name.second,
                                      f.chunk_rows, NowMicros()));
  if (f.no_wait) {
    printf("%s\n",
           f.json ? log::IncrementalSnapshotJson(s).c_str() : s.id.c_str());
    return Status::OK();
  }
  const bool tty = isatty(STDERR_FILENO) == 1;
  const int64_t start = MonoMicros();
  int64_t shown = 0;
  uint64_t rows_shown = 0;
  bool live = false;
  auto finish_line = [&] {
    if (live) fputc('\n', stderr);
    live = false;
  };
  for (;;) {
    CDC_ASSIGN_OR_RETURN(s, log::ReadIncrementalSnapshot(dir, s.id));
    const int64_t now = MonoMicros();
    if (s.finished()) break;
    if (!f.quiet && now - shown >= (tty ? kTtyEveryUs : kLogEveryUs)) {
      const double secs = static_cast<double>(now - start) / 1e6;
      const double rate = secs > 0 ? static_cast<double>(s.rows) / secs : 0;
      char left[64] = "";
      if (rate > 0 && s.estimate > s.rows)
        snprintf(left, sizeof left, ", ~%.0f s left",
                 static_cast<double>(s.estimate - s.rows) / rate);
      char buf[512];
      snprintf(buf, sizeof buf,
               "cdc-log: snapshot of %s: %s, %llu of ~%llu "
               "rows, %.0f rows/s%s",
               s.QualifiedName().c_str(),
               s.state == "pending" ? "waiting for cdc-capture" : "reading",
               static_cast<unsigned long long>(s.rows),
               static_cast<unsigned long long>(s.estimate), rate, left);
      if (tty) {
        fprintf(stderr, "\r%s\033[K", buf);
        live = true;
      } else if (s.rows != rows_shown || shown == 0) {
        fprintf(stderr, "%s\n", buf);
      }
      shown = now;
      rows_shown = s.rows;
    }
    if (cli::StopRequested()) {
      finish_line();
      return Status::Busy("stopped waiting; snapshot " + s.id +
                          " goes on (cdc-log snapshots shows it)");
    }
    if (limit_us >= 0 && now - start >= limit_us) {
      finish_line();
      return Status::Busy("snapshot " + s.id + " of " + s.QualifiedName() +
                          " not done within " + f.timeout + " (" + s.state +
                          ", " + std::to_string(s.rows) +
                          " rows so far; it goes on)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  finish_line();
  if (f.json) printf("%s", log::IncrementalSnapshotJson(s).c_str());
  if (s.state == "failed")
    return Status::BadInput("snapshot of " + s.QualifiedName() +
                            " failed: " + s.error);
  if (!f.json) printf("%s\n", s.id.c_str());
  if (!f.quiet)
    LogInfo("snapshot of " + s.QualifiedName() +
            " done: " + std::to_string(s.rows) + " rows in " +
            std::to_string(s.chunks) + " chunks");
  return Status::OK();
}

Status ListSnapshots(const std::string& dir, bool json) {
  CDC_RETURN_IF_ERROR(log::ReadIdentity(dir).status());
  CDC_ASSIGN_OR_RETURN(auto all, log::ListIncrementalSnapshots(dir));
  for (const auto& s : all) {
    if (json)
      printf("%s", log::IncrementalSnapshotJson(s).c_str());
    else
      printf("%s\n", cli::EscapeForTerminal(Describe(s)).c_str());
  }
  return Status::OK();
}

}  // namespace cdc::logtool
