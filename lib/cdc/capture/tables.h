// The published tables as the snapshots read them: which they are, how
// pgoutput describes each, and the COPY that reads its rows (the initial
// snapshot reads whole tables; an incremental one reads a chunk in key
// order). Queries over a plain connection (pg::Connection).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/pg/conn.h"
#include "cdc/pg/pgoutput.h"

namespace cdc::capture {

struct Table {
  pg::Oid oid = 0;
  std::string schema, name;
  char replica_identity = 'd';
  char kind = 'r';        // pg_class.relkind: 'r' table, 'p' partitioned
  std::string attnames;   // published columns, as name[] text
  std::string rowfilter;  // the publication's WHERE, or empty
  // pg_class.reltuples (summed over a partitioned table's leaves); 0 when
  // unknown: never analysed (-1, or 0 before PostgreSQL 14) or empty.
  uint64_t estimate = 0;
};

// How a progress line shows an estimate of rows: "~1234", or "estimate
// unknown" for 0 (a table never analysed says 0 or -1, not its size).
std::string EstimateText(uint64_t estimate);

// The tables of `publication`, by schema and name.
Result<std::vector<Table>> ListTables(pg::Connection& conn,
                                      const std::string& publication);

// The table as pgoutput's Relation message describes it (logicalrep_write_
// attrs): published columns in attnum order, each flagged as key when part
// of the replica identity (every column under FULL). `generated[i]` tells
// whether column i is generated; `generated_published`: PostgreSQL 18's
// publication sends stored generated columns.
Result<pg::Relation> DescribeTable(pg::Connection& conn, const Table& t,
                                   bool generated_published,
                                   std::vector<bool>* generated);

// The table's generated columns, as streaming names them in its schema
// event (TypeLookup::GeneratedColumns), so both describe it alike.
Result<std::vector<std::string>> GeneratedNames(pg::Connection& conn,
                                                pg::Oid oid);

// COPY ... TO STDOUT of every row the publication sends of `t`, in binary
// format when `binary` (see pg/copy_binary.h), else in text format.
std::string CopySql(pg::Connection& conn, const Table& t,
                    const pg::Relation& rel, const std::vector<bool>& generated,
                    bool binary);

// A table's primary key: its columns in key order, with the SQL type of
// each (format_type) for literals of it, and their positions in `rel`.
struct PrimaryKey {
  std::vector<std::string> names, types;
  std::vector<size_t> columns;  // indexes into Relation::columns
};
// NotFound when the table has no primary key; Usage when a key column is
// not published (a column list leaves it out).
Result<PrimaryKey> LookupPrimaryKey(pg::Connection& conn, const Table& t,
                                    const pg::Relation& rel);

// COPY (SELECT the published columns ... WHERE key > `after` ORDER BY key
// LIMIT `limit`) TO STDOUT: the next chunk of an incremental snapshot.
// `after` holds the key's values in text form (none: from the start).
std::string ChunkSql(pg::Connection& conn, const Table& t,
                     const pg::Relation& rel, const PrimaryKey& key,
                     const std::optional<std::vector<std::string>>& after,
                     uint32_t limit);

}  // namespace cdc::capture
