#include "log_stats.h"

#include <sys/statvfs.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cdc/base/prometheus.h"
#include "cdc/base/time.h"
#include "cdc/cursor/consumers.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/reader.h"
#include "cdc/log/snapshots.h"

namespace cdc::logtool {

namespace {

// Consumer names are [A-Za-z0-9._-]: nothing to escape in a label value.
std::string Label(const char* k, const std::string& v) {
  return std::string(k) + "=\"" + v + "\"";
}

}  // namespace

Status RunStats(const std::string& dir, StatsFormat format) {
  CDC_ASSIGN_OR_RETURN(log::LogIdentity id, log::ReadIdentity(dir));
  CDC_ASSIGN_OR_RETURN(auto store, cursor::ConsumerStore::Open(dir));
  CDC_ASSIGN_OR_RETURN(auto consumers, store->List());
  // After the cursors: an ack made meanwhile is within this end.
  CDC_ASSIGN_OR_RETURN(log::LogSummary sum, log::Summarize(dir));
  CDC_ASSIGN_OR_RETURN(auto snaps, log::ListIncrementalSnapshots(dir));
  uint64_t free_bytes = 0;
  struct statvfs vfs;
  if (statvfs(dir.c_str(), &vfs) == 0)
    free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  const uint64_t last = sum.next_seq - 1;
  // A damaged cursor is shown as such, then fails the command.
  Status damaged;
  for (const auto& c : consumers)
    if (damaged.ok()) damaged = cursor::CheckCursor(c, last);
  auto bad = [&](const cursor::Consumer& c) {
    return cursor::CursorDamaged(c, last);
  };
  auto lag = [&](const cursor::Consumer& c) -> uint64_t {
    return !bad(c) && last > c.acked_seq ? last - c.acked_seq : 0;
  };
  auto expired = [&](const cursor::Consumer& c) {
    return !bad(c) && c.acked_seq + 1 < sum.first_seq;
  };
  std::map<std::string, int> by_state = {
      {"pending", 0}, {"running", 0}, {"done", 0}, {"failed", 0}};
  for (const auto& s : snaps) ++by_state[s.state];
  const bool pos = sum.position.valid;
  if (format == StatsFormat::kText) {
    printf("log_id       %s\n", id.log_id.c_str());
    printf("segments     %zu\n", sum.segments);
    printf("bytes        %llu\n", static_cast<unsigned long long>(sum.bytes));
    printf("free_bytes   %llu\n", static_cast<unsigned long long>(free_bytes));
    printf("first_seq    %llu\n",
           static_cast<unsigned long long>(sum.first_seq));
    printf("last_seq     %llu\n", static_cast<unsigned long long>(last));
    printf("last_commit  %s\n",
           sum.has_commit ? FormatTimestamp(sum.last_time).c_str() : "-");
    printf("position     %s\n",
           pos ? FormatLsn(sum.position.lsn).c_str() : "-");
    for (const auto& c : consumers)
      printf("consumer     %s acked_seq %lld lag %s%s%s\n", c.name.c_str(),
             static_cast<long long>(cursor::StoredAckedSeq(c)),
             bad(c) ? "-" : std::to_string(lag(c)).c_str(),
             expired(c) ? " expired" : "", bad(c) ? " damaged" : "");
    printf("snapshots    pending %d running %d done %d failed %d\n",
           by_state["pending"], by_state["running"], by_state["done"],
           by_state["failed"]);
    return damaged;
  }
  if (format == StatsFormat::kJson) {
    nlohmann::ordered_json j;
    j["log_id"] = id.log_id;
    j["segments"] = sum.segments;
    j["bytes"] = sum.bytes;
    j["free_bytes"] = free_bytes;
    j["first_seq"] = sum.first_seq;
    j["last_seq"] = last;
    j["last_commit"] =
        sum.has_commit ? nlohmann::ordered_json(FormatTimestamp(sum.last_time))
                       : nlohmann::ordered_json();
    j["position"] = pos ? nlohmann::ordered_json(FormatLsn(sum.position.lsn))
                        : nlohmann::ordered_json();
    nlohmann::ordered_json cs = nlohmann::ordered_json::array();
    for (const auto& c : consumers)
      cs.push_back({{"name", c.name},
                    {"acked_seq", cursor::StoredAckedSeq(c)},
                    {"lag", bad(c) ? nlohmann::ordered_json()
                                   : nlohmann::ordered_json(lag(c))},
                    {"expired", expired(c)},
                    {"damaged", bad(c)}});
    j["consumers"] = cs;
    j["incremental_snapshots"] = by_state;
    printf("%s\n", j.dump().c_str());
    return damaged;
  }
  Exposition e;
  const std::string log_label = Label("log_id", id.log_id);
  e.Family("cdc_log_segments", "gauge", "Segment files of the log.");
  e.Sample("cdc_log_segments", static_cast<double>(sum.segments), log_label);
  e.Family("cdc_log_bytes", "gauge", "Bytes of the log's segments.");
  e.Sample("cdc_log_bytes", static_cast<double>(sum.bytes), log_label);
  e.Family("cdc_log_filesystem_free_bytes", "gauge",
           "Free bytes of the log's file system (for unprivileged users).");
  e.Sample("cdc_log_filesystem_free_bytes", static_cast<double>(free_bytes),
           log_label);
  e.Family("cdc_log_first_seq", "gauge", "Earliest retained seq.");
  e.Sample("cdc_log_first_seq", static_cast<double>(sum.first_seq), log_label);
  e.Family("cdc_log_last_seq", "gauge", "Seq of the last committed event.");
  e.Sample("cdc_log_last_seq", static_cast<double>(last), log_label);
  e.Family("cdc_log_last_commit_timestamp_seconds", "gauge",
           "Commit time of the log's last transaction.");
  e.Sample("cdc_log_last_commit_timestamp_seconds",
           sum.has_commit ? static_cast<double>(sum.last_time) / 1e6 : 0,
           log_label);
  e.Family("cdc_log_position_timestamp_seconds", "gauge",
           "When the log's source position was last recorded (commits and "
           "keepalives).");
  e.Sample("cdc_log_position_timestamp_seconds",
           pos ? static_cast<double>(sum.position_time) / 1e6 : 0, log_label);
  e.Family("cdc_log_consumer_acked_seq", "gauge",
           "Last seq the consumer acknowledged.");
  for (const auto& c : consumers)
    e.Sample("cdc_log_consumer_acked_seq",
             static_cast<double>(cursor::StoredAckedSeq(c)),
             log_label + "," + Label("consumer", c.name));
  e.Family("cdc_log_consumer_lag_events", "gauge",
           "Committed events the consumer has not acknowledged.");
  for (const auto& c : consumers)
    if (!bad(c))
      e.Sample("cdc_log_consumer_lag_events", static_cast<double>(lag(c)),
               log_label + "," + Label("consumer", c.name));
  e.Family("cdc_log_consumer_expired", "gauge",
           "1 when retention removed the consumer's next event.");
  for (const auto& c : consumers)
    e.Sample("cdc_log_consumer_expired", expired(c) ? 1.0 : 0.0,
             log_label + "," + Label("consumer", c.name));
  e.Family("cdc_log_consumer_damaged", "gauge",
           "1 when the consumer's cursor is beyond the log's end or "
           "negative: no reader uses it.");
  for (const auto& c : consumers)
    e.Sample("cdc_log_consumer_damaged", bad(c) ? 1.0 : 0.0,
             log_label + "," + Label("consumer", c.name));
  e.Family("cdc_log_consumer_updated_timestamp_seconds", "gauge",
           "When the consumer last acked, seeked or was created.");
  for (const auto& c : consumers)
    e.Sample("cdc_log_consumer_updated_timestamp_seconds",
             static_cast<double>(c.updated_us) / 1e6,
             log_label + "," + Label("consumer", c.name));
  e.Family("cdc_log_incremental_snapshots", "gauge",
           "Incremental snapshot requests by state.");
  for (const auto& [state, n] : by_state)
    e.Sample("cdc_log_incremental_snapshots", static_cast<uint64_t>(n),
             log_label + "," + Label("state", state));
  fputs(e.text().c_str(), stdout);
  // The gauge says it: a metrics file that kept its old figures would
  // hide the damage (and everything else) from the alert.
  return Status::OK();
}

}  // namespace cdc::logtool
