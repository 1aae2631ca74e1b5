// cdc-capture: a source's committed transactions into the log, exactly once
// and durable before acknowledged (engine.h). The source is chosen by the
// DSN: a mariadb:// or mysql:// URI reads that server's binlog
// (mariadb_source.h); anything else is a libpq conninfo or URI and reads
// PostgreSQL logical replication (pg_source.h).
#pragma once

#include <string_view>

#include "cdc/base/status.h"
#include "cdc/capture/options.h"

namespace cdc::capture {

// Whether `dsn` names a MariaDB/MySQL server (mariadb:// or mysql://).
bool IsMariaDbDsn(std::string_view dsn);

// Runs until SIGTERM/SIGINT (then drains, fsyncs, sends a final status and
// returns OK), until idle with opts.exit_when_idle, or until an error that
// retrying cannot fix. Connection failures are retried with exponential
// backoff for opts.reconnect_max_s, then Unavailable (exit 69).
Status Run(const Options& opts);

}  // namespace cdc::capture
