// Places in the log as users name them: earliest | latest (or now) | SEQ |
// -N (the last N events, as kcat's -o -N) | lsn:X/Y | time:ISO |
// time:-DURATION (that long before now: time:-1h) -- the --from, --to and
// --seek values of every reader.
#pragma once

#include <cstdint>
#include <string>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"
#include "cdc/log/reader.h"

namespace cdc::consume {

struct Position {
  enum class Kind {
    kEarliest,
    kLatest,
    kSeq,
    kLsn,
    kTime,
    kBeforeEnd  // `seq` events before the end
  } kind = Kind::kEarliest;
  uint64_t seq = 0;
  Lsn lsn = 0;
  int64_t time = 0;  // µs since the Unix epoch
};

// The largest seq a position or an ack may name: cursors are SQLite's
// signed 64-bit integers, so a larger one is no seq at all.
inline constexpr uint64_t kMaxSeq = INT64_MAX;

// Usage error naming the accepted forms when `text` is none of them (a SEQ
// is decimal digits, 1 to kMaxSeq).
Result<Position> ParsePosition(const std::string& text);
// Positions `r` so the next event returned is the first at or after `p`.
Status SeekTo(log::LogReader& r, const Position& p);
// Seq of the first event at or after `p` (one past the end for latest).
Result<uint64_t> ResolvePosition(const std::string& dir, const Position& p);

}  // namespace cdc::consume
