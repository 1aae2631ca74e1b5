// PostgreSQL as a capture source: pgoutput over a logical replication slot.
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

#include <memory>

#include "cdc/capture/engine.h"

namespace cdc::capture {

std::unique_ptr<Source> MakePgSource(Engine* engine);

}  // namespace cdc::capture
