// cdc-ack: moves named consumers' cursors.
#include <charconv>

#include "cdc/base/time.h"
#include "cdc/cli/cli.h"
#include "cdc/consume/line_reader.h"
#include "cdc/consume/position.h"
#include "cdc/consume/selection.h"
#include "cdc/cursor/consumers.h"
#include "cdc/event/json_object.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/reader.h"
#include "common.h"
#include "runners.h"

namespace cdc::ack {

namespace {

struct Options {
  std::string log;
  std::string consumer;
  std::string seq;
  std::string seek;
  bool create = false;
  bool del = false;
  // --create: a stored subscription.
  std::vector<std::string> tables;
  std::vector<std::string> exclude_tables;
  std::string ops;
  bool schema_changes = false;
  double interval_s = 1.0;
};

Result<uint64_t> LastSeq(const std::string& dir) {
  CDC_ASSIGN_OR_RETURN(log::LogSummary sum, log::Summarize(dir));
  return sum.next_seq - 1;
}

Status AckChecked(cursor::ConsumerStore& store, const Options& o, uint64_t seq,
                  uint64_t last) {
  if (seq > last)
    return Status::BadInput("seq " + std::to_string(seq) +
                            " is beyond the end of the log (last seq " +
                            std::to_string(last) + ")");
  CDC_ASSIGN_OR_RETURN(uint64_t now, store.Ack(o.consumer, seq));
  // An ack keeps the later cursor, so a damaged one stays: say so rather
  // than succeed (the log may have grown since `last` was read).
  if (now <= seq) return Status::OK();
  CDC_ASSIGN_OR_RETURN(last, LastSeq(o.log));
  return cursor::CheckCursor(cursor::Consumer{o.consumer, now, 0, 0}, last);
}

// The "seq" of an event object, 0 for a transaction marker.
Result<uint64_t> SeqIn(const event::JsonObject& o) {
  const event::JsonMember* seq = o.find("seq");
  if (seq == nullptr) {
    const event::JsonMember* status = o.find("status");
    if (status != nullptr && status->kind == event::JsonKind::kString &&
        (status->string_value == "BEGIN" || status->string_value == "END") &&
        o.find("event_count") != nullptr)
      return 0;
    return Status::BadInput("event has no \"seq\"");
  }
  if (seq->kind != event::JsonKind::kUnsigned || seq->unsigned_value == 0)
    return Status::BadInput("\"seq\" must be a positive integer");
  return seq->unsigned_value;
}

// Extracts "seq" from an event line. The whole line is parsed, as cdc-log
// import parses it: a line cut off mid-event, or one naming a key twice
// ({"seq":5,"seq":7}: which one did the handler mean?), acks nothing. A
// CloudEvent of cdc-tail --format cloudevents has it in "data"; a
// transaction marker (--tx-markers) has none and yields 0, acking nothing.
Result<uint64_t> SeqOf(std::string_view line) {
  event::JsonObject o;
  CDC_RETURN_IF_ERROR(event::ParseJsonObject(line, &o));
  if (o.find("seq") == nullptr && o.find("specversion") != nullptr) {
    const event::JsonMember* data = o.find("data");
    if (data != nullptr && data->kind == event::JsonKind::kObject) {
      event::JsonObject d;
      CDC_RETURN_IF_ERROR(
          event::ParseJsonObject(o.value(*data), &d).Annotate("\"data\""));
      return SeqIn(d);
    }
  }
  return SeqIn(o);
}

// Reads events from stdin and acks the highest seq seen, every `interval`
// and at EOF, so an ack never waits for more input to arrive.
Status AckStdin(cursor::ConsumerStore& store, const Options& o) {
  CDC_ASSIGN_OR_RETURN(uint64_t last, LastSeq(o.log));
  uint64_t seen = 0, acked = 0;
  int64_t next_ack = MonoMicros();
  const int64_t interval = static_cast<int64_t>(o.interval_s * 1e6);
  consume::LineReader in(0);
  Status bad;
  auto flush_ack = [&]() -> Status {
    if (seen <= acked) return Status::OK();
    if (seen > last) {
      CDC_ASSIGN_OR_RETURN(last, LastSeq(o.log));
    }
    CDC_RETURN_IF_ERROR(AckChecked(store, o, seen, last));
    acked = seen;
    return Status::OK();
  };
  for (;;) {
    if (cli::StopRequested()) break;
    int64_t now = MonoMicros();
    if (now >= next_ack) {
      CDC_RETURN_IF_ERROR(flush_ack());
      next_ack = now + interval;
    }
    std::string_view line;
    auto got = in.Next(static_cast<int>((next_ack - now) / 1000) + 1, &line);
    if (!got.ok()) {
      if (got.status().code() != Code::kBadInput) return got.status();
      bad = got.status();
      break;
    }
    if (*got == consume::LineReader::Got::kEof) break;
    if (*got == consume::LineReader::Got::kTimeout) continue;
    auto seq = SeqOf(line);
    if (!seq.ok()) {
      bad = in.LineError(in.unterminated()
                             ? "the last line, without a newline, is not a "
                               "whole event (cut off?): " +
                                   seq.status().message()
                             : seq.status().message());
      break;
    }
    seen = std::max(seen, *seq);
  }
  // Everything before a bad line was passed on by the handler: ack it.
  CDC_RETURN_IF_ERROR(flush_ack());
  return bad;
}

Status Run(const Options& o) {
  CDC_RETURN_IF_ERROR(cursor::ValidateConsumerName(o.consumer));
  const int actions = !o.seq.empty() + !o.seek.empty() + o.del;
  if (actions > 1)
    return Status::Usage("give only one of SEQ, --seek and --delete");
  if (o.del && o.create)
    return Status::Usage("--create and --delete do not go together");
  CDC_RETURN_IF_ERROR(log::ReadIdentity(o.log).status());
  CDC_ASSIGN_OR_RETURN(auto store, cursor::ConsumerStore::Open(o.log));
  if (o.del) return store->Delete(o.consumer);

  if (o.create && !o.seq.empty())
    return Status::Usage("--create places a new consumer with --seek, not SEQ");
  const consume::Filter filter{o.tables, o.exclude_tables, o.ops,
                               o.schema_changes};
  const bool subscribe = !o.tables.empty() || !o.exclude_tables.empty() ||
                         !o.ops.empty() || o.schema_changes;
  if (subscribe && !o.create)
    return Status::Usage(
        "--table, --exclude-table, --op and --schema-changes store a "
        "selection with --create");
  if (o.create) {
    consume::Position p;
    if (!o.seek.empty()) {
      CDC_ASSIGN_OR_RETURN(p, consume::ParsePosition(o.seek));
    }
    if (subscribe) {  // refuse a bad --op before creating anything
      consume::Selection check;
      CDC_RETURN_IF_ERROR(check.ApplyFilter(filter));
    }
    CDC_ASSIGN_OR_RETURN(uint64_t first, consume::ResolvePosition(o.log, p));
    CDC_RETURN_IF_ERROR(store->Create(o.consumer, first - 1).status());
    if (!subscribe) return Status::OK();
    return store->SetSelection(o.consumer, filter.ToJson());
  }
  // In a pipe, cdc-tail creates a new consumer while we start: a missing
  // consumer only matters once there is something to ack.
  if (o.seq.empty() && o.seek.empty()) return AckStdin(*store, o);
  CDC_ASSIGN_OR_RETURN(auto existing, store->Get(o.consumer));
  if (!existing)
    return Status::NotFound("no consumer named " + o.consumer +
                            " (create it with --create)");
  if (!o.seek.empty()) {
    CDC_ASSIGN_OR_RETURN(consume::Position p, consume::ParsePosition(o.seek));
    CDC_ASSIGN_OR_RETURN(uint64_t first, consume::ResolvePosition(o.log, p));
    CDC_ASSIGN_OR_RETURN(uint64_t last, LastSeq(o.log));
    if (first > last + 1)
      return Status::BadInput("seq " + std::to_string(first) +
                              " is beyond the end of the log (last seq " +
                              std::to_string(last) + ")");
    return store->Seek(o.consumer, first - 1);
  }
  if (!o.seq.empty()) {
    uint64_t seq = 0;
    auto [end, ec] =
        std::from_chars(o.seq.data(), o.seq.data() + o.seq.size(), seq);
    if (ec != std::errc() || end != o.seq.data() + o.seq.size() || seq == 0 ||
        seq > consume::kMaxSeq)
      return Status::Usage("SEQ must be a positive integer up to " +
                           std::to_string(consume::kMaxSeq) + ", not \"" +
                           o.seq + "\"");
    CDC_ASSIGN_OR_RETURN(uint64_t last, LastSeq(o.log));
    return AckChecked(*store, o, seq, last);
  }
  return AckStdin(*store, o);
}

}  // namespace

int RunCli(int argc, char** argv) {
  cli::InstallStopHandlers();
  cli::InstallLogging("cdc-ack");
  CLI::App app{
      "Move a named consumer's cursor: ack SEQ (cumulative), ack the highest "
      "seq of NDJSON events read from stdin, seek, create or delete.",
      "cdc-ack"};
  Options o;
  tools::AddLogOption(app, &o.log);
  app.add_option("-c,--consumer", o.consumer, "Consumer name")
      ->required()
      ->type_name("NAME");
  app.add_option("seq", o.seq,
                 "Ack every event up to and including SEQ. Without SEQ (and "
                 "no --seek/--create/--delete), read events from stdin.")
      ->type_name("SEQ");
  app.add_option(
         "--seek", o.seek,
         "Move the cursor so the next event is at "
         "earliest|latest|SEQ|seq:SEQ|lsn:X/Y|time:ISO (may move backward)")
      ->type_name("POS");
  app.add_option("--table", o.tables,
                 "With --create: store a selection of tables matching GLOB "
                 "(as cdc-tail --table); repeatable")
      ->type_name("GLOB");
  app.add_option("--exclude-table", o.exclude_tables,
                 "With --create: leave out tables matching GLOB; repeatable")
      ->type_name("GLOB");
  app.add_option("--op", o.ops,
                 "With --create: store a selection of operations, e.g. c,u,d")
      ->type_name("OPS");
  app.add_flag("--schema-changes", o.schema_changes,
               "With --create: the consumer gets schema changes too");
  app.add_flag("--create", o.create,
               "Create the consumer (at --seek, default earliest)");
  app.add_flag("--delete", o.del, "Delete the consumer");
  app.add_option("--interval", o.interval_s,
                 "In stdin mode, ack at most this often (default 1s)")
      ->type_name("DURATION")
      ->transform(tools::DurationFlag(0, /*exclusive=*/true));
  app.set_config("--config", "", "Read flags from an INI/TOML FILE");
  app.allow_config_extras(false);  // a misspelt key is an error, not ignored
  if (auto rc = tools::Parse(app, argc, argv)) return *rc;
  return cli::Report("cdc-ack", Run(o));
}

}  // namespace cdc::ack
