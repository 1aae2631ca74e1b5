// Where a log stands in its source's stream, read from its last TXN_END
// frame (see "Source positions" in man/cdc-log-format.5).
//
// A transaction's frame carries its commit LSN C, the start of its commit
// record: it covers every transaction committed at or below C. A lone
// (non-transactional) logical message carries the LSN PostgreSQL gives it,
// the END of its WAL record, L: the next transaction's commit record may
// start exactly at L, so the message covers only commits below L. Which of
// the two a frame is follows from the frame alone: a lone message has xid 0
// and an event; a transaction always has an xid (PostgreSQL's are never 0);
// a position-only frame (no events, xid 0) is recorded like a commit, at
// the keepalive's WAL end minus one.
//
// PostgreSQL's walsender, on START_REPLICATION, skips a transaction whose
// commit record starts below the confirmed (or requested) position, and a
// non-transactional message whose record starts below it; FlushLsn() is the
// highest position that skips only what the log holds.
#pragma once

#include <cstdint>

#include "cdc/base/lsn.h"
#include "cdc/log/frame.h"

namespace cdc::log {

struct SourcePosition {
  bool valid = false;      // the log holds a TXN_END frame
  Lsn lsn = 0;             // its commit LSN field
  bool exclusive = false;  // a lone message's LSN: commits at lsn not covered
  // Its xid field (a MariaDB log's GTID server id; 0 when not known).
  uint64_t xid = 0;

  static SourcePosition Of(const FrameHeader& h) {
    return SourcePosition{true, h.commit_lsn, h.xid == 0 && h.event_count > 0,
                          h.xid};
  }
  static SourcePosition Of(Lsn lsn, uint64_t xid, uint64_t events) {
    return SourcePosition{true, lsn, xid == 0 && events > 0, xid};
  }

  // The flush (and start) position to give PostgreSQL: 0 for none.
  Lsn FlushLsn() const {
    if (!valid) return 0;
    return exclusive ? lsn : lsn + 1;
  }
  // A transaction with this commit LSN is already in the log.
  bool CoversCommit(Lsn commit_lsn) const {
    return valid && (exclusive ? commit_lsn < lsn : commit_lsn <= lsn);
  }
  // A non-transactional message with this LSN (its record's end) is
  // already in the log: its record ends at or before the position.
  bool CoversMessage(Lsn message_lsn) const {
    return valid && message_lsn <= lsn;
  }
};

}  // namespace cdc::log
