// cdc-pg: applies a cdc log (or NDJSON on stdin) to another PostgreSQL
// database, exactly once: each batch of whole source transactions is one
// target transaction that also moves the applied seq. See cdc-pg(1). The
// engine is sink::Engine; the database is pgsink::Target.
#include <cstdlib>

#include "cdc/cli/cli.h"
#include "cdc/consume/reader.h"
#include "cdc/log/log_dir.h"
#include "cdc/pg/conn.h"
#include "cdc/pgsink/target.h"
#include "common.h"
#include "runners.h"
#include "sink_flags.h"

namespace cdc::pg_tool {

namespace {

constexpr const char* kProg = "cdc-pg";

struct Options {
  tools::SinkFlags sink;
  std::string dsn;
  std::string password_file;
  std::vector<std::string> table_map;
  std::string schema;
  std::string state_table = "cdc.applied";
  bool create_tables = false;
  bool evolve = false;
};

// "schema.table", both parts non-empty (a name holding '.' is not
// supported here).
Result<std::pair<std::string, std::string>> SplitName(const std::string& s,
                                                      const char* flag) {
  const size_t dot = s.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == s.size() ||
      s.find('.', dot + 1) != std::string::npos)
    return Status::Usage(std::string(flag) + " wants SCHEMA.TABLE, not \"" + s +
                         "\"");
  return std::make_pair(s.substr(0, dot), s.substr(dot + 1));
}

Result<pgsink::Options> Check(const Options& o) {
  CDC_RETURN_IF_ERROR(tools::CheckSinkFlags(o.sink));
  if (!o.sink.use_stdin && o.sink.log.empty())
    return Status::Usage("--log DIR (or CDC_LOG) is required, unless --stdin");
  if (o.dsn.empty()) return Status::Usage("--dsn must not be empty");
  CDC_ASSIGN_OR_RETURN(bool has_password, pg::ConninfoHasPassword(o.dsn));
  if (has_password)
    return Status::Usage(
        "--dsn must not carry a password; use PGPASSWORD, ~/.pgpass, "
        "passfile= or --password-file");
  pgsink::Options p;
  p.dsn = o.dsn;
  p.consumer = o.sink.consumer;
  p.create_tables = o.create_tables;
  p.evolve = o.evolve;
  p.target_schema = o.schema;
  CDC_ASSIGN_OR_RETURN(auto state, SplitName(o.state_table, "--state-table"));
  p.state_schema = state.first;
  p.state_table = state.second;
  for (const std::string& m : o.table_map) {
    const size_t eq = m.find('=');
    if (eq == std::string::npos)
      return Status::Usage("--table-map wants SOURCE=TARGET, not \"" + m +
                           "\"");
    CDC_ASSIGN_OR_RETURN(auto src, SplitName(m.substr(0, eq), "--table-map"));
    std::string dst = m.substr(eq + 1);
    std::pair<std::string, std::string> to;
    if (dst.find('.') == std::string::npos && !dst.empty()) {
      to = {o.schema.empty() ? src.first : o.schema, dst};
    } else {
      CDC_ASSIGN_OR_RETURN(to, SplitName(dst, "--table-map"));
    }
    if (!p.table_map.emplace(src.first + "." + src.second, to).second)
      return Status::Usage("--table-map names " + src.first + "." + src.second +
                           " twice");
  }
  return p;
}

Status Run(const Options& o) {
  CDC_ASSIGN_OR_RETURN(pgsink::Options p, Check(o));
  if (!o.password_file.empty()) {
    CDC_ASSIGN_OR_RETURN(std::string pw,
                         tools::ReadPasswordFile(o.password_file));
    ::setenv("PGPASSWORD", pw.c_str(), 1);
  }
  if (!o.sink.log.empty()) {
    CDC_ASSIGN_OR_RETURN(log::LogIdentity id, log::ReadIdentity(o.sink.log));
    p.log_id = id.log_id;
  }
  pgsink::Target target(std::move(p));
  cli::Output out(1);
  sink::EngineOptions e = tools::SinkEngineOptions(o.sink, &out);
  // A transaction is one target transaction, but an initial snapshot (one
  // transaction in the log) is a copy of tables: in batches of --batch, or
  // it is held whole in memory.
  e.pieces = consume::Pieces::kSnapshots;
  if (!o.sink.use_stdin)
    e.prepare = [&target, &o](const consume::Source& source) {
      return consume::LearnSchemas(
          o.sink.log, source.NextSeq(),
          [&target](std::string_view stored) { target.LearnSchema(stored); });
    };
  sink::Engine engine(e, &target, sink::DefaultSource(e, "PostgreSQL"));
  return engine.Run();
}

}  // namespace

int RunCli(int argc, char** argv) {
  cli::InstallStopHandlers();
  cli::InstallLogging(kProg);
  CLI::App app{
      "Apply a cdc log to another PostgreSQL database, exactly once: each "
      "batch of whole source transactions is one target transaction that "
      "also records the applied seq.",
      kProg};
  Options o;
  // Each target transaction ends in the server's fsync: fewer, larger
  // ones apply faster (bench/pg).
  o.sink.batch = 5000;
  tools::SinkHelp help;
  help.consumer =
      "Consumer name: the log cursor to read and ack, and the row of the "
      "state table holding the applied seq";
  help.batch =
      "Events per target transaction (whole source transactions, an initial "
      "snapshot in pieces of N; default 5000)";
  help.reconnect_max =
      "How long to keep reconnecting before exiting 69 (default 60s)";
  tools::AddSinkFlags(app, &o.sink, help);
  app.add_option("--dsn", o.dsn,
                 "The target database: a libpq conninfo or postgresql:// URI, "
                 "without a password (PGPASSWORD, ~/.pgpass, passfile= or "
                 "--password-file)")
      ->required()
      ->type_name("CONNINFO");
  app.add_option("--password-file", o.password_file,
                 "Read the target's password from FILE")
      ->type_name("FILE");
  app.add_option("--table-map", o.table_map,
                 "Apply source table SRC (schema.table) to DST (schema.table, "
                 "or a table name in --schema or the source's schema); "
                 "repeatable")
      ->type_name("MAP");
  app.add_option("--schema", o.schema,
                 "Target schema of the tables --table-map does not name "
                 "(default: the source table's own)")
      ->type_name("NAME");
  app.add_flag("--create-tables", o.create_tables,
               "Create a missing target table from the log's schema event");
  app.add_flag("--evolve", o.evolve,
               "Add to a target table the columns the log's schema events add");
  app.add_option("--state-table", o.state_table,
                 "Where the applied seq is kept, one row per consumer "
                 "(default cdc.applied; created on first use)")
      ->type_name("TABLE");
  if (auto rc = tools::Parse(app, argc, argv)) return *rc;
  cli::SetQuiet(o.sink.quiet);
  return cli::Report(kProg, Run(o));
}

}  // namespace cdc::pg_tool
