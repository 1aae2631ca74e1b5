#include "cdc/consume/selection.h"

#include <fnmatch.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "cdc/base/time.h"
#include "cdc/event/event.h"

namespace cdc::consume {

std::string Filter::ToJson() const {
  nlohmann::ordered_json j;
  j["tables"] = tables;
  j["exclude_tables"] = exclude_tables;
  j["ops"] = ops;
  j["schema_changes"] = schema_changes;
  return j.dump();
}

Result<Filter> Filter::FromJson(const std::string& text,
                                const std::string& consumer) {
  const Status bad =
      Status::Corruption("the selection stored for consumer " + consumer +
                         " in consumers.db is not one cdc-ack wrote");
  try {
    auto j = nlohmann::json::parse(text);
    Filter f;
    f.tables = j.at("tables").get<std::vector<std::string>>();
    f.exclude_tables = j.at("exclude_tables").get<std::vector<std::string>>();
    f.ops = j.at("ops").get<std::string>();
    f.schema_changes = j.at("schema_changes").get<bool>();
    return f;
  } catch (const nlohmann::json::exception&) {
    return bad;
  }
}

Status Selection::ApplyFilter(const Filter& f) {
  tables_.clear();
  for (const std::string& g : f.tables) tables_.emplace_back().Set(g);
  exclude_.clear();
  for (const std::string& g : f.exclude_tables) exclude_.emplace_back().Set(g);
  ops_.clear();
  for (char c : f.ops) {
    if (c == ',' || c == ' ') continue;
    if (std::string_view("cudrtms").find(c) == std::string_view::npos)
      return Status::Usage(std::string("--op: unknown operation '") + c +
                           "' (use c,u,d,r,t,m,s)");
    ops_.push_back(c);
  }
  if (!f.ops.empty() && ops_.empty())
    return Status::Usage("--op \"" + f.ops +
                         "\" names no operation (use c,u,d,r,t,m,s)");
  explicit_ops_ = !ops_.empty();
  schema_changes_ = f.schema_changes;
  // Schema changes only when asked for: every op but s, unless --op
  // already lists the ops wanted.
  if (!f.schema_changes && ops_.empty()) ops_ = "cudrtm";
  return Status::OK();
}

Result<Selection> Selection::Make(const std::string& log_dir,
                                  std::vector<std::string> tables,
                                  const std::string& ops, const std::string& to,
                                  std::vector<std::string> exclude_tables,
                                  bool schema_changes) {
  Selection s;
  CDC_RETURN_IF_ERROR(s.ApplyFilter(Filter{
      std::move(tables), std::move(exclude_tables), ops, schema_changes}));
  if (!to.empty()) {
    CDC_ASSIGN_OR_RETURN(s.to_, ParsePosition(to == "now" ? "latest" : to));
    if (s.to_.kind == Position::Kind::kEarliest ||
        s.to_.kind == Position::Kind::kLatest) {
      CDC_ASSIGN_OR_RETURN(uint64_t next, ResolvePosition(log_dir, s.to_));
      // "latest" resolves to one past the end; "earliest" to the first.
      if (s.to_.kind == Position::Kind::kLatest) --next;
      s.to_ = Position{Position::Kind::kSeq, next, 0, 0};
    }
    s.to_set_ = true;
  }
  return s;
}

namespace {

constexpr std::string_view kWatermark =
    ",\"op\":\"m\",\"prefix\":\"cdc.snapshot";
// The head (lsn, xid, ts, op, then prefix for op m) ends well within the
// first 200 bytes; a watermark is recognised there only.
constexpr size_t kHeadBytes = 200;

// Where a canonical head's lsn value starts: after {"lsn":".
constexpr size_t kLsnAt = 8;

// A glob without fnmatch's special characters matches only itself.
bool IsLiteral(const std::string& glob) {
  return glob.find_first_of("*?[\\") == std::string::npos;
}

}  // namespace

void Selection::Glob::Set(std::string g) {
  literal = IsLiteral(g);
  text = std::move(g);
}

bool Selection::Matches(const std::vector<Glob>& globs, std::string_view schema,
                        std::string_view table) const {
  bool built = false;
  for (const Glob& g : globs) {
    const std::string_view t = g.text;
    if (g.literal) {
      if (t == table || (t.size() == schema.size() + 1 + table.size() &&
                         t.starts_with(schema) && t[schema.size()] == '.' &&
                         t.ends_with(table)))
        return true;
      continue;
    }
    if (!built) {
      // Reused buffers: no allocation per event once they have grown.
      name_.assign(schema);
      name_.push_back('.');
      name_.append(table);
      table_.assign(table);
      built = true;
    }
    if (fnmatch(g.text.c_str(), name_.c_str(), 0) == 0 ||
        fnmatch(g.text.c_str(), table_.c_str(), 0) == 0)
      return true;
  }
  return false;
}

Selection::Verdict Selection::Judge(uint64_t seq,
                                    std::string_view stored) const {
  if (to_set_ && to_.kind == Position::Kind::kSeq && seq > to_.seq)
    return Verdict::kStop;
  event::HeadView v;
  size_t n = prefix_.size();
  if (n > 0 && stored.size() > n &&
      std::memcmp(stored.data(), prefix_.data(), n) == 0) {
    // The same lsn, xid and ts as the event before (its transaction's).
    v.lsn = stored.substr(kLsnAt, lsn_len_);
    v.ts = stored.substr(ts_at_, ts_len_);
  } else {
    if (!event::ScanHeadStart(stored, &v)) return JudgeParsed(stored);
    n = v.op_at;
    prefix_.assign(stored.data(), n);
    lsn_len_ = v.lsn.size();
    ts_at_ = static_cast<size_t>(v.ts.data() - stored.data());
    ts_len_ = v.ts.size();
  }
  // When the op alone decides (no table globs, no --to by lsn or time), a
  // one-letter op other than m (a watermark's) is all there is to read.
  if (!needs_names() && stored.size() > n + 1 && stored[n + 1] == '"' &&
      stored[n] != 'm' && stored[n] != '"' && stored[n] != '\\')
    return ops_.empty() || ops_.find(stored[n]) != std::string::npos
               ? Verdict::kTake
               : Verdict::kSkip;
  if (!event::ScanHeadFrom(stored, n, &v)) return JudgeParsed(stored);
  // ScanHead read the canonical head, so a watermark's op and prefix are
  // where it stopped; the same test as JudgeParsed's search.
  if (!watermarks_ && v.op == "m" &&
      v.end + kWatermark.size() <= kHeadBytes + 9 &&
      stored.compare(v.end - 9, kWatermark.size(), kWatermark) == 0)
    return Verdict::kSkip;
  if (!needs_head()) return Verdict::kTake;
  return JudgeHead(v.lsn, v.ts, v.op, v.schema, v.table);
}

Selection::Verdict Selection::JudgeParsed(std::string_view stored) const {
  if (!watermarks_ &&
      stored.substr(0, kHeadBytes).find(kWatermark) != std::string_view::npos)
    return Verdict::kSkip;
  if (!needs_head()) return Verdict::kTake;
  event::EventHead h;
  if (!event::ParseHead(stored, &h)) return Verdict::kTake;
  return JudgeHead(h.lsn, h.ts, h.op, h.schema, h.table);
}

Selection::Verdict Selection::JudgeHead(std::string_view lsn,
                                        std::string_view ts,
                                        std::string_view op,
                                        std::string_view schema,
                                        std::string_view table) const {
  if (to_set_ && to_.kind == Position::Kind::kLsn) {
    auto parsed = ParseLsn(lsn);
    if (parsed.ok() && *parsed > to_.lsn) return Verdict::kStop;
  }
  if (to_set_ && to_.kind == Position::Kind::kTime) {
    auto parsed = ParseTimestamp(ts);
    if (parsed.ok() && *parsed > to_.time) return Verdict::kStop;
  }
  if (!ops_.empty() &&
      (op.size() != 1 || ops_.find(op[0]) == std::string::npos))
    return Verdict::kSkip;
  if (!tables_.empty() && !Matches(tables_, schema, table))
    return Verdict::kSkip;
  if (!exclude_.empty() && Matches(exclude_, schema, table))
    return Verdict::kSkip;
  return Verdict::kTake;
}

}  // namespace cdc::consume
