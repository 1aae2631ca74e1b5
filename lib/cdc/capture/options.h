// What cdc-capture is told to do (flags of cdc-capture(1)).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cdc/log/retention.h"

namespace cdc::capture {

struct Options {
  std::string log;
  std::string dsn;
  std::string slot = "cdc";
  std::string publication = "cdc";
  std::vector<std::string> tables;   // for a publication we create
  std::string snapshot = "initial";  // when capture creates the slot
  bool exit_when_idle = false;
  bool accept_gap = false;
  bool failover = false;  // the slot is synchronized to standbys (17+)
  double status_interval_s = 10;
  double reconnect_max_s = 60;  // keep retrying for this long, then exit 69
  double commit_delay_ms = 10;  // group commit window
  uint64_t segment_bytes = 64ull << 20;
  log::RetentionPolicy retention;
  uint64_t min_free_bytes = 256ull << 20;  // pause reading below this
  std::string metrics_file;
  double metrics_interval_s = 10;
  bool quiet = false;
};

}  // namespace cdc::capture
