// Full integrity check of a log: every frame's checksum and payload, seq
// continuity within and across segments, commit LSN order, and each sealed
// segment against its seal record (size, seq range, SHA-256).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cdc/base/status.h"

namespace cdc::log {

struct VerifyReport {
  uint64_t segments = 0;
  uint64_t frames = 0;
  uint64_t events = 0;
  uint64_t bytes = 0;
  uint64_t first_seq = 0;
  uint64_t next_seq = 0;
  std::vector<std::string> problems;  // each one line; any makes it fail
  std::vector<std::string> notes;     // expected states, e.g. a torn tail
  bool ok() const { return problems.empty(); }
};

// `progress(done_bytes, total_bytes)` is called after each segment.
// A non-OK status means verification could not run (log missing, I/O).
Result<VerifyReport> VerifyLog(
    const std::string& dir,
    const std::function<void(uint64_t, uint64_t)>& progress = nullptr);

}  // namespace cdc::log
