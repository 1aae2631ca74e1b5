#include "cdc/capture/metrics.h"

#include "cdc/base/fs.h"

namespace cdc::capture {

namespace {
void Line(std::string* out, const char* name, const char* type,
          const char* help, double value) {
  *out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name +
          " " + type + "\n" + name + " ";
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g\n", value);
  *out += buf;
}
}  // namespace

std::string RenderMetrics(const Metrics& m, const log::SyncStats& sync) {
  std::string o;
  Line(&o, "cdc_capture_events_total", "counter", "Events written to the log.",
       static_cast<double>(m.events));
  Line(&o, "cdc_capture_transactions_total", "counter",
       "Source transactions written to the log.",
       static_cast<double>(m.transactions));
  Line(&o, "cdc_capture_skipped_transactions_total", "counter",
       "Transactions resent by PostgreSQL that were already in the log.",
       static_cast<double>(m.skipped_transactions));
  Line(&o, "cdc_capture_event_bytes_total", "counter",
       "Bytes of events (uncompressed) written to the log.",
       static_cast<double>(m.bytes));
  Line(&o, "cdc_capture_log_bytes_written_total", "counter",
       "Bytes written to segment files.",
       static_cast<double>(sync.bytes_written.load()));
  Line(&o, "cdc_capture_durable_lsn", "gauge",
       "Source position durable in the log (acknowledged to PostgreSQL).",
       static_cast<double>(m.durable_lsn));
  Line(&o, "cdc_capture_received_lsn", "gauge",
       "Last source position received.", static_cast<double>(m.received_lsn));
  Line(&o, "cdc_capture_lag_bytes", "gauge",
       "Bytes of WAL the durable position is behind the server's WAL end.",
       m.server_wal_end > m.durable_lsn
           ? static_cast<double>(m.server_wal_end - m.durable_lsn)
           : 0.0);
  Line(&o, "cdc_capture_last_commit_timestamp_seconds", "gauge",
       "Commit time in PostgreSQL of the last transaction written to the "
       "log (0 before the first).",
       static_cast<double>(m.last_commit_time_us) / 1e6);
  Line(&o, "cdc_capture_reconnects_total", "counter",
       "Reconnections to PostgreSQL.", static_cast<double>(m.reconnects));
  Line(&o, "cdc_capture_errors_total", "counter",
       "Errors (each followed by a reconnect or an exit).",
       static_cast<double>(m.errors));
  Line(&o, "cdc_capture_paused", "gauge",
       "1 while reading is paused because free disk is below the floor.",
       m.paused ? 1 : 0);
  Line(&o, "cdc_capture_snapshot_running", "gauge",
       "1 while the initial snapshot copies tables.",
       m.snapshot_running ? 1 : 0);
  Line(&o, "cdc_capture_snapshot_tables", "gauge",
       "Tables the initial snapshot copies.",
       static_cast<double>(m.snapshot_tables));
  Line(&o, "cdc_capture_snapshot_tables_done", "gauge",
       "Tables the initial snapshot has copied completely.",
       static_cast<double>(m.snapshot_tables_done));
  Line(&o, "cdc_capture_snapshot_rows_total", "counter",
       "Rows the initial snapshot has copied.",
       static_cast<double>(m.snapshot_rows));
  Line(&o, "cdc_capture_snapshot_rows_estimate", "gauge",
       "Rows the initial snapshot expects (pg_class.reltuples).",
       static_cast<double>(m.snapshot_rows_estimate));
  Line(&o, "cdc_capture_incremental_snapshot_running", "gauge",
       "1 while an incremental snapshot reads a table.",
       m.incremental_running ? 1 : 0);
  Line(&o, "cdc_capture_incremental_snapshot_chunks_total", "counter",
       "Chunks incremental snapshots have written.",
       static_cast<double>(m.incremental_chunks));
  Line(&o, "cdc_capture_incremental_snapshot_rows_total", "counter",
       "Rows incremental snapshots have written.",
       static_cast<double>(m.incremental_rows));
  Line(&o, "cdc_capture_incremental_snapshot_dropped_rows_total", "counter",
       "Chunk rows left out because the stream changed them meanwhile.",
       static_cast<double>(m.incremental_dropped));
  Line(&o, "cdc_capture_incremental_snapshot_table_rows", "gauge",
       "Rows the running incremental snapshot has written of its table.",
       static_cast<double>(m.incremental_table_rows));
  Line(&o, "cdc_capture_incremental_snapshot_rows_estimate", "gauge",
       "Rows of the running incremental snapshot's table "
       "(pg_class.reltuples).",
       static_cast<double>(m.incremental_estimate));
  o += "# HELP cdc_capture_fsync_seconds fsync latency of the log.\n"
       "# TYPE cdc_capture_fsync_seconds histogram\n";
  uint64_t cum = 0;
  for (int i = 0; i < log::SyncStats::kBuckets; ++i) {
    cum += sync.buckets[i].load();
    char le[32];
    if (i + 1 < log::SyncStats::kBuckets)
      snprintf(le, sizeof le, "%g", log::SyncStats::kBoundsUs[i] / 1e6);
    else
      snprintf(le, sizeof le, "+Inf");
    o += std::string("cdc_capture_fsync_seconds_bucket{le=\"") + le + "\"} " +
         std::to_string(cum) + "\n";
  }
  char sum[64];
  snprintf(sum, sizeof sum, "%.6f", sync.total_us.load() / 1e6);
  o += std::string("cdc_capture_fsync_seconds_sum ") + sum + "\n";
  o += "cdc_capture_fsync_seconds_count " + std::to_string(sync.count.load()) +
       "\n";
  return o;
}

Status WriteMetricsFile(const std::string& path, const Metrics& m,
                        const log::SyncStats& sync) {
  // Read by a collector that runs as another user.
  return WriteFileAtomic(path, RenderMetrics(m, sync), 0644);
}

}  // namespace cdc::capture
