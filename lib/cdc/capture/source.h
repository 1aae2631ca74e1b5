// Preparing a replication connection: checking the log belongs to this
// source, creating the publication and slot when missing, the gap check,
// and the pg_type facts the type renderers need.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"
#include "cdc/capture/options.h"
#include "cdc/log/writer.h"
#include "cdc/pg/conn.h"
#include "cdc/pg/types.h"

namespace cdc::capture {

struct SlotState {
  bool created = false;  // we created it just now
  Lsn confirmed_flush = 0;
  Lsn server_lsn = 0;  // pg_current_wal_lsn() when we connected
  // An initial snapshot is to be taken: the slot was created just now with
  // this exported snapshot, and the replication connection must stay idle
  // until it has been copied.
  bool snapshot = false;
  std::string snapshot_name;
};

// Checks (and on first use records) the log's source identity, ensures the
// publication and slot exist, and refuses a gap between the log and the
// slot unless opts.accept_gap. Config for another source's log or a slot of
// another plugin or database; Gap (exit 11) with the operator's options.
// With opts.snapshot "initial" and a log that holds nothing, a slot it
// creates exports its snapshot (the last command on `conn`); a snapshot
// marker left by a run cut short (see snapshot.h) makes it drop the slot
// that marker names and start over.
Result<SlotState> PrepareSource(pg::Connection& conn, const Options& opts,
                                log::LogWriter& writer);

// cdc-capture --drop-slot: the clean-up after a capture is retired. Holds
// the log's writer lock (Busy, exit 75, while a capture runs on it), checks
// that opts.dsn is the source the log records and that opts.slot and
// opts.publication are its names (Config otherwise), then drops the slot
// (Busy when another process streams from it; a missing slot is noted) and
// the publication when cdc-capture created it (its comment says so; one
// an administrator created is kept, and said so). The log is left as it is:
// a capture started on it again creates a new slot and stops at the gap
// (exit 11) unless told --accept-gap.
Status DropSource(const Options& opts);

// Loads domains' base types and arrays of non-built-in element types.
Status LoadTypeCatalog(pg::Connection& conn, pg::TypeCatalog* catalog);

// Catalog lookups while streaming, on a plain connection opened before
// streaming (Connect) or kept from the initial snapshot (Adopt), else on
// first use: they see the catalog as it is now, not as it was at the
// change.
class TypeLookup {
 public:
  explicit TypeLookup(std::string dsn) : dsn_(std::move(dsn)) {}
  // Opens the connection now if none is open, so that the first lookup
  // (a table's first change after a start) does not wait for it: about
  // 20 ms on a busy 2-core machine, held against every transaction behind
  // it. Best effort: a lookup connects again if this failed.
  void Connect();
  // Keeps `conn` (a plain connection to the same server, idle) as the
  // lookups' connection, unless one is open already.
  void Adopt(std::unique_ptr<pg::Connection> conn);
  // Looks one type up (a Type message named a type created after we
  // connected). NotFound if it no longer exists (dropped since).
  Status Lookup(uint32_t oid, pg::TypeCatalog* catalog);
  // The stored generated columns of a table, in column order (none if it
  // no longer exists).
  Result<std::vector<std::string>> GeneratedColumns(uint32_t rel_oid);

 private:
  // Runs a query, connecting first if needed, and once more on a new
  // connection when the one kept from earlier fails.
  Result<pg::PgResult> Query(const std::string& sql,
                             const std::vector<std::string>& params);

  std::string dsn_;
  std::unique_ptr<pg::Connection> conn_;
};

}  // namespace cdc::capture
