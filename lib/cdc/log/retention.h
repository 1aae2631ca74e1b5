// Retention: deletes whole sealed segments, oldest first, never the newest.
//
// It does not wait for consumers: a consumer whose next event is removed is
// expired until an operator seeks it (docs/invariants.md, invariant 5).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/log/segment.h"

namespace cdc::log {

struct RetentionPolicy {
  uint64_t max_bytes = 0;     // keep the log at most this large (0: no limit)
  int64_t max_age_us = 0;     // drop segments whose newest commit is older
  uint64_t max_segments = 0;  // keep at most this many segments
  bool any() const { return max_bytes || max_age_us || max_segments; }
};

struct RetentionResult {
  std::vector<SegmentInfo> removed;
  uint64_t bytes_removed = 0;
  uint64_t first_seq = 0;  // earliest retained seq afterwards
  bool pinned = false;     // a running backup pinned the log: none removed
};

// With `dry_run`, reports what would be removed and removes nothing.
// While a backup pins the log (log/pin.h) nothing is removed and `pinned`
// is set; the next pass removes what is still due.
Result<RetentionResult> ApplyRetention(const std::string& dir,
                                       const RetentionPolicy& policy,
                                       int64_t now_us, bool dry_run);

}  // namespace cdc::log
