#include "cdc/consume/selection.h"

#include <fnmatch.h>

#include "cdc/base/time.h"
#include "cdc/event/event.h"

namespace cdc::consume {

Result<Selection> Selection::Make(const std::string& log_dir,
                                  std::vector<std::string> tables,
                                  const std::string& ops, const std::string& to,
                                  std::vector<std::string> exclude_tables,
                                  bool schema_changes) {
  Selection s;
  s.tables_ = std::move(tables);
  s.exclude_ = std::move(exclude_tables);
  for (char c : ops) {
    if (c == ',' || c == ' ') continue;
    if (std::string_view("cudrtms").find(c) == std::string_view::npos)
      return Status::Usage(std::string("--op: unknown operation '") + c +
                           "' (use c,u,d,r,t,m,s)");
    s.ops_.push_back(c);
  }
  if (!ops.empty() && s.ops_.empty())
    return Status::Usage("--op \"" + ops +
                         "\" names no operation (use c,u,d,r,t,m,s)");
  // Schema changes only when asked for: every op but s, unless --op
  // already lists the ops wanted.
  if (!schema_changes && s.ops_.empty()) s.ops_ = "cudrtm";
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
