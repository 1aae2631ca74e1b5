#include "cdc/nats/target.h"

#include "cdc/base/logging.h"

namespace cdc::nats {

Target::Target(ConnectOptions co, StreamOptions so, SinkOptions sk,
               std::unique_ptr<event::Renderer> r, Connector connect)
    : co_(std::move(co)),
      so_(std::move(so)),
      sink_(std::move(sk), std::move(r)),
      connect_(std::move(connect)) {
  if (!connect_) connect_ = &Client::Open;
}

// The client reconnects by itself, and the sink keeps what it has not
// stored and resyncs on its own: after the first Open only a stream
// never read is read again. Events submitted again are skipped.
Result<std::optional<uint64_t>> Target::Open() {
  if (client_ == nullptr) {
    CDC_ASSIGN_OR_RETURN(std::unique_ptr<Client> c, connect_(co_));
    CDC_ASSIGN_OR_RETURN(StreamEnd end, c->EnsureStream(so_));
    if (end.created)
      LogInfo("created stream " + so_.name + " (" +
              std::to_string(so_.replicas) + " replicas)");
    client_ = std::move(c);
  }
  if (!resumed_) {
    CDC_ASSIGN_OR_RETURN(std::optional<uint64_t> stored,
                         sink_.Resume(*client_));
    resumed_ = true;
    return stored;
  }
  return std::optional<uint64_t>(sink_.acked_seq());
}

Status Target::Submit(const consume::SinkBatch& b) {
  return sink_.Add(*client_, b.events);
}

Status Target::Poll(int wait_ms) {
  Status s = sink_.Poll(*client_, wait_ms);
  const SinkStats& st = sink_.stats();
  if (st.moved > moved_seen_)
    LogWarning("stream " + so_.name +
               " moved under this sink: " + std::to_string(st.moved_refused) +
               " publishes refused by the expected-last-sequence check "
               "(another cdc-nats publishing this log to it?); resumed "
               "after seq " +
               std::to_string(sink_.acked_seq()));
  moved_seen_ = st.moved;
  return s;
}

std::string Target::MetricLabels() const {
  return "stream=\"" + PrometheusLabelValue(so_.name) + "\"";
}

void Target::Metrics(Exposition* e) const {
  const SinkStats& s = sink_.stats();
  e->Metric("cdc_nats_events_published_total", "counter",
            "Events the stream stored (publish acknowledged).", s.published);
  e->Metric("cdc_nats_duplicates_total", "counter",
            "Publishes the server already held (duplicate window).",
            s.duplicates);
  e->Metric("cdc_nats_refused_total", "counter",
            "Publishes refused by the expected-last-sequence check.",
            s.refused);
  e->Metric("cdc_nats_resyncs_total", "counter",
            "Times the stream's last message was read again after a "
            "failure.",
            s.resyncs);
  e->Metric("cdc_nats_reconnects_total", "counter",
            "Reconnections to the cluster.",
            client_ ? client_->reconnects() : uint64_t{0});
  e->Metric("cdc_nats_acked_seq", "gauge",
            "Seq up to which every event is stored.", sink_.acked_seq());
  e->Metric("cdc_nats_pending_events", "gauge",
            "Events read but not yet stored.",
            static_cast<uint64_t>(sink_.pending()));
}

}  // namespace cdc::nats
