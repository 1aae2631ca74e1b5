#include "log_wait.h"

#include <algorithm>

#include "cdc/base/lsn.h"
#include "cdc/base/time.h"
#include "cdc/cli/cli.h"
#include "cdc/log/reader.h"
#include "cdc/log/watch.h"
#include "common.h"

namespace cdc::logtool {

Status RunWait(const std::string& dir, const std::string& lsn_text,
               const std::string& timeout) {
  auto lsn = ParseLsn(lsn_text);
  if (!lsn.ok())
    return Status::Usage("--lsn: \"" + lsn_text +
                         "\" is not an LSN (X/Y, as pg_current_wal_lsn() "
                         "prints it)");
  int64_t limit_us = -1;
  if (!timeout.empty()) {
    CDC_ASSIGN_OR_RETURN(limit_us, tools::ParseDuration(timeout));
  }
  const int64_t start = MonoMicros();
  // Watch before the first look, so a change between the look and the
  // wait is not missed.
  CDC_ASSIGN_OR_RETURN(auto waiter, log::ChangeWaiter::Create(dir));
  for (;;) {
    CDC_ASSIGN_OR_RETURN(log::LogSummary sum, log::Summarize(dir));
    // FlushLsn() is the position every transaction before which is in the
    // log (and readable: Summarize reads what readers read).
    const Lsn at = sum.position.FlushLsn();
    if (at >= *lsn) return Status::OK();
    int wait_ms = 1000;
    if (limit_us >= 0) {
      const int64_t left = limit_us - (MonoMicros() - start);
      if (left <= 0 || cli::StopRequested()) {
        return Status::Busy(
            "the log has not reached " + FormatLsn(*lsn) + " within " +
            timeout + " (it holds what was committed before " +
            (sum.position.valid ? FormatLsn(at) : std::string("no position")) +
            ")");
      }
      wait_ms = static_cast<int>(std::min<int64_t>(left / 1000 + 1, 1000));
    } else if (cli::StopRequested()) {
      return Status::Busy("stopped before the log reached " + FormatLsn(*lsn));
    }
    CDC_RETURN_IF_ERROR(waiter.Wait(wait_ms).status());
  }
}

}  // namespace cdc::logtool
