// What cdc-capture is told to do (flags of cdc-capture(1)).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cdc/log/retention.h"

namespace cdc::capture {

// How the engine speaks to the process around it. cdc-capture passes its
// stop flag (SIGTERM, SIGINT, SIGHUP) and systemd's notifier; a test or
// another program passes its own. Every hook may be left as it is.
struct Hooks {
  // Polled often: true ends the capture cleanly (drain, fsync, final
  // status, OK).
  std::function<bool()> stop_requested = [] { return false; };
  std::function<void()> ready = [] {};     // streaming (or snapshotting)
  std::function<void()> stopping = [] {};  // a stop was seen
  // One line saying what the engine does now.
  std::function<void(const std::string&)> status = [](const std::string&) {};
  // Alive: called at least every few seconds, with the monotonic clock.
  std::function<void(int64_t now_mono_us)> alive = [](int64_t) {};
};

struct Options {
  std::string log;
  std::string dsn;
  std::string slot = "cdc";
  std::string publication = "cdc";
  std::vector<std::string> tables;   // for a publication we create
  std::string snapshot = "initial";  // when capture creates the slot
  int snapshot_jobs = 1;  // connections copying tables side by side (PG)
  bool exit_when_idle = false;
  bool accept_gap = false;
  bool failover = false;  // the slot is synchronized to standbys (17+)
  // MariaDB: the replica server id capture reads the binlog as (0: one
  // derived from the log's id), and the password (from --password-file;
  // else MYSQL_PWD or the option files).
  uint32_t server_id = 0;
  std::string password;
  double status_interval_s = 10;
  double reconnect_max_s = 60;  // keep retrying for this long, then exit 69
  double commit_delay_ms = 10;  // group commit window
  uint64_t segment_bytes = 64ull << 20;
  log::RetentionPolicy retention;
  uint64_t min_free_bytes = 256ull << 20;  // pause reading below this
  std::string metrics_file;
  double metrics_interval_s = 10;
  bool quiet = false;
  Hooks hooks;
};

}  // namespace cdc::capture
