// The standby status update capture sends PostgreSQL: the one place where
// what the server may forget is decided.
#pragma once

#include "cdc/base/lsn.h"
#include "cdc/log/writer.h"

namespace cdc::capture {

struct StandbyStatus {
  Lsn write = 0;  // received (informational: the server keeps its WAL)
  Lsn flush = 0;  // the slot is confirmed up to here; WAL before it goes
};

// docs/invariants.md, invariants 2 and 10: `flush` is the log's durable
// flush position and nothing else (pg_recvlogical's output_fsync_lsn, moved
// only after an fsync), whatever was received or written; `write` may run
// ahead to `received`.
// Reads the writer's durable position, so it is safe from any thread.
StandbyStatus StatusFor(const log::LogWriter& writer, Lsn received);

}  // namespace cdc::capture
