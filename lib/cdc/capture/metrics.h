// Counters of a capture run and their Prometheus textfile form.
#pragma once

#include <cstdint>
#include <string>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"
#include "cdc/log/writer.h"

namespace cdc::capture {

struct Metrics {
  uint64_t events = 0;
  uint64_t transactions = 0;
  uint64_t skipped_transactions = 0;  // already in the log (after a restart)
  uint64_t bytes = 0;                 // stored event bytes appended
  uint64_t reconnects = 0;
  uint64_t errors = 0;
  Lsn received_lsn = 0;
  Lsn durable_lsn = 0;
  // The flush position acknowledged for it (past a commit record's start:
  // the server's WAL end itself once caught up).
  Lsn durable_flush_lsn = 0;
  Lsn server_wal_end = 0;
  // Set by a source that counts lag in its own bytes (MariaDB: binlog
  // bytes from the durable transaction's end to the server's binlog end);
  // -1: server_wal_end - durable_flush_lsn.
  int64_t lag_bytes = -1;
  int64_t last_commit_time_us = 0;  // of the last transaction written
  bool paused = false;              // free-disk floor reached
  // The initial snapshot (all zero when none was taken by this run).
  bool snapshot_running = false;
  uint64_t snapshot_tables = 0;         // published tables to copy
  uint64_t snapshot_tables_done = 0;    // copied completely
  uint64_t snapshot_rows = 0;           // rows copied so far
  uint64_t snapshot_rows_estimate = 0;  // pg_class.reltuples, all tables
  // Incremental snapshots (all zero when none ran).
  bool incremental_running = false;
  uint64_t incremental_chunks = 0;      // chunks written, all snapshots
  uint64_t incremental_rows = 0;        // rows written, all snapshots
  uint64_t incremental_dropped = 0;     // chunk rows the stream overtook
  uint64_t incremental_table_rows = 0;  // of the running snapshot
  uint64_t incremental_estimate = 0;    // its table's pg_class.reltuples
};

// Prometheus text exposition of `m` and the writer's fsync histogram,
// every sample labelled with `labels` (k="v",...; empty: none).
std::string RenderMetrics(const Metrics& m, const log::SyncStats& sync,
                          const std::string& labels = "");
// Writes it atomically (temp file + rename), for node_exporter's textfile
// collector.
Status WriteMetricsFile(const std::string& path, const Metrics& m,
                        const log::SyncStats& sync,
                        const std::string& labels = "");

}  // namespace cdc::capture
