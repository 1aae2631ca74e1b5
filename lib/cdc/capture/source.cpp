#include "cdc/capture/source.h"

#include "cdc/base/logging.h"
#include "cdc/capture/snapshot.h"
#include "cdc/log/log_dir.h"

namespace cdc::capture {

namespace {

// The comment of a publication cdc-capture created.
constexpr const char* kPublicationComment =
    "created by cdc-capture; cdc-capture --drop-slot drops it";

// A --table name, schema-qualified. Capture's connections pin search_path
// (so a role's setting cannot change how values render), but a name given
// without a schema means what it would in psql: it is looked up in the
// role's search_path on a connection that keeps it. Unresolved, it is
// left for CREATE PUBLICATION to name as missing.
Result<std::string> QualifiedTable(pg::Connection& conn,
                                   std::unique_ptr<pg::Connection>* lookup,
                                   const Options& o, const std::string& t) {
  size_t dot = t.find('.');
  if (dot != std::string::npos)
    return conn.QuoteIdent(t.substr(0, dot)) + "." +
           conn.QuoteIdent(t.substr(dot + 1));
  if (*lookup == nullptr) {
    CDC_ASSIGN_OR_RETURN(*lookup, pg::Connection::Connect(
                                      o.dsn, false, /*pin_search_path=*/false));
  }
  CDC_ASSIGN_OR_RETURN(
      pg::PgResult r,
      (*lookup)->ExecParams(
          "SELECT n.nspname FROM pg_catalog.pg_class c JOIN "
          "pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = "
          "pg_catalog.to_regclass(pg_catalog.quote_ident($1))",
          {t}));
  if (r.rows() == 0) return conn.QuoteIdent(t);
  return conn.QuoteIdent(r.get(0, 0)) + "." + conn.QuoteIdent(t);
}

Status EnsurePublication(pg::Connection& conn, const Options& o) {
  CDC_ASSIGN_OR_RETURN(
      pg::PgResult r,
      conn.Exec("SELECT 1 FROM pg_publication WHERE pubname = " +
                conn.QuoteLiteral(o.publication)));
  if (r.rows() > 0) return Status::OK();
  std::string sql = "CREATE PUBLICATION " + conn.QuoteIdent(o.publication);
  if (o.tables.empty()) {
    sql += " FOR ALL TABLES";
  } else {
    sql += " FOR TABLE ";
    std::unique_ptr<pg::Connection> lookup;
    for (size_t i = 0; i < o.tables.size(); ++i) {
      CDC_ASSIGN_OR_RETURN(std::string name,
                           QualifiedTable(conn, &lookup, o, o.tables[i]));
      sql += (i ? ", " : "") + name;
    }
  }
  // Partitions report under their published root, as consumers expect.
  sql += " WITH (publish_via_partition_root = true";
  // From PostgreSQL 18 the values of stored generated columns can be sent.
  const bool generated = conn.ServerVersion() >= 180000;
  if (generated) sql += ", publish_generated_columns = stored";
  sql += ")";
  auto made = conn.Exec(sql);
  if (!made.ok() && made.status().code() == Code::kPermission)
    // The least-privilege role the README recommends may not create it:
    // say exactly what an administrator runs.
    return Status(Code::kPermission,
                  "cannot create publication " + o.publication + ": " +
                      made.status().message() +
                      "; have a superuser run, in this database: " + sql +
                      "; then start cdc-capture again");
  if (!made.ok())
    return made.status().Annotate("cannot create publication " + o.publication);
  // What --drop-slot looks for before it drops a publication: one made by
  // hand is never dropped by it.
  auto commented =
      conn.Exec("COMMENT ON PUBLICATION " + conn.QuoteIdent(o.publication) +
                " IS " + conn.QuoteLiteral(kPublicationComment));
  if (!commented.ok())
    LogWarning("cannot mark publication " + o.publication +
               " as cdc-capture's (--drop-slot will keep it): " +
               commented.status().message());
  if (!o.quiet)
    LogInfo("created publication " + o.publication + " (" +
            (o.tables.empty() ? "all tables" : "listed tables") +
            (generated ? ", stored generated columns" : "") + ")");
  return Status::OK();
}

std::string VersionText(int v) {
  return std::to_string(v / 10000) + "." + std::to_string(v % 100);
}

// A slot we create or find is synchronized to standbys when asked
// (PostgreSQL 17's FAILOVER); one that already is stays so.
Status EnsureFailover(pg::Connection& conn, const Options& o,
                      const std::string& failover) {
  if (!o.failover || failover == "t") return Status::OK();
  auto altered = conn.Exec("ALTER_REPLICATION_SLOT " + conn.QuoteIdent(o.slot) +
                           " (FAILOVER true)");
  if (!altered.ok())
    return altered.status().Annotate("cannot make replication slot " + o.slot +
                                     " a failover slot");
  if (!o.quiet)
    LogInfo("replication slot " + o.slot + " is now a failover slot");
  return Status::OK();
}

}  // namespace

Result<SlotState> PrepareSource(pg::Connection& conn, const Options& o,
                                log::LogWriter& writer) {
  const int version = conn.ServerVersion();
  if (o.failover && version < 170000)
    return Status::Config(
        "--failover needs PostgreSQL 17 or later (failover slots); the "
        "server is PostgreSQL " +
        VersionText(version));
  CDC_ASSIGN_OR_RETURN(pg::SystemIdentity sys, conn.IdentifySystem());
  log::SourceIdentity src{sys.system_id, sys.dbname, o.slot,
                          o.publication, "",         0};
  // What log.json says now, not what the writer read when it opened: the
  // first session of a new log records the source, and every reconnect
  // after it must see that.
  CDC_ASSIGN_OR_RETURN(log::LogIdentity id, log::ReadIdentity(o.log));
  if (id.source && !(*id.source == src)) {
    // A log that has never held a transaction (a first start that failed
    // before streaming, say on a misspelt slot) acknowledged nothing from
    // its recorded source, so it may take another.
    const auto& s = *id.source;
    if (writer.next_seq() > 1 || writer.has_commit())
      return Status::Config("log " + o.log + " belongs to " + s.Describe() +
                            ", not " + src.Describe() +
                            " (use another --log for this source)");
    if (!o.quiet)
      LogInfo("log " + o.log + " holds nothing from slot " + s.slot +
              "; recording slot " + o.slot + " as its source");
    CDC_RETURN_IF_ERROR(log::SetSource(o.log, &id, src));
  }
  if (!id.source) {
    if (writer.next_seq() > 1)
      return Status::Config("log " + o.log +
                            " holds imported events and no source; capture "
                            "needs an empty log or its own");
    CDC_RETURN_IF_ERROR(log::SetSource(o.log, &id, src));
  }
  CDC_RETURN_IF_ERROR(EnsurePublication(conn, o));

  // An initial snapshot goes only into a log that holds nothing yet.
  const bool log_empty = !writer.position().valid && writer.next_seq() == 1;
  bool redo = false;
  auto marked = ReadSnapshotMarker(o.log);
  if (marked.ok() && !log_empty) {
    // The snapshot was committed; only removing the marker was cut short.
    CDC_RETURN_IF_ERROR(RemoveSnapshotMarker(o.log));
  } else if (marked.ok()) {
    // Cut short: its exported snapshot died with the run, and nothing of
    // it is in the log (it is one transaction), so it starts over on a
    // fresh slot. WAIT: the walsender of the killed run may still be
    // letting go of the slot.
    redo = true;
    if (*marked != o.slot)
      return Status::Config("log " + o.log +
                            " holds an initial snapshot cut short that was "
                            "taken for slot " +
                            *marked + ", not " + o.slot + " (use --slot " +
                            *marked + ")");
    LogWarning(
        "the initial snapshot of an earlier run did not complete; "
        "taking it again on a new slot " +
        o.slot);
    CDC_ASSIGN_OR_RETURN(
        pg::PgResult old,
        conn.Exec("SELECT 1 FROM pg_replication_slots WHERE slot_name = " +
                  conn.QuoteLiteral(o.slot)));
    if (old.rows() > 0) {
      auto dropped = conn.Exec("DROP_REPLICATION_SLOT " +
                               conn.QuoteIdent(o.slot) + " WAIT");
      if (!dropped.ok())
        return dropped.status().Annotate("cannot drop replication slot " +
                                         o.slot + " of the snapshot cut short");
    }
  } else if (marked.status().code() != Code::kNotFound) {
    return marked.status();
  }

  SlotState st;
  CDC_ASSIGN_OR_RETURN(
      pg::PgResult slot,
      conn.Exec(std::string("SELECT plugin, database, confirmed_flush_lsn, "
                            "pg_current_wal_flush_lsn(), ") +
                (version >= 170000 ? "failover" : "false") +
                " FROM pg_replication_slots WHERE slot_name = " +
                conn.QuoteLiteral(o.slot)));
  if (slot.rows() == 0) {
    st.snapshot = o.snapshot == "initial" && log_empty;
    if (st.snapshot) CDC_RETURN_IF_ERROR(WriteSnapshotMarker(o.log, o.slot));
    std::string how;
    if (o.failover)
      how = st.snapshot ? " LOGICAL pgoutput (SNAPSHOT 'export', FAILOVER true)"
                        : " LOGICAL pgoutput (SNAPSHOT 'nothing', FAILOVER "
                          "true)";
    else
      how = st.snapshot ? " LOGICAL pgoutput EXPORT_SNAPSHOT"
                        : " LOGICAL pgoutput NOEXPORT_SNAPSHOT";
    CDC_ASSIGN_OR_RETURN(
        pg::PgResult made,
        conn.Exec("CREATE_REPLICATION_SLOT " + conn.QuoteIdent(o.slot) + how));
    st.created = true;
    CDC_ASSIGN_OR_RETURN(
        st.confirmed_flush,
        pg::ParseReplyLsn(made.get(0, 1), "CREATE_REPLICATION_SLOT position"));
    if (!o.quiet)
      LogInfo(std::string("created ") + (o.failover ? "failover " : "") +
              "replication slot " + o.slot + " at " +
              FormatLsn(st.confirmed_flush));
    if (st.snapshot) {
      // The exported snapshot lives until this connection runs another
      // command: the snapshot phase finds the server's position.
      st.snapshot_name = made.get(0, 2);
      st.server_lsn = st.confirmed_flush;
      if (st.snapshot_name.empty())
        return Status::BadInput(
            "unexpected reply from PostgreSQL: CREATE_REPLICATION_SLOT "
            "exported no snapshot");
      return st;  // an empty log: no gap to check
    }
    CDC_ASSIGN_OR_RETURN(pg::PgResult now,
                         conn.Exec("SELECT pg_current_wal_flush_lsn()"));
    CDC_ASSIGN_OR_RETURN(
        st.server_lsn,
        pg::ParseReplyLsn(now.get(0, 0), "pg_current_wal_flush_lsn()"));
  } else {
    if (redo)
      return Status::Internal("replication slot " + o.slot +
                              " still exists after it was dropped");
    if (slot.get(0, 0) != "pgoutput" || slot.get(0, 1) != sys.dbname)
      return Status::Config("replication slot " + o.slot + " uses plugin " +
                            slot.get(0, 0) + " on database " + slot.get(0, 1) +
                            "; cdc needs pgoutput on " + sys.dbname);
    if (!slot.is_null(0, 2)) {
      CDC_ASSIGN_OR_RETURN(
          st.confirmed_flush,
          pg::ParseReplyLsn(slot.get(0, 2), "the slot's confirmed_flush_lsn"));
    }
    CDC_ASSIGN_OR_RETURN(
        st.server_lsn,
        pg::ParseReplyLsn(slot.get(0, 3), "pg_current_wal_flush_lsn()"));
    CDC_RETURN_IF_ERROR(EnsureFailover(conn, o, slot.get(0, 4)));
  }

  // The log records every position we acknowledged (docs/invariants.md,
  // invariant 2), so a slot ahead of it means changes nobody wrote here: a
  // restored old backup, or another consumer of the slot.
  const log::SourcePosition pos = writer.position();
  if (pos.valid && pos.exclusive && st.confirmed_flush == pos.lsn + 1) {
    // cdc-capture 0.1.0 acknowledged a lone message's LSN + 1; PostgreSQL
    // then skipped a transaction committed exactly at that LSN, if any.
    LogWarning("slot " + o.slot + " confirmed " +
               FormatLsn(st.confirmed_flush) + ", one past the log's last " +
               "message at " + FormatLsn(pos.lsn) +
               " (acknowledged so by cdc-capture 0.1.0): a transaction whose "
               "commit record started exactly at " +
               FormatLsn(pos.lsn) + ", if there was one, is not in the log");
  } else if (pos.valid && st.confirmed_flush > pos.FlushLsn()) {
    std::string msg =
        "gap: log " + o.log + " ends at " + FormatLsn(pos.lsn) + " but slot " +
        o.slot + " has confirmed up to " + FormatLsn(st.confirmed_flush) +
        "; the changes in between are gone from the slot. Restore a newer "
        "backup of the log, start a new log with a new slot, or pass "
        "--accept-gap to continue with the gap";
    if (!o.accept_gap) {
      // A slot made just now would only hold WAL on the server while
      // capture stays stopped for the operator's decision.
      if (st.created) {
        auto dropped =
            conn.Exec("DROP_REPLICATION_SLOT " + conn.QuoteIdent(o.slot));
        msg += dropped.ok() ? " (the slot created just now was dropped)"
                            : " (the slot created just now could not be "
                              "dropped: " +
                                  dropped.status().message() + ")";
      }
      return Status::Gap(msg);
    }
    LogWarning(msg + " (accepted)");
  }
  return st;
}

Status LoadTypeCatalog(pg::Connection& conn, pg::TypeCatalog* catalog) {
  CDC_ASSIGN_OR_RETURN(
      pg::PgResult r,
      conn.Exec("SELECT oid, typtype, typbasetype, typelem FROM pg_type "
                "WHERE oid >= 16384 AND (typtype = 'd' OR typelem <> 0) "
                "AND typdelim = ','"));
  for (int i = 0; i < r.rows(); ++i) {
    CDC_ASSIGN_OR_RETURN(uint32_t oid,
                         pg::ParseReplyUint32(r.get(i, 0), "pg_type.oid"));
    if (r.get(i, 1) == "d") {
      CDC_ASSIGN_OR_RETURN(catalog->domain_base[oid],
                           pg::ParseReplyUint32(r.get(i, 2), "typbasetype"));
    } else {
      CDC_ASSIGN_OR_RETURN(catalog->array_element[oid],
                           pg::ParseReplyUint32(r.get(i, 3), "typelem"));
    }
  }
  return Status::OK();
}

void TypeLookup::Connect() {
  if (conn_ != nullptr) return;
  auto c = pg::Connection::Connect(dsn_, false);
  if (c.ok()) conn_ = std::move(c).value();
}

void TypeLookup::Adopt(std::unique_ptr<pg::Connection> conn) {
  if (conn_ == nullptr) conn_ = std::move(conn);
}

Result<pg::PgResult> TypeLookup::Query(const std::string& sql,
                                       const std::vector<std::string>& params) {
  // A connection kept from earlier may have died with a restart of the
  // server since (the replication connection, which reconnected, is how we
  // got here): one new connection is tried before giving up.
  for (int attempt = 0;; ++attempt) {
    const bool fresh = conn_ == nullptr;
    if (fresh) {
      CDC_ASSIGN_OR_RETURN(conn_, pg::Connection::Connect(dsn_, false));
    }
    auto r = conn_->ExecParams(sql, params);
    if (r.ok()) return r;
    conn_.reset();
    if (fresh || attempt > 0) return r.status();
  }
}

Status TypeLookup::Lookup(uint32_t oid, pg::TypeCatalog* catalog) {
  if (catalog->domain_base.count(oid) || catalog->array_element.count(oid))
    return Status::OK();
  auto r = Query(
      "SELECT typtype, typbasetype, typelem, typdelim FROM pg_type WHERE "
      "oid = $1",
      {std::to_string(oid)});
  if (!r.ok()) return r.status();
  if (r->rows() == 0)
    return Status::NotFound("type OID " + std::to_string(oid) +
                            " no longer exists");
  uint32_t next = 0;
  if (r->get(0, 0) == "d") {
    CDC_ASSIGN_OR_RETURN(next,
                         pg::ParseReplyUint32(r->get(0, 1), "typbasetype"));
    catalog->domain_base[oid] = next;
  } else if (r->get(0, 2) != "0" && r->get(0, 3) == ",") {
    CDC_ASSIGN_OR_RETURN(next, pg::ParseReplyUint32(r->get(0, 2), "typelem"));
    catalog->array_element[oid] = next;
  }
  // A domain over a new array or domain type, or an array of a new domain.
  if (next >= 16384 && next != oid) return Lookup(next, catalog);
  return Status::OK();
}

Result<std::vector<std::string>> TypeLookup::GeneratedColumns(
    uint32_t rel_oid) {
  auto r = Query(
      "SELECT attname FROM pg_attribute WHERE attrelid = $1 AND attnum > 0 "
      "AND NOT attisdropped AND attgenerated <> '' ORDER BY attnum",
      {std::to_string(rel_oid)});
  if (!r.ok()) return r.status();
  std::vector<std::string> names;
  for (int i = 0; i < r->rows(); ++i) names.push_back(r->get(i, 0));
  return names;
}

Status DropSource(const Options& o) {
  CDC_ASSIGN_OR_RETURN(log::LogIdentity id, log::ReadIdentity(o.log));
  if (!id.source)
    return Status::Config("log " + o.log +
                          " records no source: no slot of it to drop");
  const log::SourceIdentity& src = *id.source;
  if (src.slot != o.slot || src.publication != o.publication)
    return Status::Config("log " + o.log + " was captured through slot " +
                          src.slot + " and publication " + src.publication +
                          ", not slot " + o.slot + " and publication " +
                          o.publication + " (give --slot " + src.slot +
                          " --publication " + src.publication + ")");
  // No capture may run on the log meanwhile (it would recreate the slot).
  auto lock = log::WriterLock::Acquire(o.log);
  if (!lock.ok() && lock.status().code() == Code::kBusy)
    return Status::Busy("log " + o.log +
                        " is in use (a cdc-capture runs on it); stop it "
                        "before --drop-slot");
  CDC_RETURN_IF_ERROR(lock.status());
  CDC_ASSIGN_OR_RETURN(auto conn, pg::Connection::Connect(o.dsn, true));
  CDC_ASSIGN_OR_RETURN(pg::SystemIdentity sys, conn->IdentifySystem());
  if (sys.system_id != src.system_id || sys.dbname != src.database)
    return Status::Config("log " + o.log + " belongs to system " +
                          src.system_id + " database " + src.database +
                          ", not system " + sys.system_id + " database " +
                          sys.dbname + " (--dsn names another source)");
  CDC_ASSIGN_OR_RETURN(
      pg::PgResult slot,
      conn->Exec("SELECT active_pid FROM pg_replication_slots WHERE "
                 "slot_name = " +
                 conn->QuoteLiteral(o.slot)));
  if (slot.rows() == 0) {
    if (!o.quiet) LogInfo("replication slot " + o.slot + " does not exist");
  } else {
    if (!slot.is_null(0, 0))
      return Status::Busy("replication slot " + o.slot +
                          " is in use by server process " + slot.get(0, 0) +
                          "; stop the client streaming from it first");
    auto dropped =
        conn->Exec("DROP_REPLICATION_SLOT " + conn->QuoteIdent(o.slot));
    if (!dropped.ok())
      return dropped.status().Annotate("cannot drop replication slot " +
                                       o.slot);
    if (!o.quiet) LogInfo("dropped replication slot " + o.slot);
  }
  CDC_ASSIGN_OR_RETURN(
      pg::PgResult pub,
      conn->Exec("SELECT pg_catalog.obj_description(oid, 'pg_publication') "
                 "FROM pg_catalog.pg_publication WHERE pubname = " +
                 conn->QuoteLiteral(o.publication)));
  if (pub.rows() == 0) {
    if (!o.quiet) LogInfo("publication " + o.publication + " does not exist");
  } else if (pub.is_null(0, 0) || pub.get(0, 0) != kPublicationComment) {
    if (!o.quiet)
      LogInfo("publication " + o.publication +
              " was not created by cdc-capture: kept (DROP PUBLICATION " +
              conn->QuoteIdent(o.publication) + " drops it)");
  } else {
    auto dropped =
        conn->Exec("DROP PUBLICATION " + conn->QuoteIdent(o.publication));
    if (!dropped.ok())
      return dropped.status().Annotate("cannot drop publication " +
                                       o.publication);
    if (!o.quiet) LogInfo("dropped publication " + o.publication);
  }
  return Status::OK();
}

}  // namespace cdc::capture
