#include "cdc/capture/status.h"

#include <algorithm>

namespace cdc::capture {

StandbyStatus StatusFor(const log::LogWriter& writer, Lsn received) {
  StandbyStatus st;
  st.flush = writer.durable_flush_lsn();
  st.write = std::max(received, st.flush);
  return st;
}

}  // namespace cdc::capture
