// cdc-log snapshot: ask the running cdc-capture for an incremental snapshot
// of a table, and follow it; cdc-log snapshots: list them.
#pragma once

#include <cstdint>
#include <string>

#include "cdc/base/status.h"

namespace cdc::logtool {

struct SnapshotFlags {
  std::string table;  // SCHEMA.TABLE
  uint32_t chunk_rows = 1024;
  bool no_wait = false;
  std::string timeout;  // a duration; empty: no limit
  bool quiet = false;
  bool json = false;
};

// Writes the request into the log at `dir` and, unless no_wait, waits until
// capture has taken the snapshot (OK), failed it (BadInput, exit 65, with
// capture's reason: e.g. no primary key), or `timeout` passed (Busy, 75).
// Progress goes to stderr (a line kept up to date on a terminal, one a
// minute otherwise) unless quiet. Prints the request's id (or, with json,
// its final state as one JSON object) on stdout.
Status RunSnapshot(const std::string& dir, const SnapshotFlags& f);

// Every request of the log with its state and progress.
Status ListSnapshots(const std::string& dir, bool json);

}  // namespace cdc::logtool
