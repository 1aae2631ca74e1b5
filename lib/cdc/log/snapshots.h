// LOG/snapshots/: requests for incremental snapshots and their progress.
//
// `cdc-log snapshot --table S.T` writes a request (state "pending");
// cdc-capture picks it up, reads the table in key order, chunk by chunk,
// between watermarks it writes into the stream (see cdc-capture(1),
// "Incremental snapshots"), and rewrites the file as chunks become durable
// in the log ("running", then "done" or "failed"). One JSON object a file,
// written atomically (temporary file, fsync, rename, directory fsync):
//
//   {"id":"20261201T221500Z-3f2a91","schema":"public","table":"big",
//    "chunk_rows":1024,"requested":"2026-12-01T22:15:00.123456Z",
//    "state":"running","error":"","estimate":1000000,"chunks":12,
//    "rows":12288,"last_key":["12288"],"seq":40211,
//    "updated":"2026-12-01T22:15:03.000000Z"}
//
// "last_key" holds the text forms of the primary key of the last row read
// (null before the first chunk); "seq" the log seq of the watermark event
// that recorded it. The file may lag the log by the chunks written since
// (the log is the truth: capture reads the watermarks after "seq" when it
// starts again). Ids sort in request order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"

namespace cdc::log {

inline constexpr const char* kSnapshotsDir = "snapshots";
// The prefix of the logical decoding messages that bound a chunk.
inline constexpr const char* kWatermarkPrefix = "cdc.snapshot";
inline constexpr uint32_t kDefaultChunkRows = 1024;
inline constexpr uint32_t kMaxChunkRows = 1000000;

struct IncrementalSnapshot {
  std::string id;
  std::string schema, table;
  uint32_t chunk_rows = kDefaultChunkRows;
  std::string requested;  // RFC 3339
  std::string state = "pending";
  std::string error;
  uint64_t estimate = 0;
  uint64_t chunks = 0;
  uint64_t rows = 0;
  std::optional<std::vector<std::string>> last_key;
  uint64_t seq = 0;
  std::string updated;

  bool finished() const { return state == "done" || state == "failed"; }
  std::string QualifiedName() const { return schema + "." + table; }
};

// True for a request id as NewId makes them (letters, digits and '-', at
// most 64): LOG/snapshots/ID.json is then a request's file.
bool IsSnapshotId(std::string_view id);

std::string IncrementalSnapshotJson(const IncrementalSnapshot& s);
// Corruption naming `what` when `text` is not such an object.
Result<IncrementalSnapshot> ParseIncrementalSnapshot(const std::string& text,
                                                     const std::string& what);

// Splits SCHEMA.TABLE; either part may be double-quoted ("my.schema".t,
// with "" for a quote inside). Usage error naming --table otherwise.
Result<std::pair<std::string, std::string>> ParseTableName(
    const std::string& text);

// Writes a new request for `schema`.`table` into the log at `dir` (which
// must exist). `now_us`: µs since the epoch.
Result<IncrementalSnapshot> RequestIncrementalSnapshot(
    const std::string& dir, const std::string& schema, const std::string& table,
    uint32_t chunk_rows, int64_t now_us);

// Every request of the log, in request order (none without the folder).
Result<std::vector<IncrementalSnapshot>> ListIncrementalSnapshots(
    const std::string& dir);
Result<IncrementalSnapshot> ReadIncrementalSnapshot(const std::string& dir,
                                                    const std::string& id);
Status WriteIncrementalSnapshot(const std::string& dir,
                                const IncrementalSnapshot& s);

}  // namespace cdc::log
