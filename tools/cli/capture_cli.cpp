// cdc-capture: PostgreSQL logical replication into the event log.
#include <sstream>

#include "cdc/base/fs.h"
#include "cdc/base/logging.h"
#include "cdc/capture/capture.h"
#include "cdc/capture/source.h"
#include "cdc/cli/cli.h"
#include "cdc/cli/notify.h"
#include "cdc/cursor/consumers.h"
#include "cdc/log/log_dir.h"
#include "cdc/mariadb/conn.h"
#include "cdc/pg/conn.h"
#include "common.h"
#include "runners.h"

namespace cdc::capture {

namespace {

struct Flags {
  std::vector<std::string> tables;
  std::string tables_alias;  // --tables a,b: the earlier name of --table
  bool drop_slot = false;
  std::string password_file;
  uint64_t server_id = 0;
  std::string segment_size = "64M";
  std::string retain_bytes, retain_age, min_free = "256M";
  uint64_t retain_segments = 0;
};

Status Finish(Options* o, const Flags& f, const CLI::App& app) {
  if (IsMariaDbDsn(o->dsn)) {
    CDC_RETURN_IF_ERROR(mariadb::ParseDsn(o->dsn).status());
    for (const char* pg_only :
         {"--slot", "--publication", "--failover", "--accept-gap",
          "--drop-slot", "--status-interval"})
      if (app.count(pg_only) > 0)
        return Status::Usage(std::string(pg_only) +
                             " is for a PostgreSQL source; a mariadb:// "
                             "--dsn reads the binlog without a slot");
    if (!f.password_file.empty()) {
      CDC_ASSIGN_OR_RETURN(o->password,
                           tools::ReadPasswordFile(f.password_file));
    }
    o->server_id = static_cast<uint32_t>(f.server_id);
    if (app.count("--snapshot-jobs") > 0)
      return Status::Usage(
          "--snapshot-jobs is for a PostgreSQL source; MariaDB's "
          "consistent snapshot cannot be shared between connections");
  } else if (!f.password_file.empty() || f.server_id != 0) {
    return Status::Usage(
        std::string(f.password_file.empty() ? "--server-id"
                                            : "--password-file") +
        " is for a MariaDB source (mariadb:// --dsn); PostgreSQL's password "
        "comes from PGPASSWORD, ~/.pgpass or passfile=");
  }
  // Parsed as libpq parses it, so every form is found: password=, a URI's
  // user:secret@ or ?password= (percent-encoded or not). A password on the
  // command line is visible to every local user (ps).
  auto has_password = IsMariaDbDsn(o->dsn) ? Result<bool>(false)
                                           : pg::ConninfoHasPassword(o->dsn);
  if (has_password.ok() && *has_password)
    return Status::Usage(
        "--dsn must not carry a password; use PGPASSWORD, ~/.pgpass or "
        "passfile=");
  if (!has_password.ok()) return has_password.status();
  if (o->snapshot != "never" && o->snapshot != "initial")
    return Status::Usage("--snapshot must be initial or never");
  std::vector<std::string> lists = f.tables;
  lists.push_back(f.tables_alias);
  for (const std::string& list : lists) {
    std::stringstream ss(list);
    for (std::string t; std::getline(ss, t, ',');)
      if (!t.empty()) o->tables.push_back(t);
  }
  CDC_ASSIGN_OR_RETURN(o->segment_bytes, tools::ParseSize(f.segment_size));
  if (!f.retain_bytes.empty()) {
    CDC_ASSIGN_OR_RETURN(o->retention.max_bytes,
                         tools::ParseSize(f.retain_bytes));
  }
  if (!f.retain_age.empty()) {
    CDC_ASSIGN_OR_RETURN(o->retention.max_age_us,
                         tools::ParseDuration(f.retain_age));
  }
  o->retention.max_segments = f.retain_segments;
  CDC_ASSIGN_OR_RETURN(o->min_free_bytes, tools::ParseSize(f.min_free));
  return Status::OK();
}

}  // namespace

int RunCli(int argc, char** argv) {
  cli::InstallStopHandlers();
  cli::InstallLogging("cdc-capture");
  cli::ReturnLargeBuffers();
  CLI::App app{
      "Capture committed changes from PostgreSQL logical replication "
      "(pgoutput) into a cdc log, durably and exactly once.",
      "cdc-capture"};
  Options o;
  Flags f;
  tools::AddLogOption(app, &o.log);
  app.add_option("--dsn", o.dsn,
                 "The source: a libpq connection string of a PostgreSQL "
                 "database (no password: use PGPASSWORD, ~/.pgpass or "
                 "passfile=), or mariadb://USER@HOST:PORT/DB for a MariaDB "
                 "binlog (password from MYSQL_PWD, an option file or "
                 "--password-file)")
      ->envname("CDC_DSN")
      ->required()
      ->type_name("CONNINFO");
  app.add_option("--slot", o.slot, "Replication slot (created if missing)")
      ->type_name("NAME")
      ->capture_default_str();
  app.add_option("--publication", o.publication,
                 "Publication (created if missing)")
      ->type_name("NAME")
      ->capture_default_str();
  app.add_option("--table", f.tables,
                 "A table of the publication capture creates (schema.table "
                 "or table; repeatable, or comma-separated; default: all "
                 "tables)")
      ->type_name("TABLE");
  app.add_option("--tables", f.tables_alias)->group("");
  app.add_option("--snapshot", o.snapshot,
                 "initial: copy the published tables' rows first when "
                 "capture creates the slot for an empty log; never: only "
                 "changes")
      ->type_name("MODE")
      ->capture_default_str();
  app.add_option("--snapshot-jobs", o.snapshot_jobs,
                 "Copy up to N tables of the initial snapshot side by side, "
                 "each over its own connection in the same snapshot "
                 "(PostgreSQL)")
      ->type_name("N")
      ->transform(tools::CountFlag(1, 64))
      ->capture_default_str();
  app.add_flag("--exit-when-idle", o.exit_when_idle,
               "Exit 0 once everything the server had at start is in the log");
  app.add_flag("--failover", o.failover,
               "Make the slot a failover slot, kept on standbys that "
               "synchronize slots (PostgreSQL 17 or later)");
  app.add_option("--server-id", f.server_id,
                 "MariaDB: the replica server id to read the binlog as "
                 "(default: one derived from the log's id)")
      ->type_name("N")
      ->transform(tools::CountFlag(1, UINT32_MAX));
  app.add_option("--password-file", f.password_file,
                 "MariaDB: read the password from FILE (its first line)")
      ->type_name("FILE");
  app.add_flag("--accept-gap", o.accept_gap,
               "Continue although the slot is ahead of the log");
  app.add_option("--status-interval", o.status_interval_s,
                 "Time between status updates to PostgreSQL")
      ->type_name("DURATION")
      ->transform(tools::DurationFlag(0, /*exclusive=*/true))
      ->default_str("10s");
  app.add_option("--reconnect-max", o.reconnect_max_s,
                 "Keep reconnecting this long, then exit 69")
      ->type_name("DURATION")
      ->transform(tools::DurationFlag(0))
      ->default_str("60s");
  app.add_option("--commit-delay", o.commit_delay_ms,
                 "Group commit window: fsync (then acknowledge) "
                 "transactions this long after they end, or once the "
                 "previous fsync has finished if that is later (a bare "
                 "number is milliseconds)")
      ->type_name("DURATION")
      ->transform(tools::DurationFlag(0, false, tools::DurationUnit::kMillis))
      ->default_str("10ms");
  app.add_option("--segment-size", f.segment_size, "Seal segments at SIZE")
      ->type_name("SIZE")
      ->check(tools::SizeText())
      ->capture_default_str();
  app.add_option("--retain-bytes", f.retain_bytes,
                 "Retention: keep the log under SIZE")
      ->type_name("SIZE")
      ->check(tools::SizeText());
  app.add_option("--retain-age", f.retain_age,
                 "Retention: drop segments older than DURATION (e.g. 7d)")
      ->type_name("DURATION")
      ->check(tools::DurationText());
  app.add_option("--retain-segments", f.retain_segments,
                 "Retention: keep at most N segments")
      ->type_name("N")
      ->transform(tools::CountFlag(0, UINT64_MAX));
  app.add_option("--min-free-disk", f.min_free,
                 "Pause reading while free disk is below SIZE")
      ->type_name("SIZE")
      ->check(tools::SizeText())
      ->capture_default_str();
  app.add_option("--metrics-file", o.metrics_file,
                 "Write Prometheus metrics to FILE (textfile collector)")
      ->type_name("FILE");
  app.add_option("--metrics-interval", o.metrics_interval_s,
                 "Time between metrics writes")
      ->type_name("DURATION")
      ->transform(tools::DurationFlag(0, /*exclusive=*/true))
      ->default_str("10s");
  app.add_flag("-q,--quiet", o.quiet,
               "Leave out informational messages (warnings and errors still "
               "print)");
  app.add_flag("--drop-slot", f.drop_slot,
               "Capture nothing: drop the log's replication slot, and its "
               "publication if cdc-capture created it, then exit (the log "
               "is kept)");
  app.set_config("--config", "", "Read flags from an INI/TOML FILE");
  app.allow_config_extras(false);  // a misspelt key is an error, not ignored
  if (auto rc = tools::Parse(app, argc, argv)) return *rc;
  Status s = Finish(&o, f, app);
  if (s.ok() && f.drop_slot) {
    s = DropSource(o);
  } else if (s.ok()) {
    // Other users who can write these directories could plant files under
    // the names capture writes (LOCK, seal records, metrics temporaries).
    std::string warn = log::SharedDirWarning(o.log);
    if (warn.empty() && !o.metrics_file.empty())
      warn = log::SharedParentWarning(o.metrics_file);
    if (!warn.empty()) LogWarning(warn);
    cli::Notifier notifier;  // systemd's sd_notify, when under it
    o.hooks.stop_requested = [] { return cli::StopRequested(); };
    o.hooks.ready = [&notifier, &o] {
      // Streaming: the log exists and is this source's.
      Status g = cursor::PrepareForGroup(o.log);
      if (!g.ok()) LogWarning("the log's group may not ack: " + g.message());
      notifier.Ready();
    };
    o.hooks.stopping = [&notifier] { notifier.Stopping(); };
    o.hooks.status = [&notifier](const std::string& line) {
      notifier.SetStatus(line);
    };
    o.hooks.alive = [&notifier](int64_t now) {
      notifier.MaybePingWatchdog(now);
    };
    const bool existed = PathExists(o.log);
    s = Run(o);
    // A capture that failed before it could bind the log to a slot (it
    // could not connect, or was refused) leaves no empty log behind.
    if (!s.ok() && !existed) (void)log::RemoveUnusedLog(o.log);
  }
  return cli::Report("cdc-capture", s);
}

}  // namespace cdc::capture
