// Which events a reader hands out, and where it stops: the --table, --op
// and --to flags every reader shares.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/consume/position.h"

namespace cdc::consume {

// The part of a selection a consumer can store beside its cursor (a
// stored subscription: cdc-ack --create -c NAME --table ...): which events,
// not where to stop. Kept in consumers.db as a JSON object
// {"tables":[..],"exclude_tables":[..],"ops":"..","schema_changes":bool}.
struct Filter {
  std::vector<std::string> tables;
  std::vector<std::string> exclude_tables;
  std::string ops;
  bool schema_changes = false;

  std::string ToJson() const;
  // Corruption naming the consumer when `text` is not such an object.
  static Result<Filter> FromJson(const std::string& text,
                                 const std::string& consumer);
};

class Selection {
 public:
  // Everything, no stop.
  Selection() = default;

  // `tables`: globs (fnmatch) matched against "schema.table" and against
  // the table name alone; empty: every table. `ops`: operation letters
  // (c u d r t m s) separated by commas or spaces; empty: every op. `to`:
  // a position (ParsePosition) after which reading stops, inclusive; empty:
  // no stop. earliest and latest (and "now", the same as latest) are
  // resolved against the log in `log_dir` now (so "latest" means the last
  // event at this moment). `exclude_tables`: globs matched as `tables` are;
  // an event of a matching table is skipped even when `tables` takes it.
  // `schema_changes` false skips schema-change events (op s) unless `ops`
  // names s. Usage errors name the flag (--op) and the bad value.
  static Result<Selection> Make(const std::string& log_dir,
                                std::vector<std::string> tables,
                                const std::string& ops, const std::string& to,
                                std::vector<std::string> exclude_tables = {},
                                bool schema_changes = true);

  enum class Verdict {
    kTake,  // hand the event out
    kSkip,  // filtered out: consumed, not handed out
    kStop,  // past --to: neither; nothing after it either
  };
  // Judges one event in stored form. An event whose leading fields cannot
  // be read is taken (it is not the selection's to judge). Allocates
  // nothing for an event with the head the writers store (event::ScanHead)
  // once the name buffers have grown; else parses it (event::ParseHead).
  // Not thread-safe (those buffers): one Selection per thread.
  Verdict Judge(uint64_t seq, std::string_view stored) const;
  // True when --table, --exclude-table or --op narrowed it.
  bool has_filter() const {
    return !tables_.empty() || !exclude_.empty() || explicit_ops_;
  }
  bool schema_changes() const { return schema_changes_; }
  // Incremental snapshots' watermarks (op m, prefix cdc.snapshot; see
  // cdc-capture(1)) are skipped unless shown.
  void set_watermarks(bool show) { watermarks_ = show; }
  // Replaces which events are taken by `f` (a consumer's stored
  // subscription), keeping --to. Usage error for a bad op in `f`.
  Status ApplyFilter(const Filter& f);

  // True when `seq` is the last event --to SEQ lets through, so a reader
  // stops on reaching it instead of waiting for an event past it.
  bool EndsAt(uint64_t seq) const {
    return to_set_ && to_.kind == Position::Kind::kSeq && seq >= to_.seq;
  }

 private:
  // Whether anything but the op decides: a table, or --to by lsn or time.
  bool needs_names() const {
    return !tables_.empty() || !exclude_.empty() ||
           (to_set_ && to_.kind != Position::Kind::kSeq);
  }
  bool needs_head() const { return needs_names() || !ops_.empty(); }

  struct Glob {
    std::string text;
    bool literal = false;  // no special characters: fnmatch is equality
    void Set(std::string g);
  };
  Verdict JudgeParsed(std::string_view stored) const;
  Verdict JudgeHead(std::string_view lsn, std::string_view ts,
                    std::string_view op, std::string_view schema,
                    std::string_view table) const;
  // Whether "schema.table" or the table alone matches one of `globs`.
  bool Matches(const std::vector<Glob>& globs, std::string_view schema,
               std::string_view table) const;

  std::vector<Glob> tables_;
  std::vector<Glob> exclude_;
  mutable std::string name_, table_;  // Matches' buffers
  // The leading bytes, up to the op's value, of the last event whose head
  // ScanHead read, and where its lsn and ts are: the next event of the same
  // transaction starts with the same bytes, so only its op and names are
  // left to read.
  mutable std::string prefix_;
  mutable size_t lsn_len_ = 0, ts_at_ = 0, ts_len_ = 0;
  bool explicit_ops_ = false;
  bool schema_changes_ = true;
  bool watermarks_ = false;
  std::string ops_;
  bool to_set_ = false;
  Position to_;
};

}  // namespace cdc::consume
