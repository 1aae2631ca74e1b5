#include "cdc/event/tx_markers.h"

#include "cdc/base/time.h"
#include "cdc/event/formats.h"
#include "cdc/event/json_text.h"
#include "cdc/event/stored.h"

namespace cdc::event {

TxMarkers::TxMarkers(Format format, const SourceInfo& source)
    : cloudevents_(format == Format::kCloudEvents) {
  ce_head_ = "{\"specversion\":\"1.0\",\"id\":";
  ce_source_ = ",\"source\":";
  AppendJsonStringUnchecked(CloudEventsSource(source), &ce_source_);
  log_id_ = source.log_id;
}

Status TxMarkers::Before(uint64_t seq, std::string_view stored, bool printed,
                         std::string* out) {
  if (!in_txn_) {
    in_txn_ = true;
    known_ = at_start_;
    begun_ = false;
    count_ = 0;
    collections_.clear();
  }
  if (!printed || !known_) return Status::OK();
  StoredFields f;
  CDC_RETURN_IF_ERROR(ScanStored(stored, &f));
  if (!begun_) {
    begun_ = true;
    id_ = std::to_string(f.xid_value) + ":" + std::to_string(f.lsn_value);
    auto ts = ParseTimestamp(f.ts.substr(1, f.ts.size() - 2));
    ts_ms_ = ts.ok() ? *ts / 1000 : 0;
    ts_.assign(f.ts);
    AppendMarker(true, seq, out);
  }
  ++count_;
  std::string name;
  if (!f.schema.empty() && !f.table.empty() &&
      AppendQualifiedName(f.schema, f.table, &name)) {
    for (auto& [n, k] : collections_) {
      if (n == name) {
        ++k;
        return Status::OK();
      }
    }
    collections_.emplace_back(std::move(name), 1);
  }
  return Status::OK();
}

void TxMarkers::After(uint64_t seq, bool last, std::string* out) {
  if (!last) return;
  if (begun_) AppendMarker(false, seq, out);
  in_txn_ = false;
  begun_ = false;
  at_start_ = true;
}

void TxMarkers::AppendMarker(bool begin, uint64_t seq, std::string* out) const {
  if (cloudevents_) {
    out->append(ce_head_);
    AppendJsonStringUnchecked(
        log_id_ + "-" + std::to_string(seq) + (begin ? "-begin" : "-end"), out);
    out->append(ce_source_);
    out->append(begin ? ",\"type\":\"io.cdc.postgresql.begin\""
                      : ",\"type\":\"io.cdc.postgresql.end\"");
    out->append(",\"time\":");
    out->append(ts_);
    out->append(",\"datacontenttype\":\"application/json\",\"data\":");
  }
  out->append(begin ? "{\"status\":\"BEGIN\",\"id\":\""
                    : "{\"status\":\"END\",\"id\":\"");
  out->append(id_);
  out->append("\",\"ts_ms\":");
  out->append(std::to_string(ts_ms_));
  if (begin) {
    out->append(",\"event_count\":null,\"data_collections\":null}");
  } else {
    out->append(",\"event_count\":");
    out->append(std::to_string(count_));
    out->append(",\"data_collections\":[");
    for (size_t i = 0; i < collections_.size(); ++i) {
      if (i > 0) out->push_back(',');
      out->append("{\"data_collection\":");
      out->append(collections_[i].first);
      out->append(",\"event_count\":");
      out->append(std::to_string(collections_[i].second));
      out->push_back('}');
    }
    out->append("]}");
  }
  out->append(cloudevents_ ? "}\n" : "\n");
}

}  // namespace cdc::event
