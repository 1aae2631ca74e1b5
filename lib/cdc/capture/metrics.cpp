#include "cdc/capture/metrics.h"

#include <cstdio>

#include "cdc/base/fs.h"
#include "cdc/base/prometheus.h"

namespace cdc::capture {

std::string RenderMetrics(const Metrics& m, const log::SyncStats& sync,
                          const std::string& labels) {
  Exposition e;
  e.SetCommonLabels(labels);
  e.Metric("cdc_capture_events_total", "counter", "Events written to the log.",
           static_cast<double>(m.events));
  e.Metric("cdc_capture_transactions_total", "counter",
           "Source transactions written to the log.",
           static_cast<double>(m.transactions));
  e.Metric("cdc_capture_skipped_transactions_total", "counter",
           "Transactions resent by PostgreSQL that were already in the log.",
           static_cast<double>(m.skipped_transactions));
  e.Metric("cdc_capture_event_bytes_total", "counter",
           "Bytes of events (uncompressed) written to the log.",
           static_cast<double>(m.bytes));
  e.Metric("cdc_capture_log_bytes_written_total", "counter",
           "Bytes written to segment files.",
           static_cast<double>(sync.bytes_written.load()));
  e.Metric("cdc_capture_durable_lsn", "gauge",
           "Source position durable in the log (acknowledged to PostgreSQL).",
           static_cast<double>(m.durable_lsn));
  e.Metric("cdc_capture_received_lsn", "gauge",
           "Last source position received.",
           static_cast<double>(m.received_lsn));
  e.Metric("cdc_capture_lag_bytes", "gauge",
           "Bytes of WAL (binlog) the durable position is behind the server's "
           "end.",
           m.lag_bytes >= 0 ? static_cast<double>(m.lag_bytes)
           : m.server_wal_end > m.durable_flush_lsn
               ? static_cast<double>(m.server_wal_end - m.durable_flush_lsn)
               : 0.0);
  e.Metric("cdc_capture_last_commit_timestamp_seconds", "gauge",
           "Commit time in PostgreSQL of the last transaction written to the "
           "log (0 before the first).",
           static_cast<double>(m.last_commit_time_us) / 1e6);
  e.Metric("cdc_capture_reconnects_total", "counter",
           "Reconnections to PostgreSQL.", static_cast<double>(m.reconnects));
  e.Metric("cdc_capture_errors_total", "counter",
           "Errors (each followed by a reconnect or an exit).",
           static_cast<double>(m.errors));
  e.Metric("cdc_capture_paused", "gauge",
           "1 while reading is paused because free disk is below the floor.",
           m.paused ? 1.0 : 0.0);
  e.Metric("cdc_capture_snapshot_running", "gauge",
           "1 while the initial snapshot copies tables.",
           m.snapshot_running ? 1.0 : 0.0);
  e.Metric("cdc_capture_snapshot_tables", "gauge",
           "Tables the initial snapshot copies.",
           static_cast<double>(m.snapshot_tables));
  e.Metric("cdc_capture_snapshot_tables_done", "gauge",
           "Tables the initial snapshot has copied completely.",
           static_cast<double>(m.snapshot_tables_done));
  e.Metric("cdc_capture_snapshot_rows_total", "counter",
           "Rows the initial snapshot has copied.",
           static_cast<double>(m.snapshot_rows));
  e.Metric("cdc_capture_snapshot_rows_estimate", "gauge",
           "Rows the initial snapshot expects (pg_class.reltuples).",
           static_cast<double>(m.snapshot_rows_estimate));
  e.Metric("cdc_capture_incremental_snapshot_running", "gauge",
           "1 while an incremental snapshot reads a table.",
           m.incremental_running ? 1.0 : 0.0);
  e.Metric("cdc_capture_incremental_snapshot_chunks_total", "counter",
           "Chunks incremental snapshots have written.",
           static_cast<double>(m.incremental_chunks));
  e.Metric("cdc_capture_incremental_snapshot_rows_total", "counter",
           "Rows incremental snapshots have written.",
           static_cast<double>(m.incremental_rows));
  e.Metric("cdc_capture_incremental_snapshot_dropped_rows_total", "counter",
           "Chunk rows left out because the stream changed them meanwhile.",
           static_cast<double>(m.incremental_dropped));
  e.Metric("cdc_capture_incremental_snapshot_table_rows", "gauge",
           "Rows the running incremental snapshot has written of its table.",
           static_cast<double>(m.incremental_table_rows));
  e.Metric("cdc_capture_incremental_snapshot_rows_estimate", "gauge",
           "Rows of the running incremental snapshot's table "
           "(pg_class.reltuples).",
           static_cast<double>(m.incremental_estimate));
  e.Family("cdc_capture_fsync_seconds", "histogram",
           "fsync latency of the log.");
  uint64_t cum = 0;
  for (int i = 0; i < log::SyncStats::kBuckets; ++i) {
    cum += sync.buckets[i].load();
    char le[40];
    if (i + 1 < log::SyncStats::kBuckets)
      snprintf(le, sizeof le, "le=\"%g\"", log::SyncStats::kBoundsUs[i] / 1e6);
    else
      snprintf(le, sizeof le, "le=\"+Inf\"");
    e.Sample("cdc_capture_fsync_seconds_bucket", cum, le);
  }
  e.Sample("cdc_capture_fsync_seconds_sum", sync.total_us.load() / 1e6);
  e.Sample("cdc_capture_fsync_seconds_count", uint64_t{sync.count.load()});
  return std::move(e.mutable_text());
}

Status WriteMetricsFile(const std::string& path, const Metrics& m,
                        const log::SyncStats& sync, const std::string& labels) {
  // Read by a collector that runs as another user.
  return WriteFileAtomic(path, RenderMetrics(m, sync, labels), 0644);
}

}  // namespace cdc::capture
