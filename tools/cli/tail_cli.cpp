// cdc-tail: prints events as NDJSON from a position or a consumer's cursor.
#include <fnmatch.h>

#include "cdc/base/time.h"
#include "cdc/cli/cli.h"
#include "cdc/cursor/consumers.h"
#include "cdc/event/event.h"
#include "cdc/log/watch.h"
#include "common.h"
#include "runners.h"

namespace cdc::tail {

namespace {

// Events this large are written out without a copy in the output buffer.
constexpr size_t kLargeLine = 1 << 16;

struct Options {
  std::string log;
  std::string consumer;
  bool follow = false;
  std::string from;
  std::string to;
  int64_t limit = -1;
  std::vector<std::string> tables;
  std::string ops;
  std::string format = "native";
};

struct Filter {
  std::vector<std::string> tables;
  std::string ops;
  bool to_set = false;
  tools::Position to;
  bool needs_head() const {
    return !tables.empty() || !ops.empty() ||
           (to_set && to.kind != tools::Position::Kind::kSeq);
  }
};

// Returns 1 to print, 0 to skip, -1 when past --to (stop).
int Judge(const Filter& f, uint64_t seq, std::string_view stored) {
  if (f.to_set && f.to.kind == tools::Position::Kind::kSeq && seq > f.to.seq)
    return -1;
  if (!f.needs_head()) return 1;
  event::EventHead h;
  if (!event::ParseHead(stored, &h)) return 1;  // not ours to judge: print
  if (f.to_set && f.to.kind == tools::Position::Kind::kLsn) {
    auto lsn = ParseLsn(h.lsn);
    if (lsn.ok() && *lsn > f.to.lsn) return -1;
  }
  if (f.to_set && f.to.kind == tools::Position::Kind::kTime) {
    auto ts = ParseTimestamp(h.ts);
    if (ts.ok() && *ts > f.to.time) return -1;
  }
  if (!f.ops.empty() &&
      (h.op.size() != 1 || f.ops.find(h.op[0]) == std::string::npos))
    return 0;
  if (!f.tables.empty()) {
    std::string name = h.schema + "." + h.table;
    bool any = false;
    for (const auto& g : f.tables)
      any = any || fnmatch(g.c_str(), name.c_str(), 0) == 0 ||
            fnmatch(g.c_str(), h.table.c_str(), 0) == 0;
    if (!any) return 0;
  }
  return 1;
}

Status Position(const Options& o, log::LogReader& r) {
  if (o.consumer.empty()) {
    if (o.from.empty()) return r.SeekEarliest();
    CDC_ASSIGN_OR_RETURN(tools::Position p, tools::ParsePosition(o.from));
    return tools::SeekTo(r, p);
  }
  CDC_RETURN_IF_ERROR(cursor::ValidateConsumerName(o.consumer));
  CDC_ASSIGN_OR_RETURN(auto store, cursor::ConsumerStore::Open(o.log));
  CDC_ASSIGN_OR_RETURN(auto existing, store->Get(o.consumer));
  if (existing && !o.from.empty())
    return Status::Usage("consumer " + o.consumer +
                         " exists; --from only places a new consumer (move "
                         "this one with \"cdc-ack -c " +
                         o.consumer + " --seek POS\")");
  uint64_t acked;
  if (existing) {
    acked = existing->acked_seq;
  } else {
    tools::Position p;
    if (!o.from.empty()) {
      CDC_ASSIGN_OR_RETURN(p, tools::ParsePosition(o.from));
    }
    CDC_ASSIGN_OR_RETURN(uint64_t first, tools::ResolvePosition(o.log, p));
    bool created;
    CDC_ASSIGN_OR_RETURN(cursor::Consumer c,
                         store->GetOrCreate(o.consumer, first - 1, &created));
    acked = c.acked_seq;
  }
  Status s = r.SeekSeq(acked + 1);
  if (s.code() == Code::kExpired)
    return Status::Expired(
        "consumer " + o.consumer + " is expired: its next event (seq " +
        std::to_string(acked + 1) +
        ") was removed by retention; run \"cdc-ack -c " + o.consumer +
        " --seek earliest\" (or another position) to "
        "continue from what is retained");
  return s;
}

Status Run(const Options& o, cli::Output& out) {
  if (o.format != "native")
    return Status::Usage("--format " + o.format +
                         " is not available in this version (use native)");
  Filter f;
  f.tables = o.tables;
  for (char c : o.ops) {
    if (c == ',' || c == ' ') continue;
    if (std::string_view("cudrtms").find(c) == std::string_view::npos)
      return Status::Usage(std::string("--op: unknown operation '") + c +
                           "' (use c,u,d,r,t,m,s)");
    f.ops.push_back(c);
  }
  if (!o.ops.empty() && f.ops.empty())
    return Status::Usage("--op \"" + o.ops +
                         "\" names no operation (use c,u,d,r,t,m,s)");
  if (!o.to.empty()) {
    CDC_ASSIGN_OR_RETURN(f.to, tools::ParsePosition(o.to));
    if (f.to.kind == tools::Position::Kind::kEarliest ||
        f.to.kind == tools::Position::Kind::kLatest) {
      CDC_ASSIGN_OR_RETURN(uint64_t next, tools::ResolvePosition(o.log, f.to));
      // "latest" resolves to one past the end; "earliest" to the first.
      if (f.to.kind == tools::Position::Kind::kLatest) --next;
      f.to = tools::Position{tools::Position::Kind::kSeq, next, 0, 0};
    }
    f.to_set = true;
  }
  CDC_ASSIGN_OR_RETURN(auto reader, log::LogReader::Open(o.log));
  CDC_RETURN_IF_ERROR(Position(o, *reader));
  std::optional<log::ChangeWaiter> waiter;
  if (o.follow) {
    CDC_ASSIGN_OR_RETURN(auto w, log::ChangeWaiter::Create(o.log));
    waiter.emplace(std::move(w));
  }
  int64_t printed = 0;
  log::Batch batch;
  for (;;) {
    if (cli::StopRequested()) break;
    CDC_ASSIGN_OR_RETURN(bool got, reader->Next(&batch));
    if (got) {
      bool stop = false;
      batch.ForEach([&](uint64_t seq, std::string_view line, bool last) {
        if (stop) return;
        int verdict = Judge(f, seq, line);
        if (verdict < 0) {
          stop = true;
          return;
        }
        // With --to SEQ, stop on reaching it rather than waiting (-f) for
        // an event past it.
        if (f.to_set && f.to.kind == tools::Position::Kind::kSeq &&
            seq >= f.to.seq)
          stop = true;
        if (verdict == 0) return;
        if (line.size() < kLargeLine) {
          event::AppendNative(seq, line, last, out.buffer());
        } else {
          // Written from the frame, not copied into the output buffer: a
          // large event is then in memory once (plus its compressed form
          // while it is decompressed).
          char scratch[32];
          auto p = event::SplitNative(seq, line, last, scratch);
          (void)(out.Write(p.head) && out.Write(p.body) && out.Write(p.tail));
        }
        if (++printed == o.limit) stop = true;
      });
      // Keep no buffer a huge frame grew while following.
      if (batch.raw.capacity() > kLargeLine * 64) std::string().swap(batch.raw);
      if (!out.MaybeFlush() || stop) break;
      continue;
    }
    if (!out.Flush() || !o.follow) break;
    CDC_ASSIGN_OR_RETURN(auto wake, waiter->Wait(1000, out.fd()));
    if (wake == log::ChangeWaiter::Wake::kWatchedFd) break;  // reader gone
  }
  out.Flush();
  return out.error();
}

}  // namespace

int RunCli(int argc, char** argv) {
  cli::InstallStopHandlers();
  cli::ReturnLargeBuffers();
  CLI::App app{
      "Print events from a cdc log as NDJSON, from a position or a named "
      "consumer's cursor; -f keeps following new events.",
      "cdc-tail"};
  Options o;
  tools::AddLogOption(app, &o.log);
  app.add_option("-c,--consumer", o.consumer,
                 "Start after this consumer's cursor (created at --from or "
                 "the earliest event when new). Never moves the cursor.")
      ->type_name("NAME");
  app.add_flag("-f,--follow", o.follow, "Wait for new events");
  app.add_option("--from", o.from,
                 "Start at earliest|latest|SEQ|lsn:X/Y|time:ISO "
                 "(default earliest)")
      ->type_name("POS");
  app.add_option("--to", o.to, "Stop after this position (inclusive)")
      ->type_name("POS");
  app.add_option("-n,--limit", o.limit, "Stop after N events")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  app.add_option("--table", o.tables,
                 "Only tables matching GLOB (schema.table or table); "
                 "repeatable")
      ->type_name("GLOB");
  app.add_option("--op", o.ops, "Only these operations, e.g. c,u,d")
      ->type_name("OPS");
  app.add_option("--format", o.format, "Output format: native")
      ->type_name("FMT");
  app.set_config("--config", "", "Read flags from an INI/TOML FILE");
  app.allow_config_extras(false);  // a misspelt key is an error, not ignored
  if (auto rc = tools::Parse(app, argc, argv)) return *rc;
  cli::Output out(1, o.follow ? (1 << 16) : (1 << 18));
  return cli::Report("cdc-tail", Run(o, out));
}

}  // namespace cdc::tail
