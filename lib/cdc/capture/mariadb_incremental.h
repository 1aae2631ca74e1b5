// MariaDB's side of incremental snapshots (incremental.h). MariaDB has no
// logical messages, so a watermark is a row of the signal table capture
// owns, `DB.cdc_watermark` in the captured database:
//
//   CREATE TABLE cdc_watermark (capture VARCHAR(64) PRIMARY KEY,
//                               watermark TEXT NOT NULL,
//                               writes BIGINT UNSIGNED NOT NULL)
//
// created on first use, one row per log (its id), rewritten for each
// watermark (`writes` counts them, so every write changes the row and
// reaches the binlog). The stream turns the row's new value into the
// watermark; the table's changes are never events of their own, and the
// table is never selected (initial snapshot, --table globs).
//
// A chunk is one short transaction: START TRANSACTION, a SELECT of the
// table (its metadata lock holds off DDL until the commit), the table
// described by information_schema, SELECT ... FORCE INDEX (PRIMARY) WHERE
// key > last ORDER BY key LIMIT n over the binary protocol, the high
// watermark, COMMIT. Rows are rendered on the worker thread by the
// initial snapshot's code, so a row reads the same through every path.
//
// Keys: integers, DECIMAL, FLOAT, DOUBLE, temporal types and text or
// binary strings. ENUM, SET, BIT, GEOMETRY, UUID and INET keys are
// refused (their order is not their value's). last_key holds integers,
// decimals and floats as digits, times as text, and strings as the hex of
// their stored bytes.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "cdc/capture/incremental.h"
#include "cdc/mariadb/conn.h"

namespace cdc::capture {

inline constexpr const char* kMariaSignalTable = "cdc_watermark";

// What the stream's transaction gives the rows a chunk renders, read on
// the capture thread when a high watermark arrives.
struct MariaStreamContext {
  const std::string* head = nullptr;  // {"lsn":..,"xid":..,"ts":..,"op":"
  const std::string* tail = nullptr;  // ,"gtid":..,"file":..,"pos":..}
  // Schema events the stream has shown, names to shape.
  std::map<std::string, std::string>* known_shapes = nullptr;
};

// `log_id` names the signal table's row; `selected` says whether capture
// reads a table of dsn.database (--table).
std::unique_ptr<ChunkSource> MakeMariaChunkSource(
    const mariadb::Dsn& dsn, std::string log_id,
    std::function<bool(const std::string& table)> selected,
    MariaStreamContext stream);

// The watermark in a row of the signal table, as the binlog path renders
// the row's values (JSON, in column order): its content when the row is
// `log_id`'s, else empty.
std::string SignalContent(const std::vector<mariadb::Column>& columns,
                          const std::vector<std::string>& values,
                          const std::string& log_id);

}  // namespace cdc::capture
