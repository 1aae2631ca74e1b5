// MariaDB as a capture source: the binlog, read as a replica reads it, from
// the GTID position the log holds.
//
// Positions. A MariaDB log counts in one GTID domain (recorded in log.json).
// A transaction with GTID D-S-N is stored with commit LSN N (its sequence
// number, which grows with every transaction of the domain) and xid S (the
// server id in its GTID); so the last TXN_END frame names the GTID to
// resume from, and a replica holding the same GTIDs resumes exactly there
// after a failover. Transactions that change nothing capture reads (other
// databases, unselected tables) move the position with event-less frames,
// at most once a second. MariaDB keeps nothing for a reader: capture never
// acknowledges, and the binlog the log needs may be purged under it, which
// the server reports and capture stops on (exit 11).
#pragma once

#include <memory>

#include "cdc/capture/engine.h"

namespace cdc::capture {

std::unique_ptr<Source> MakeMariaDbSource(Engine* engine);

}  // namespace cdc::capture
