#include "cdc/consume/import.h"

#include <deque>

#include "cdc/base/time.h"
#include "cdc/consume/line_reader.h"
#include "cdc/cursor/consumers.h"
#include "cdc/event/event.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/writer.h"

namespace cdc::consume {

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

Status Import(const ImportOptions& o, int in_fd, ImportResult* result) {
  CDC_ASSIGN_OR_RETURN(log::LogIdentity id, log::OpenOrCreateLog(o.log));
  // Imported positions would make capture skip real transactions as
  // "already in the log": a captured log takes events only from capture.
  if (id.source)
    return Status::Config("log " + o.log + " is written by cdc-capture (slot " +
                          id.source->slot + "); import into a log of its own");
  CDC_RETURN_IF_ERROR(cursor::PrepareForGroup(o.log));
  log::WriterOptions wo;
  wo.segment_bytes = o.segment_bytes;
  CDC_ASSIGN_OR_RETURN(auto w, log::LogWriter::Open(o.log, wo));
  *result = ImportResult();
  result->opened = true;
  result->torn_tail_bytes = w->recovery().truncated_bytes;
  const Lsn resume_after = w->has_commit() ? w->last_commit_lsn() : 0;
  const bool resuming = w->has_commit();
  const uint64_t first_seq = w->next_seq();
  const int64_t delay_us = static_cast<int64_t>(o.commit_delay_ms * 1000);
  uint64_t skipped = 0, written = 0;
  int64_t first_unsynced = 0;
  Txn txn;
  // What the summary reports is what a sync made durable, not what was
  // handed to the writer: after a failed write (a full disk) the two differ.
  // Imported LSNs only grow, so a commit is durable once the writer's
  // durable LSN reaches it.
  const Lsn durable_at_start = w->durable_lsn();
  struct Pending {
    Lsn lsn;
    uint64_t end_seq;
  };
  std::deque<Pending> unsynced;
  uint64_t durable_txns = 0, durable_end_seq = first_seq;
  auto count_durable = [&](bool all) {
    const Lsn d = w->durable_lsn();
    while (!unsynced.empty() &&
           (all || (unsynced.front().lsn <= d &&
                    unsynced.front().lsn > durable_at_start))) {
      ++durable_txns;
      durable_end_seq = unsynced.front().end_seq;
      unsynced.pop_front();
    }
  };

  auto commit = [&]() -> Status {
    if (!txn.open) return Status::OK();
    txn.open = false;
    if (txn.skip) {
      ++skipped;
      if (o.progress) o.progress(written, w->next_seq() - first_seq, skipped);
      return Status::OK();
    }
    CDC_RETURN_IF_ERROR(w->Commit(txn.lsn, txn.ts, txn.xid));
    ++written;
    if (o.progress) o.progress(written, w->next_seq() - first_seq, skipped);
    unsynced.push_back(Pending{txn.lsn, w->next_seq()});
    count_durable(false);
    int64_t now = MonoMicros();
    if (first_unsynced == 0) first_unsynced = now;
    if (now - first_unsynced >= delay_us) {
      CDC_RETURN_IF_ERROR(w->RequestSync());
      first_unsynced = 0;
    }
    return Status::OK();
  };
  LineReader in(in_fd);
  auto handle = [&](std::string_view line) -> Status {
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
      txn = Txn{true,   ev->lsn,      ev->xid,
                ev->ts, in.line_no(), resuming && ev->lsn <= resume_after};
    } else if (ev->ts != txn.ts) {
      return Status::BadInput("\"ts\" differs within transaction xid " +
                              std::to_string(txn.xid) +
                              " (it is the commit time)");
    }
    if (txn.skip) return Status::OK();
    // A schema event is also recorded in the log's schema file.
    return ev->op == 's' ? w->AppendSchema(ev->stored) : w->Append(ev->stored);
  };

  Status bad;
  for (;;) {
    // A signal stops between lines; the open transaction is discarded.
    if (o.stop()) break;
    // Commits wait for the group commit window to fill; when the input
    // pauses (a pipe from "cdc-tail -f"), sync what is committed once the
    // window has passed instead of holding it until more input comes.
    int timeout_ms = -1;
    if (first_unsynced != 0) {
      const int64_t left = first_unsynced + delay_us - MonoMicros();
      timeout_ms = left > 0 ? static_cast<int>(left / 1000) + 1 : 0;
    }
    std::string_view line;
    auto got = in.Next(timeout_ms, &line);
    if (!got.ok()) {
      bad = got.status();
      break;
    }
    if (*got == LineReader::Got::kEof) {
      bad = commit();
      break;
    }
    if (*got == LineReader::Got::kTimeout) {
      if (first_unsynced != 0 && MonoMicros() - first_unsynced >= delay_us) {
        bad = w->RequestSync();
        first_unsynced = 0;
        if (!bad.ok()) break;
      }
      continue;
    }
    Status s = handle(line);
    if (!s.ok()) {
      bad = s.code() == Code::kBadInput ? in.LineError(s.message()) : s;
      break;
    }
  }
  const bool interrupted = o.stop() && bad.ok();
  if (!bad.ok() || interrupted) {
    // The open transaction is incomplete: none of it may stay.
    Status a = w->Abort();
    if (!a.ok() && bad.ok()) bad = a;
  }
  Status s = w->Sync();
  count_durable(s.ok());
  if (bad.ok()) bad = s;
  if (bad.ok() && interrupted)
    bad = Status::Busy(
        "interrupted before the end of the input; run the same import "
        "again to continue (transactions already in the log are skipped)");
  result->transactions = durable_txns;
  result->events = durable_end_seq - first_seq;
  result->skipped = skipped;
  result->last_seq = durable_end_seq - 1;
  result->failed = !s.ok();
  return bad;
}

}  // namespace cdc::consume
