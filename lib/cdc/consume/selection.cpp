#include "cdc/consume/selection.h"

#include <fnmatch.h>

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
  tables_ = f.tables;
  exclude_ = f.exclude_tables;
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

Selection::Verdict Selection::Judge(uint64_t seq,
                                    std::string_view stored) const {
  if (to_set_ && to_.kind == Position::Kind::kSeq && seq > to_.seq)
    return Verdict::kStop;
  // The head (lsn, xid, ts, op, then prefix for op m) ends well within
  // the first 200 bytes.
  if (!watermarks_ &&
      stored.substr(0, 200).find(",\"op\":\"m\",\"prefix\":\"cdc.snapshot\"") !=
          std::string_view::npos)
    return Verdict::kSkip;
  if (!needs_head()) return Verdict::kTake;
  event::EventHead h;
  if (!event::ParseHead(stored, &h)) return Verdict::kTake;
  if (to_set_ && to_.kind == Position::Kind::kLsn) {
    auto lsn = ParseLsn(h.lsn);
    if (lsn.ok() && *lsn > to_.lsn) return Verdict::kStop;
  }
  if (to_set_ && to_.kind == Position::Kind::kTime) {
    auto ts = ParseTimestamp(h.ts);
    if (ts.ok() && *ts > to_.time) return Verdict::kStop;
  }
  if (!ops_.empty() &&
      (h.op.size() != 1 || ops_.find(h.op[0]) == std::string::npos))
    return Verdict::kSkip;
  if (!tables_.empty() || !exclude_.empty()) {
    const std::string name = h.schema + "." + h.table;
    auto matches = [&](const std::vector<std::string>& globs) {
      for (const auto& g : globs) {
        if (fnmatch(g.c_str(), name.c_str(), 0) == 0 ||
            fnmatch(g.c_str(), h.table.c_str(), 0) == 0)
          return true;
      }
      return false;
    };
    if (!tables_.empty() && !matches(tables_)) return Verdict::kSkip;
    if (!exclude_.empty() && matches(exclude_)) return Verdict::kSkip;
  }
  return Verdict::kTake;
}

}  // namespace cdc::consume
