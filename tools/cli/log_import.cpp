#include "log_import.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "cdc/base/time.h"
#include "cdc/cli/cli.h"
#include "cdc/event/event.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/writer.h"

namespace cdc::logtool {

namespace {

struct Txn {
  bool open = false;
  Lsn lsn = 0;
  uint64_t xid = 0;
  int64_t ts = 0;
  uint64_t first_line = 0;
  bool skip = false;  // already in the log
};

}  // namespace

Status RunImport(const ImportOptions& o, int in_fd) {
  CDC_ASSIGN_OR_RETURN(log::LogIdentity id, log::OpenOrCreateLog(o.log));
  // Imported positions would make capture skip real transactions as
  // "already in the log": a captured log takes events only from capture.
  if (id.source)
    return Status::Config("log " + o.log + " is written by cdc-capture (slot " +
                          id.source->slot + "); import into a log of its own");
  log::WriterOptions wo;
  wo.segment_bytes = o.segment_bytes;
  CDC_ASSIGN_OR_RETURN(auto w, log::LogWriter::Open(o.log, wo));
  if (w->recovery().truncated_bytes > 0 && !o.quiet)
    fprintf(stderr, "cdc-log: recovered: cut a torn tail of %llu bytes\n",
            static_cast<unsigned long long>(w->recovery().truncated_bytes));
  const Lsn resume_after = w->has_commit() ? w->last_commit_lsn() : 0;
  const bool resuming = w->has_commit();
  const uint64_t first_seq = w->next_seq();
  const int64_t delay_us = static_cast<int64_t>(o.commit_delay_ms * 1000);
  uint64_t committed = 0, skipped = 0, events = 0, line_no = 0;
  int64_t first_unsynced = 0;
  Txn txn;

  auto commit = [&]() -> Status {
    if (!txn.open) return Status::OK();
    txn.open = false;
    if (txn.skip) {
      ++skipped;
      return Status::OK();
    }
    CDC_RETURN_IF_ERROR(w->Commit(txn.lsn, txn.ts, txn.xid));
    ++committed;
    int64_t now = MonoMicros();
    if (first_unsynced == 0) first_unsynced = now;
    if (now - first_unsynced >= delay_us) {
      CDC_RETURN_IF_ERROR(w->RequestSync());
      first_unsynced = 0;
    }
    return Status::OK();
  };
  auto handle = [&](std::string_view line) -> Status {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos)
      return Status::OK();
    auto ev = event::ParseImportLine(line);
    if (!ev.ok()) return ev.status();
    if (txn.open && (ev->lsn != txn.lsn || ev->xid != txn.xid)) {
      // The open transaction ended with the line before: keep it even if
      // this line turns out to be out of order.
      if (ev->lsn != txn.lsn) CDC_RETURN_IF_ERROR(commit());
      if (ev->lsn < txn.lsn)
        return Status::BadInput("lsn " + FormatLsn(ev->lsn) +
                                " goes back before " + FormatLsn(txn.lsn) +
                                " (transactions must be in commit order)");
      if (ev->lsn == txn.lsn)
        return Status::BadInput("xid " + std::to_string(ev->xid) +
                                " shares commit lsn " + FormatLsn(ev->lsn) +
                                " with xid " + std::to_string(txn.xid));
      CDC_RETURN_IF_ERROR(commit());
    }
    if (!txn.open) {
      txn = Txn{true,   ev->lsn, ev->xid,
                ev->ts, line_no, resuming && ev->lsn <= resume_after};
    } else if (ev->ts != txn.ts) {
      return Status::BadInput("\"ts\" differs within transaction xid " +
                              std::to_string(txn.xid) +
                              " (it is the commit time)");
    }
    if (txn.skip) return Status::OK();
    return w->Append(ev->stored);
  };

  std::string pending;
  std::vector<char> chunk(1 << 20);
  Status bad;
  for (bool eof = false; !eof && bad.ok();) {
    if (cli::StopRequested()) break;
    ssize_t n = ::read(in_fd, chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      bad =
          Status::IOError(std::string("cannot read stdin: ") + strerror(errno));
      break;
    }
    if (n == 0) {
      eof = true;
      if (!pending.empty()) pending.push_back('\n');
    } else {
      pending.append(chunk.data(), static_cast<size_t>(n));
    }
    size_t start = 0, nl;
    while ((nl = pending.find('\n', start)) != std::string::npos) {
      Status s = handle(std::string_view(pending.data() + start, nl - start));
      start = nl + 1;
      if (!s.ok()) {
        bad = s.code() == Code::kBadInput
                  ? Status::BadInput("stdin line " + std::to_string(line_no) +
                                     ": " + s.message())
                  : s;
        break;
      }
    }
    pending.erase(0, start);
    if (eof && bad.ok()) bad = commit();
  }
  const bool interrupted = cli::StopRequested() && bad.ok();
  if (!bad.ok() || interrupted) {
    // The open transaction is incomplete: none of it may stay.
    Status a = w->Abort();
    if (!a.ok() && bad.ok()) bad = a;
  }
  Status s = w->Sync();
  if (bad.ok()) bad = s;
  if (bad.ok() && interrupted)
    bad = Status::Busy(
        "interrupted before the end of the input; run the same import "
        "again to continue (transactions already in the log are skipped)");
  events = w->next_seq() - first_seq;
  if (!o.quiet) {
    fprintf(stderr,
            "cdc-log: imported %llu transactions (%llu events)%s; log ends "
            "at seq %llu\n",
            static_cast<unsigned long long>(committed),
            static_cast<unsigned long long>(events),
            skipped ? (", skipped " + std::to_string(skipped) +
                       " already in the log")
                          .c_str()
                    : "",
            static_cast<unsigned long long>(w->next_seq() - 1));
  }
  return bad;
}

}  // namespace cdc::logtool
