// cdc-capture's engine: PostgreSQL logical replication (pgoutput) into the
// log, exactly once and durable before acknowledged.
//
// Positions: a transaction is recorded in the log under its commit LSN
// (Begin's final_lsn, the "lsn" of its events); progress seen only in
// keepalives is recorded as an empty frame under the keepalive's WAL end
// minus one. Recorded position P means "everything up to P is in the log",
// so the flush position sent to PostgreSQL is P + 1 — past the commit
// record's start, so the server does not send that transaction again, and
// never past a position that is not yet fsynced (docs/invariants.md,
// invariant 2). After a restart, transactions whose commit LSN is at or
// below the log's last position were already written and are skipped
// (invariant 3).
#pragma once

#include "cdc/base/status.h"
#include "cdc/capture/options.h"

namespace cdc::capture {

// Runs until SIGTERM/SIGINT (then drains, fsyncs, sends a final status and
// returns OK), until idle with opts.exit_when_idle, or until an error that
// retrying cannot fix. Connection failures are retried with exponential
// backoff for opts.reconnect_max_s, then Unavailable (exit 69).
Status Run(const Options& opts);

}  // namespace cdc::capture
