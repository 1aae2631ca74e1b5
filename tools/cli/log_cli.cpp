// cdc-log: inspect, verify, retain, list consumers and segments, import.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>

#include "cdc/base/fs.h"
#include "cdc/base/logging.h"
#include "cdc/base/time.h"
#include "cdc/cli/cli.h"
#include "cdc/consume/selection.h"
#include "cdc/cursor/consumers.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/reader.h"
#include "cdc/log/retention.h"
#include "cdc/log/snapshots.h"
#include "cdc/log/verify.h"
#include "common.h"
#include "log_import.h"
#include "log_snapshot.h"
#include "log_stats.h"
#include "log_wait.h"
#include "runners.h"

namespace cdc::logtool {

namespace {

using Json = nlohmann::ordered_json;

void Print(const std::string& s) { fputs(s.c_str(), stdout); }
void PrintJson(const Json& j) { Print(j.dump() + "\n"); }

std::string TimeOrDash(int64_t us, bool known) {
  return known ? FormatTimestamp(us) : "-";
}

// The log's consumer store, or null when it has none yet: a listing must
// not create consumers.db (on a full disk, a read-only mount, or a log
// directory the reader may not write, it could not).
Result<std::unique_ptr<cursor::ConsumerStore>> ExistingStore(
    const std::string& dir) {
  struct stat st;
  if (::lstat(JoinPath(dir, "consumers.db").c_str(), &st) != 0 &&
      errno == ENOENT)
    return std::unique_ptr<cursor::ConsumerStore>();
  return cursor::ConsumerStore::Open(dir);
}
Result<std::vector<cursor::Consumer>> ListConsumers(
    cursor::ConsumerStore* store) {
  if (store == nullptr) return std::vector<cursor::Consumer>();
  return store->List();
}

Status Info(const std::string& dir, bool json) {
  CDC_ASSIGN_OR_RETURN(log::LogIdentity id, log::ReadIdentity(dir));
  CDC_ASSIGN_OR_RETURN(log::LogSummary sum, log::Summarize(dir));
  CDC_ASSIGN_OR_RETURN(auto store, ExistingStore(dir));
  CDC_ASSIGN_OR_RETURN(auto consumers, ListConsumers(store.get()));
  Json j;
  j["log"] = dir;
  j.update(Json::parse(log::IdentityJson(id)));
  j["segments"] = sum.segments;
  j["bytes"] = sum.bytes;
  j["first_seq"] = sum.first_seq;
  j["last_seq"] = sum.next_seq - 1;
  j["events"] = sum.next_seq - sum.first_seq;
  j["last_lsn"] = sum.has_commit ? Json(FormatLsn(sum.last_lsn)) : Json();
  j["last_commit"] =
      sum.has_commit ? Json(FormatTimestamp(sum.last_time)) : Json();
  // Where the log stands in its source, keepalive positions included, and
  // what cdc-capture acknowledges for it.
  const bool pos = sum.position.valid;
  j["position"] = pos ? Json(FormatLsn(sum.position.lsn)) : Json();
  j["position_time"] = pos ? Json(FormatTimestamp(sum.position_time)) : Json();
  j["flush_lsn"] = pos ? Json(FormatLsn(sum.position.FlushLsn())) : Json();
  j["consumers"] = consumers.size();
  if (json) {
    PrintJson(j);
    return Status::OK();
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string v = it->is_string() ? it->get<std::string>()
                    : it->is_null() ? "-"
                                    : it->dump();
    if (it.key() == "source" && id.source) v = id.source->Describe();
    // log.json is input like any other: nothing in it reaches the terminal
    // raw.
    printf("%-15s %s\n", (it.key() + ":").c_str(),
           cli::EscapeForTerminal(v).c_str());
  }
  return Status::OK();
}

Status Verify(const std::string& dir, bool json, bool quiet) {
  const bool progress = !quiet && !json && isatty(2);
  CDC_ASSIGN_OR_RETURN(log::VerifyReport rep,
                       log::VerifyLog(dir, [&](uint64_t done, uint64_t total) {
                         if (progress)
                           fprintf(
                               stderr, "\rcdc-log: verified %llu of %llu MiB",
                               static_cast<unsigned long long>(done >> 20),
                               static_cast<unsigned long long>(total >> 20));
                       }));
  if (progress) fputs("\n", stderr);
  if (json) {
    Json j;
    j["ok"] = rep.ok();
    j["segments"] = rep.segments;
    j["frames"] = rep.frames;
    j["events"] = rep.events;
    j["bytes"] = rep.bytes;
    j["first_seq"] = rep.first_seq;
    j["last_seq"] = rep.next_seq - 1;
    j["problems"] = rep.problems;
    j["notes"] = rep.notes;
    PrintJson(j);
  } else {
    if (!quiet)
      for (const auto& n : rep.notes) LogInfo("note: " + n);
    for (const auto& p : rep.problems)
      fprintf(stderr, "cdc-log: %s\n", cli::EscapeForTerminal(p).c_str());
    if (!quiet)
      printf(
          "%s: %llu segments, %llu frames, %llu events (seq %llu-%llu), "
          "%llu bytes%s\n",
          rep.ok() ? "ok" : "FAILED",
          static_cast<unsigned long long>(rep.segments),
          static_cast<unsigned long long>(rep.frames),
          static_cast<unsigned long long>(rep.events),
          static_cast<unsigned long long>(rep.first_seq),
          static_cast<unsigned long long>(rep.next_seq - 1),
          static_cast<unsigned long long>(rep.bytes),
          rep.ok() ? ""
                   : (", " + std::to_string(rep.problems.size()) + " problems")
                         .c_str());
  }
  if (!rep.ok())
    return Status::CheckFailed(std::to_string(rep.problems.size()) +
                               " problems found in " + dir);
  return Status::OK();
}

struct RetainFlags {
  std::string max_bytes, max_age;
  uint64_t max_segments = 0;
  bool dry_run = false;
};

// An earlier, hidden flag name given for `now`: its value, checked as
// `now`'s is but named as given in errors, goes to *into. Both names at
// once is a usage error.
Status TakeOldName(const CLI::Option& old, const CLI::Option& now,
                   const CLI::Validator& check, std::string* into) {
  if (old.count() == 0) return Status::OK();
  if (now.count() > 0)
    return Status::Usage(tools::OptionName(old) + " is the earlier name of " +
                         tools::OptionName(now) + "; give one of them");
  std::string v = old.results().back();
  std::string err = check(v);
  if (!err.empty()) return Status::Usage(tools::OptionName(old) + ": " + err);
  *into = v;
  return Status::OK();
}

Status Retain(const std::string& dir, const RetainFlags& f, bool json) {
  log::RetentionPolicy p;
  if (!f.max_bytes.empty()) {
    CDC_ASSIGN_OR_RETURN(p.max_bytes, tools::ParseSize(f.max_bytes));
  }
  if (!f.max_age.empty()) {
    CDC_ASSIGN_OR_RETURN(p.max_age_us, tools::ParseDuration(f.max_age));
  }
  p.max_segments = f.max_segments;
  if (!p.any())
    return Status::Usage(
        "give at least one of --retain-bytes, --retain-age, "
        "--retain-segments");
  CDC_RETURN_IF_ERROR(log::ReadIdentity(dir).status());
  CDC_ASSIGN_OR_RETURN(log::RetentionResult res,
                       log::ApplyRetention(dir, p, NowMicros(), f.dry_run));
  CDC_ASSIGN_OR_RETURN(auto store, cursor::ConsumerStore::Open(dir));
  CDC_ASSIGN_OR_RETURN(auto consumers, store->List());
  std::vector<std::string> expired;
  for (const auto& c : consumers)
    if (cursor::StoredAckedSeq(c) >= 0 && c.acked_seq + 1 < res.first_seq)
      expired.push_back(c.name);
  if (json) {
    Json j;
    j["dry_run"] = f.dry_run;
    Json removed = Json::array();
    for (const auto& s : res.removed) removed.push_back(s.name);
    j["removed"] = removed;
    j["bytes_removed"] = res.bytes_removed;
    j["first_seq"] = res.first_seq;
    j["expired_consumers"] = expired;
    j["pinned"] = res.pinned;
    PrintJson(j);
    return Status::OK();
  }
  for (const auto& s : res.removed)
    printf("%s %s\n", f.dry_run ? "would remove" : "removed", s.name.c_str());
  printf("%s %zu segments (%llu bytes); earliest retained seq %llu\n",
         f.dry_run ? "would remove" : "removed", res.removed.size(),
         static_cast<unsigned long long>(res.bytes_removed),
         static_cast<unsigned long long>(res.first_seq));
  if (res.pinned)
    LogInfo("a running cdc-backup pins the log (" + dir +
            "/backup.pin); segments due for removal are kept until it "
            "finishes");
  for (const auto& n : expired)
    LogInfo("consumer " + n + " is expired (recover with \"cdc-ack -c " + n +
            " --seek earliest\")");
  return Status::OK();
}

// A stored selection as the cdc-ack flags that store it, each value
// quoted for a POSIX shell.
std::string SelectionFlags(const consume::Filter& f) {
  auto quote = [](const std::string& v) {
    if (!v.empty() &&
        v.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW"
                            "XYZ0123456789._-,/:") == std::string::npos)
      return v;
    std::string q = "'";
    for (char ch : v)
      q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return q + "'";
  };
  std::string out;
  auto add = [&](const char* flag, const std::string& v) {
    if (!out.empty()) out.push_back(' ');
    out += flag;
    out.push_back(' ');
    out += quote(v);
  };
  for (const auto& t : f.tables) add("--table", t);
  for (const auto& t : f.exclude_tables) add("--exclude-table", t);
  if (!f.ops.empty()) add("--op", f.ops);
  if (f.schema_changes) {
    if (!out.empty()) out.push_back(' ');
    out += "--schema-changes";
  }
  return out.empty() ? "-" : out;
}

Status Consumers(const std::string& dir, bool json) {
  CDC_ASSIGN_OR_RETURN(auto store, ExistingStore(dir));
  CDC_ASSIGN_OR_RETURN(auto consumers, ListConsumers(store.get()));
  // After the cursors: an ack made meanwhile is within this end.
  CDC_ASSIGN_OR_RETURN(log::LogSummary sum, log::Summarize(dir));
  const uint64_t last = sum.next_seq - 1;
  Status damaged;  // the first damaged cursor, reported after the listing
  if (!json)
    printf("%-24s %12s %12s %-8s %-27s %s\n", "NAME", "ACKED", "LAG", "STATE",
           "UPDATED", "SELECTION");
  for (const auto& c : consumers) {
    const bool bad = cursor::CursorDamaged(c, last);
    if (bad && damaged.ok()) damaged = cursor::CheckCursor(c, last);
    const bool expired = !bad && c.acked_seq + 1 < sum.first_seq;
    const uint64_t lag = !bad && last > c.acked_seq ? last - c.acked_seq : 0;
    CDC_ASSIGN_OR_RETURN(std::string stored, store->GetSelection(c.name));
    std::optional<consume::Filter> filter;
    if (!stored.empty()) {
      CDC_ASSIGN_OR_RETURN(filter, consume::Filter::FromJson(stored, c.name));
    }
    if (json) {
      Json j;
      j["name"] = c.name;
      j["acked_seq"] = cursor::StoredAckedSeq(c);
      j["lag"] = bad ? Json() : Json(lag);
      j["expired"] = expired;
      j["damaged"] = bad;
      j["updated"] = FormatTimestamp(c.updated_us);
      j["selection"] = filter ? Json::parse(filter->ToJson()) : Json();
      PrintJson(j);
    } else {
      printf("%-24s %12lld %12s %-8s %-27s %s\n", c.name.c_str(),
             static_cast<long long>(cursor::StoredAckedSeq(c)),
             bad ? "-" : std::to_string(lag).c_str(),
             bad       ? "damaged"
             : expired ? "expired"
                       : "ok",
             FormatTimestamp(c.updated_us).c_str(),
             filter ? cli::EscapeForTerminal(SelectionFlags(*filter)).c_str()
                    : "-");
    }
  }
  return damaged;
}

Status Segments(const std::string& dir, bool json) {
  CDC_RETURN_IF_ERROR(log::ReadIdentity(dir).status());
  CDC_ASSIGN_OR_RETURN(log::LogSummary sum, log::Summarize(dir));
  CDC_ASSIGN_OR_RETURN(auto segs, log::ListSegments(dir));
  if (!json)
    printf("%-30s %12s %12s %12s %-7s %s\n", "SEGMENT", "FIRST_SEQ", "LAST_SEQ",
           "BYTES", "STATE", "LAST_COMMIT");
  for (size_t i = 0; i < segs.size(); ++i) {
    const auto& s = segs[i];
    CDC_ASSIGN_OR_RETURN(uint64_t bytes, FileSize(s.path));
    uint64_t end = s.seal                ? s.seal->end_seq
                   : i + 1 < segs.size() ? segs[i + 1].base_seq
                                         : sum.next_seq;
    bool known = s.seal && s.seal->last_time != 0;
    if (json) {
      Json j;
      j["segment"] = s.name;
      j["first_seq"] = s.base_seq;
      j["last_seq"] = end - 1;
      j["bytes"] = bytes;
      j["sealed"] = s.sealed;
      j["sha256"] = s.seal ? Json(s.seal->sha256) : Json();
      j["last_commit"] =
          known ? Json(FormatTimestamp(s.seal->last_time)) : Json();
      PrintJson(j);
    } else {
      printf("%-30s %12llu %12llu %12llu %-7s %s\n", s.name.c_str(),
             static_cast<unsigned long long>(s.base_seq),
             static_cast<unsigned long long>(end - 1),
             static_cast<unsigned long long>(bytes),
             s.sealed ? "sealed" : "active",
             TimeOrDash(known ? s.seal->last_time : 0, known).c_str());
    }
  }
  return Status::OK();
}

}  // namespace

