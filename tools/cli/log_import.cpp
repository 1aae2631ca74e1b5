#include "log_import.h"

#include <unistd.h>

#include <cstdio>

#include "cdc/base/logging.h"
#include "cdc/base/time.h"
#include "cdc/cli/cli.h"
#include "cdc/consume/import.h"
#include "cdc/log/log_dir.h"

namespace cdc::logtool {

Status RunImport(const ImportOptions& o, int in_fd) {
  if (std::string warn = log::SharedDirWarning(o.log); !warn.empty())
    LogWarning(warn);
  consume::ImportOptions io;
  io.log = o.log;
  io.segment_bytes = o.segment_bytes;
  io.commit_delay_ms = o.commit_delay_ms;
  io.stop = [] { return cli::StopRequested(); };
  // On a terminal, a line that says how far it got, five times a second.
  const bool tty = !o.quiet && isatty(STDERR_FILENO) == 1;
  int64_t start = 0, next = 0;
  bool shown = false;
  if (tty)
    io.progress = [&](uint64_t txns, uint64_t events, uint64_t skipped) {
      const int64_t now = MonoMicros();
      if (start == 0) start = now;
      if (now < next) return;
      next = now + 200000;
      const double secs = static_cast<double>(now - start) / 1e6;
      fprintf(
          stderr,
          "\rcdc-log: importing: %llu transactions (%llu events)%s, "
          "%.0f events/s\033[K",
          static_cast<unsigned long long>(txns),
          static_cast<unsigned long long>(events),
          skipped ? (", " + std::to_string(skipped) + " skipped").c_str() : "",
          secs > 0 ? static_cast<double>(events) / secs : 0.0);
      shown = true;
    };
  consume::ImportResult r;
  Status s = consume::Import(io, in_fd, &r);
  if (shown) fputs("\n", stderr);  // the summary starts a line of its own
  if (r.torn_tail_bytes > 0 && !o.quiet)
    LogInfo("recovered: cut a torn tail of " +
            std::to_string(r.torn_tail_bytes) + " bytes");
  // Nothing to report when the log could not be opened at all.
  if (!o.quiet && r.opened)
    LogInfo("imported " + std::to_string(r.transactions) + " transactions (" +
            std::to_string(r.events) + " events)" +
            (r.failed ? " durably before the error" : "") +
            (r.skipped ? ", skipped " + std::to_string(r.skipped) +
                             " already in the log"
                       : std::string()) +
            "; log " + (r.failed ? "durable through" : "ends at") + " seq " +
            std::to_string(r.last_seq));
  return s;
}

}  // namespace cdc::logtool
