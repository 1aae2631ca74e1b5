// cdc-log wait: read-your-writes for scripts.
#pragma once

#include <string>

#include "cdc/base/status.h"

namespace cdc::logtool {

// Waits until the log in `dir` holds every transaction whose commit record
// starts before `lsn` (PostgreSQL's X/Y form; pg_current_wal_lsn() asked
// after a commit is past that commit's record), i.e. until the position the
// log records in its source (what capture acknowledges) reaches `lsn`.
// `timeout` is a duration as ParseDuration reads it ("5s", "2m"), empty for
// no limit. OK once the log is there; Busy (exit 75) on timeout or a stop
// signal, naming where the log stands; Usage for a bad LSN or duration.
//
// For a MariaDB log, `gtid` instead: a GTID position (D-S-N, or a list of
// them as @@gtid_binlog_pos prints; the one of the log's domain counts),
// reached once the log holds that transaction. Exactly one of `lsn` and
// `gtid` is given (Usage otherwise, or when it is not the log's kind).
Status RunWait(const std::string& dir, const std::string& lsn,
               const std::string& gtid, const std::string& timeout);

// The sequence number of domain `domain` in a GTID position ("D-S-N[,...]")
// or Usage naming what is wrong.
Result<uint64_t> GtidSeqnoFor(const std::string& gtids, uint32_t domain);

}  // namespace cdc::logtool
