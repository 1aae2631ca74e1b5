// A writer that appends at a fixed rate, shared by bench/log's programs
// that time followers.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

#include "cdc/base/status.h"
#include "cdc/base/time.h"
#include "cdc/log/writer.h"

namespace cdc_bench {

// Appends `total` events at `rate` events/s in `rows`-event transactions
// (transaction t commits at LSN t*64), asking for a sync every millisecond
// as capture's group commit does, then syncs. `line(txn, i)` makes row i of
// transaction txn, when it is due. Returns the seconds it took.
template <typename LineFn>
cdc::Result<double> AppendPaced(cdc::log::LogWriter& w, uint64_t total,
                                int rate, int rows, LineFn&& line) {
  const int64_t start = cdc::MonoMicros();
  int64_t last_sync = start;
  for (uint64_t seq = 0, txn = 1; seq < total; ++txn) {
    const int64_t due = start + static_cast<int64_t>(seq * 1e6 / rate);
    int64_t now = cdc::MonoMicros();
    if (due > now)
      std::this_thread::sleep_for(std::chrono::microseconds(due - now));
    for (int i = 0; i < rows; ++i, ++seq)
      CDC_RETURN_IF_ERROR(w.Append(line(txn, i)));
    CDC_RETURN_IF_ERROR(w.Commit(txn * 64, 0, txn));
    now = cdc::MonoMicros();
    if (now - last_sync >= 1000) {
      CDC_RETURN_IF_ERROR(w.RequestSync());
      last_sync = now;
    }
  }
  CDC_RETURN_IF_ERROR(w.Sync());
  return (cdc::MonoMicros() - start) / 1e6;
}

}  // namespace cdc_bench
