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

// consume::Import (lib/cdc/consume/import.h) on `in_fd`, stopped by
// SIGTERM/SIGINT, with its warnings and summary on stderr.
Status RunImport(const ImportOptions& o, int in_fd);

}  // namespace cdc::logtool