int RunCli(int argc, char** argv) {
  cli::InstallStopHandlers();
  cli::InstallLogging("cdc-log");
  CLI::App app{"Inspect, verify, retain and import a cdc event log.",
               "cdc-log"};
  std::string dir;
  bool json = false;
  tools::AddLogOption(app, &dir);
  app.require_subcommand(1);
  app.fallthrough();
  auto* info = app.add_subcommand("info", "Show the log's identity and extent");
  info->add_flag("--json", json, "One JSON object");
  auto* verify = app.add_subcommand("verify",
                                    "Check every frame, seq continuity, LSN "
                                    "order and seals; exit 1 on a problem");
  bool quiet = false;
  verify->add_flag("--json", json, "One JSON object");
  verify->add_flag("-q,--quiet", quiet, "Print problems only");
  auto* retain = app.add_subcommand("retain", "Delete old sealed segments");
  RetainFlags rf;
  // The names capture's retention flags have; --max-* were their names
  // here before, kept as hidden aliases.
  auto* rb = retain
                 ->add_option("--retain-bytes", rf.max_bytes,
                              "Keep the log under SIZE (e.g. 10G)")
                 ->type_name("SIZE")
                 ->check(tools::SizeText());
  auto* ra =
      retain
          ->add_option("--retain-age", rf.max_age,
                       "Drop segments whose newest commit is older (e.g. 7d)")
          ->type_name("DURATION")
          ->check(tools::DurationText());
  auto* rs = retain
                 ->add_option("--retain-segments", rf.max_segments,
                              "Keep at most N segments")
                 ->type_name("N")
                 ->transform(tools::CountFlag(1, UINT64_MAX));
  // Hidden options have no name for CLI11's messages (nor for the
  // "Excludes:" of --help): they are checked after parsing instead.
  auto* ob = retain->add_option("--max-bytes")->group("");
  auto* oa = retain->add_option("--max-age")->group("");
  auto* os = retain->add_option("--max-segments")->group("");
  retain->add_flag("--dry-run", rf.dry_run, "Show what would be removed");
  retain->add_flag("--json", json, "One JSON object");
  auto* consumers =
      app.add_subcommand("consumers", "List consumers with their lag");
  consumers->add_flag("--json", json, "One JSON object per consumer");
  auto* segments = app.add_subcommand("segments", "List segments");
  segments->add_flag("--json", json, "One JSON object per segment");
  auto* import = app.add_subcommand("import",
                                    "Append NDJSON events from stdin as "
                                    "transactions (creates the log if needed)");
  ImportOptions io;
  std::string seg_size = "64M";
  import
      ->add_option("--segment-size", seg_size,
                   "Seal segments at about SIZE (default 64M)")
      ->type_name("SIZE")
      ->check(tools::SizeText());
  import
      ->add_option("--commit-delay", io.commit_delay_ms,
                   "Group commit window (default 10ms; a bare number is "
                   "milliseconds)")
      ->type_name("DURATION")
      ->transform(tools::DurationFlag(0, false, tools::DurationUnit::kMillis));
  import->add_flag("-q,--quiet", io.quiet, "No summary on stderr");
  auto* wait = app.add_subcommand(
      "wait",
      "Wait until the log holds every transaction committed before an LSN "
      "or up to a GTID (read-your-writes); exit 75 on timeout");
  std::string wait_lsn, wait_gtid, wait_timeout;
  wait->add_option("--lsn", wait_lsn,
                   "PostgreSQL: X/Y, e.g. from SELECT pg_current_wal_lsn() "
                   "after a commit")
      ->type_name("LSN");
  wait->add_option("--gtid", wait_gtid,
                   "MariaDB: D-S-N, e.g. from SELECT @@last_gtid after a "
                   "commit (or a list, as @@gtid_binlog_pos)")
      ->type_name("GTID");
  wait->add_option("--timeout", wait_timeout,
                   "Give up after DURATION (e.g. 5s) with exit 75; default "
                   "no limit")
      ->type_name("DURATION")
      ->check(tools::DurationText());
  auto* stats = app.add_subcommand(
      "stats",
      "The log's figures and every consumer's lag in one go: text, --json, "
      "or --prometheus for a textfile collector");
  bool prometheus = false, stats_json = false;
  auto* stats_json_flag =
      stats->add_flag("--json", stats_json, "One JSON object");
  stats
      ->add_flag("--prometheus", prometheus,
                 "Prometheus text exposition format")
      ->excludes(stats_json_flag);
  auto* snapshot = app.add_subcommand(
      "snapshot",
      "Ask cdc-capture for an incremental snapshot of a table and wait for "
      "it; exit 65 if it fails");
  SnapshotFlags sf;
  snapshot
      ->add_option("--table", sf.table,
                   "The table, SCHEMA.TABLE (it needs a primary key)")
      ->type_name("TABLE")
      ->required();
  snapshot
      ->add_option("--chunk-rows", sf.chunk_rows,
                   "Rows read per chunk, each its own short transaction "
                   "(default 1024)")
      ->type_name("N")
      ->transform(tools::CountFlag(1, log::kMaxChunkRows));
  snapshot->add_flag("--no-wait", sf.no_wait,
                     "Print the request's id and exit at once");
  snapshot
      ->add_option("--timeout", sf.timeout,
                   "Stop waiting after DURATION with exit 75 (the snapshot "
                   "goes on); default no limit")
      ->type_name("DURATION")
      ->check(tools::DurationText());
  snapshot->add_flag("-q,--quiet", sf.quiet, "No progress on stderr");
  snapshot->add_flag("--json", sf.json, "Print the final state as JSON");
  auto* snapshots = app.add_subcommand(
      "snapshots", "List incremental snapshot requests and their progress");
  snapshots->add_flag("--json", json, "One JSON object per request");
  if (auto rc = tools::Parse(app, argc, argv)) return *rc;

  Status s;
  if (info->parsed()) {
    s = Info(dir, json);
  } else if (verify->parsed()) {
    s = Verify(dir, json, quiet);
  } else if (retain->parsed()) {
    std::string segments;
    s = TakeOldName(*ob, *rb, tools::SizeText(), &rf.max_bytes);
    if (s.ok()) s = TakeOldName(*oa, *ra, tools::DurationText(), &rf.max_age);
    if (s.ok())
      s = TakeOldName(*os, *rs, tools::CountFlag(1, UINT64_MAX), &segments);
    if (s.ok() && !segments.empty())
      rf.max_segments = std::strtoull(segments.c_str(), nullptr, 10);
    if (s.ok()) s = Retain(dir, rf, json);
  } else if (consumers->parsed()) {
    s = Consumers(dir, json);
  } else if (segments->parsed()) {
    s = Segments(dir, json);
  } else if (stats->parsed()) {
    s = RunStats(dir, prometheus   ? StatsFormat::kPrometheus
                      : stats_json ? StatsFormat::kJson
                                   : StatsFormat::kText);
  } else if (snapshot->parsed()) {
    s = RunSnapshot(dir, sf);
  } else if (snapshots->parsed()) {
    s = ListSnapshots(dir, json);
  } else if (wait->parsed()) {
    s = RunWait(dir, wait_lsn, wait_gtid, wait_timeout);
  } else if (import->parsed()) {
    io.log = dir;
    auto size = tools::ParseSize(seg_size);
    s = size.ok() ? (io.segment_bytes = *size, RunImport(io, 0))
                  : size.status();
  }
  fflush(stdout);
  if (s.code() == Code::kCheckFailed) return 1;  // problems already printed
  return cli::Report("cdc-log", s);
}

}  // namespace cdc::logtool
