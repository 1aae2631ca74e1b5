// cdc-log stats: the log's figures in one go, for a script or for
// Prometheus' node_exporter textfile collector (--prometheus).
#pragma once

#include <string>

#include "cdc/base/status.h"

namespace cdc::logtool {

// Prints the log's extent, position and free disk, every consumer's acked
// seq, lag and state, and the incremental snapshots by state: as lines of
// "name value" (kText), one JSON object, or the Prometheus text exposition
// format.
enum class StatsFormat { kText, kJson, kPrometheus };
Status RunStats(const std::string& dir, StatsFormat format);

}  // namespace cdc::logtool
