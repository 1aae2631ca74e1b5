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
Status RunWait(const std::string& dir, const std::string& lsn,
               const std::string& timeout);

}  // namespace cdc::logtool
