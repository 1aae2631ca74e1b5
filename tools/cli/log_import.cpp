#include "log_import.h"

#include "cdc/base/logging.h"
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
  consume::ImportResult r;
  Status s = consume::Import(io, in_fd, &r);
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
