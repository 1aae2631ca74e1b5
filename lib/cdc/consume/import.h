// Importing NDJSON events into a log (`cdc-log import`): the engine.
//
// Consecutive lines with the same lsn and xid form one transaction; a
// transaction whose lsn is not after the log's last commit LSN is already
// in the log and skipped, so an interrupted import can simply be run
// again. A bad line rejects its whole transaction (nothing of it is
// written) and stops the import with the line number; earlier
// transactions stay. Commits are synced in groups (commit_delay_ms), and
// when the input pauses (a pipe from "cdc-tail -f") what is committed is
// synced once the window has passed, not held until more input comes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "cdc/base/status.h"

namespace cdc::consume {

struct ImportOptions {
  std::string log;
  uint64_t segment_bytes = 64ull << 20;
  double commit_delay_ms = 10;  // group commit window
  // Polled between lines: true stops the import (the open transaction is
  // discarded; Busy is returned once what came before is durable).
  std::function<bool()> stop = [] { return false; };
  // Called after each transaction taken (written or skipped) with the
  // transactions and events written so far and those skipped; may be
  // empty.
  std::function<void(uint64_t txns, uint64_t events, uint64_t skipped)>
      progress;
};

// What a sync made durable, which is what the import reports: after a
// failed write (a full disk) it is less than what was handed over.
struct ImportResult {
  uint64_t transactions = 0;     // durable
  uint64_t events = 0;           // durable
  uint64_t skipped = 0;          // transactions already in the log
  uint64_t last_seq = 0;         // the log's last durable seq after it
  uint64_t torn_tail_bytes = 0;  // cut by recovery when the log opened
  bool failed = false;           // the log failed (the end is what was durable)
  bool opened = false;           // the log was opened: the rest is meaningful
};

// Reads lines from `in_fd` until EOF, a bad line, a failure or a stop.
// `result` is filled in every case where the log could be opened.
Status Import(const ImportOptions& o, int in_fd, ImportResult* result);

}  // namespace cdc::consume
