// --tx-markers: a BEGIN line before the first printed event of each source
// transaction and an END line after its last event (printed or not), with
// the number of events printed in it and per table, as Debezium's
// transaction metadata topic has them:
//
//   {"status":"BEGIN","id":"XID:LSN","ts_ms":T,"event_count":null,
//    "data_collections":null}
//   {"status":"END","id":"XID:LSN","ts_ms":T,"event_count":N,
//    "data_collections":[{"data_collection":"schema.table",
//    "event_count":K},...]}
//
// id is the transaction's xid and commit LSN (decimal), ts_ms its commit
// time. With --format cloudevents each marker is the "data" of a CloudEvent
// of type io.cdc.postgresql.begin or .end, id LOG_ID-SEQ-begin (SEQ of the
// first event printed) or LOG_ID-SEQ-end (SEQ of the transaction's last).
// A transaction none of whose events is printed gets no markers; one whose
// start the read did not see (it began inside it) gets none either, and
// one cut off by --to or -n gets no END. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/event/renderer.h"

namespace cdc::event {

class TxMarkers {
 public:
  TxMarkers(Format format, const SourceInfo& source);

  // As Renderer::Restart.
  void Restart(bool at_transaction_start) { at_start_ = at_transaction_start; }

  // Call for every event read, before its output: appends BEGIN to `out`
  // when `printed` and it is the first printed event of its transaction.
  Status Before(uint64_t seq, std::string_view stored, bool printed,
                std::string* out);
  // Call after the event's output: appends END after the last event of a
  // transaction that had a BEGIN.
  void After(uint64_t seq, bool last, std::string* out);

 private:
  void AppendMarker(bool begin, uint64_t seq, std::string* out) const;

  const bool cloudevents_;
  std::string ce_head_;  // {"specversion":"1.0","id":"LOGID-
  std::string ce_source_;
  std::string log_id_;
  bool at_start_ = false;
  bool in_txn_ = false;
  bool known_ = false;
  bool begun_ = false;
  uint64_t count_ = 0;
  std::string id_;  // "XID:LSN"
  int64_t ts_ms_ = 0;
  std::string ts_;  // the commit time as stored ("...Z", quoted)
  std::vector<std::pair<std::string, uint64_t>> collections_;
};

}  // namespace cdc::event
