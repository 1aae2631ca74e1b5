// `cdc-log import`: appends NDJSON events from stdin as transactions.
#pragma once

#include <cstdint>
#include <string>

#include "cdc/base/status.h"

namespace cdc::logtool {

struct ImportOptions {
  std::string log;
  uint64_t segment_bytes = 64ull << 20;
  double commit_delay_ms = 10;  // group commit window
  bool quiet = false;
};

// Consecutive lines with the same lsn and xid form one transaction; a
// transaction whose lsn is not after the log's last commit LSN is already
// in the log and skipped, so an interrupted import can simply be run again.
// A bad line rejects its whole transaction (nothing of it is written) and
// stops the import with the line number; earlier transactions stay.
Status RunImport(const ImportOptions& o, int in_fd);

}  // namespace cdc::logtool
