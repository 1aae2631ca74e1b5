// The NATS JetStream sink's writer: publishes events into one stream,
// exactly once, with a bounded number of publishes in flight.
//
// The shape every sink copies (see redis/sink.h): the shared consume
// library reads whole transactions; this writer publishes them; the
// applied position lives in the target and wins over the log cursor on
// restart. Here the target's position is the stream itself: each message
// carries its log id and seq (Nats-Msg-Id is "<log id>:<seq>"), so the
// stream's last message says where to resume.
//
// No duplicate, no gap: every publish carries the stream sequence it
// expects to follow (Nats-Expected-Last-Sequence). The server stores a
// message only right after the one before it, so a publish cut off by a
// failure makes every later one in flight fail too, and a sink racing
// another or resuming with a stale view is refused instead of storing a
// second copy. After any failure the writer waits for every answer,
// reads the stream's last message again (Resync) and publishes again from
// the event after it; the server's duplicate window (Nats-Msg-Id) is a
// second guard, not the one exactly-once rests on.
//
// acked_seq() is the seq up to which every event was stored, in order:
// the only position the caller may acknowledge in the log.
// One Sink per Client; used from one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/consume/reader.h"
#include "cdc/event/event.h"
#include "cdc/event/json_object.h"
#include "cdc/event/renderer.h"
#include "cdc/nats/client.h"

namespace cdc::nats {

struct SinkOptions {
  std::string stream;
  // {schema} and {table} (each a subject token: '.', '*', '>', '%',
  // spaces and control bytes are written %XX; an empty name is "_").
  std::string subject_template = "cdc.{schema}.{table}";
  std::string log_id;         // Nats-Msg-Id's first part
  bool native_input = false;  // events are native lines (--stdin): sent as is
  size_t max_pending = 4096;  // events held until stored (memory bound)
};

// Usage error for a template with an unknown {field}, without {table},
// or that is not a valid subject (empty tokens, wildcards).
Status CheckSubjectTemplate(const std::string& t);
// The subjects of a stream cdc-nats creates for `subject_template`: the
// literal tokens before its first field, then ">" ("cdc.{schema}.{table}"
// -> "cdc.>"). Usage error for a template that starts with a field.
Result<std::vector<std::string>> StreamSubjectsFor(
    const std::string& subject_template);
// One name as a subject token (SinkOptions).
std::string SubjectToken(std::string_view name);
void AppendSubjectToken(std::string_view name, std::string* out);

struct SinkStats {
  uint64_t published = 0;   // events stored by the server
  uint64_t duplicates = 0;  // answers saying the server already held it
  uint64_t resyncs = 0;     // times the stream's end was read again
  uint64_t refused = 0;     // publishes refused by the expected-seq check
  // Resyncs caused by refusals alone (no publish failed or timed out
  // before them): the stream moved under the sink, which another
  // publisher of this log does; `moved_refused` counts the last one's.
  uint64_t moved = 0, moved_refused = 0;
};

class Sink {
 public:
  Sink(SinkOptions o, std::unique_ptr<event::Renderer> renderer);

  // Reads the stream's last message: the seq this log's events are stored
  // up to (nullopt: the stream holds none). Config when the stream's last
  // message is not cdc-nats's or belongs to another log.
  Result<std::optional<uint64_t>> Resume(Client& c);

  // True while the writer holds fewer than max_pending events.
  bool has_room() const { return count_ < o_.max_pending; }
  // Renders `events` (whole transactions, seq order; those at or below
  // acked_seq() are dropped) and publishes as many as the window allows.
  Status Add(Client& c, const std::vector<consume::Event>& events);
  // Takes the answers that arrived (waiting up to `wait_ms` for one),
  // moves acked_seq(), publishes more, and after a failure resyncs once
  // every answer is in. A failure a retry may cure (Unavailable) leaves
  // the writer ready to be polled again; others are returned as they are
  // (a full stream: IOError; permissions: Permission).
  Status Poll(Client& c, int wait_ms);

  // A schema event from before the first event Add gets (see
  // event::Renderer::LearnSchema).
  void LearnSchema(std::string_view stored) { renderer_->LearnSchema(stored); }

  uint64_t acked_seq() const { return acked_; }
  size_t pending() const { return count_; }
  bool failing() const { return need_resync_; }
  const SinkStats& stats() const { return stats_; }

 private:
  struct Pending {
    OutMessage m;
    bool sent = false;
    bool stored = false;
    bool empty = false;  // the format shows nothing for this event
  };
  Status Render(const consume::Event& e, Pending* p);
  Status Pump(Client& c);
  Status Resync(Client& c);
  // The seq of this log's last event in the stream and its Cdc-Last.
  Result<std::optional<uint64_t>> ReadEnd(Client& c, bool* last);
  void PopStored();
  // The pending events, oldest first, in a ring whose slots (and their
  // strings' buffers) are reused: at(0) is the oldest.
  Pending& at(size_t i) { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  Pending& PushBack();
  void PopFront();
  // Index of the pending event with this seq, or count_ if none.
  size_t Find(uint64_t seq);

  SinkOptions o_;
  std::unique_ptr<event::Renderer> renderer_;
  std::vector<Pending> ring_;  // a power of two in size
  size_t head_ = 0, count_ = 0;
  std::vector<PublishResult> results_;
  size_t next_send_ = 0;      // index of the first unsent pending event
  uint64_t expect_last_ = 0;  // the stream seq the next publish follows
  uint64_t acked_ = 0;        // stored in order up to here
  uint64_t last_added_ = 0;
  bool need_resync_ = false;
  Status failure_;  // the first failure since the last resync
  uint64_t refused_at_resync_ = 0;
  SinkStats stats_;
  event::EventHead head_fields_;
  event::JsonObject obj_;
  std::string scratch_;
};

}  // namespace cdc::nats
