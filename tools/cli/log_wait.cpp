#include "log_wait.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string_view>

#include "cdc/base/lsn.h"
#include "cdc/base/time.h"
#include "cdc/cli/cli.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/reader.h"
#include "cdc/log/watch.h"
#include "cdc/mariadb/binlog.h"
#include "common.h"

namespace cdc::logtool {

Result<uint64_t> GtidSeqnoFor(const std::string& gtids, uint32_t domain) {
  std::optional<uint64_t> found;
  std::string_view rest = gtids;
  for (;;) {
    const size_t comma = rest.find(',');
    std::string_view one = rest.substr(0, comma);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    auto g = mariadb::ParseGtidText(one);
    if (!g.ok())
      return Status::Usage("--gtid: \"" + gtids +
                           "\" is not a GTID position (D-S-N, as SELECT "
                           "@@last_gtid prints it, or a list of them)");
    if (g->domain == domain) {
      if (found)
        return Status::Usage("--gtid: \"" + gtids + "\" names domain " +
                             std::to_string(domain) + " twice");
      found = g->seqno;
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (!found)
    return Status::Usage("--gtid: \"" + gtids + "\" has no GTID of domain " +
                         std::to_string(domain) + ", the log's");
  return *found;
}

Status RunWait(const std::string& dir, const std::string& lsn_text,
               const std::string& gtid_text, const std::string& timeout) {
  if (lsn_text.empty() == gtid_text.empty())
    return Status::Usage(
        "wait takes one of --lsn (PostgreSQL) and --gtid "
        "(MariaDB)");
  CDC_ASSIGN_OR_RETURN(log::LogIdentity id, log::ReadIdentity(dir));
  const bool mariadb = id.source && id.source->is_mariadb();
  // What to wait for, as the log's position counts (a MariaDB log's
  // commit position is the GTID's sequence number), and how to say it.
  Lsn want = 0;
  std::function<std::string(Lsn)> say;
  if (!gtid_text.empty()) {
    if (!mariadb)
      return Status::Usage("--gtid is for a MariaDB log; " + dir +
                           " captures PostgreSQL (use --lsn)");
    const uint32_t domain = id.source->gtid_domain;
    CDC_ASSIGN_OR_RETURN(const uint64_t seqno, GtidSeqnoFor(gtid_text, domain));
    // Held once the transaction of that sequence number is: the position
    // is past it, as FlushLsn counts.
    want = seqno + 1;
    say = [domain](Lsn at) {
      return at == 0 ? std::string("no position")
                     : "GTID " + std::to_string(domain) + "-*-" +
                           std::to_string(at - 1);
    };
  } else {
    if (mariadb)
      return Status::Usage("--lsn is for a PostgreSQL log; " + dir +
                           " captures MariaDB (use --gtid D-S-N)");
    auto lsn = ParseLsn(lsn_text);
    if (!lsn.ok())
      return Status::Usage("--lsn: \"" + lsn_text +
                           "\" is not an LSN (X/Y, as pg_current_wal_lsn() "
                           "prints it)");
    want = *lsn;
    say = [](Lsn at) {
      return at == 0 ? std::string("no position") : FormatLsn(at);
    };
  }
  const std::string target = gtid_text.empty() ? FormatLsn(want) : gtid_text;
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
    if (at >= want) return Status::OK();
    int wait_ms = 1000;
    if (limit_us >= 0) {
      const int64_t left = limit_us - (MonoMicros() - start);
      if (left <= 0 || cli::StopRequested()) {
        return Status::Busy(
            "the log has not reached " + target + " within " + timeout +
            " (it holds " +
            (gtid_text.empty() ? "what was committed before " : "up to ") +
            say(at) + ")");
      }
      wait_ms = static_cast<int>(std::min<int64_t>(left / 1000 + 1, 1000));
    } else if (cli::StopRequested()) {
      return Status::Busy("stopped before the log reached " + target);
    }
    CDC_RETURN_IF_ERROR(waiter.Wait(wait_ms).status());
  }
}

}  // namespace cdc::logtool
