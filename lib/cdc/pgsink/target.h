// Another PostgreSQL database as a sink::Target (cdc-pg(1)): every batch of
// whole source transactions is one target transaction that applies their
// rows and moves the applied seq, so the database holds each source
// transaction exactly once.
//
//   BEGIN
//   guard     UPDATE <state> SET seq = <batch's last> WHERE consumer = ..
//             AND seq IS NOT DISTINCT FROM <what this sink expects>; no
//             row matched fails the transaction (another sink moved it)
//   rows      inserts and updates as multi-row upserts on the target's
//             primary key (or replica identity index), deletes by key,
//             key changes as UPDATE .. WHERE old key, truncates; a table
//             without either is matched on the whole old row (events of
//             REPLICA IDENTITY FULL), one row per statement
//   COMMIT
//
// Batches are sent in libpq's pipeline mode, at most two in flight; a
// batch's guard names the seq the batch before it sets, so a batch whose
// predecessor failed fails too and the applied seq never passes a batch
// not applied. Any error drops the connection: the engine reopens (Open
// reads the applied seq again) and submits what is not confirmed.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cdc/event/fields.h"
#include "cdc/pg/conn.h"
#include "cdc/pgsink/values.h"
#include "cdc/sink/target.h"

namespace cdc::pgsink {

struct Options {
  std::string dsn;       // libpq conninfo or URI, without a password
  std::string consumer;  // the state table's row
  // The log's id, kept with the applied seq: a consumer name reused for
  // another log is refused. Empty (stdin): not checked.
  std::string log_id;
  std::string state_schema = "cdc";
  std::string state_table = "applied";
  // Where a source table goes: "schema.table" -> {schema, table}; tables
  // not named go to `target_schema` (empty: the source's schema) under
  // their own name.
  std::map<std::string, std::pair<std::string, std::string>> table_map;
  std::string target_schema;
  bool create_tables = false;  // from the log's schema events
  bool evolve = false;         // add columns the schema events add
  size_t max_rows = 500;       // rows per statement
};

struct Stats {
  uint64_t events = 0, rows = 0, statements = 0, batches = 0;
  uint64_t ignored = 0, reconnects = 0, created = 0, evolved = 0;
};

class Target final : public sink::Target {
 public:
  explicit Target(Options o);
  ~Target() override;

  Result<std::optional<uint64_t>> Open() override;
  bool HasRoom() const override { return flights_.size() < 2; }
  Status Submit(const consume::SinkBatch& b) override;
  Status Poll(int wait_ms) override;
  uint64_t confirmed() const override { return confirmed_; }
  size_t in_flight() const override;
  // Every statement answered: a batch of millions of rows is not stalled.
  uint64_t answers() const override { return answers_; }
  void Metrics(Exposition* e) const override;
  std::string Name() const override { return "PostgreSQL"; }
  std::string MetricPrefix() const override { return "cdc_pg_"; }

  // A schema event of the log before where reading starts (for
  // --create-tables and --evolve).
  void LearnSchema(std::string_view stored);
  const Stats& stats() const { return m_; }

 private:
  struct Column {
    std::string name, quoted, cast;
    ColumnType type;
    bool generated = false;
  };
  struct Table {
    std::string source;     // the source table, schema.table
    std::string name;       // the target table as messages say it
    std::string qualified;  // quoted
    std::vector<Column> columns;
    std::unordered_map<std::string, size_t> by_name;
    std::vector<size_t> key;  // primary key or replica identity index
  };
  struct SourceColumn {
    std::string name;
    uint32_t type_oid = 0;
    int32_t type_mod = -1;
    bool key = false;
  };
  // A batch sent and not yet answered in full.
  struct Flight {
    std::optional<uint64_t> prev;  // the applied seq the guard expects
    uint64_t last = 0;
    size_t events = 0;
    std::vector<std::string> what;  // per statement, for messages
    // Statements that are plain INSERTs into a keyed table: its source.
    std::unordered_map<size_t, std::string> inserts;
    size_t answered = 0;
    Status error;
  };
  enum class Group { kNone, kUpsert, kInsert, kDelete };

  void Drop();
  Status Query(const std::string& sql, const std::vector<std::string>& params,
               pg::PgResult* out);
  // The target table a source table maps to, loaded from the catalog (and
  // created or evolved when asked). Waits for what is in flight first.
  Result<Table*> Resolve(std::string_view schema, std::string_view table);
  Status LoadTable(const std::string& source, Table* t);
  Status CreateTable(const std::string& source, const std::string& schema,
                     const std::string& name);
  Status Evolve(const std::string& source, Table* t);
  Result<std::string> TypeName(uint32_t oid, int32_t mod);
  std::pair<std::string, std::string> MapName(std::string_view schema,
                                              std::string_view table) const;
  Status Drain();
  Status ResolveAll(const consume::SinkBatch& b);

  // Statement building.
  Status AddEvent(const consume::Event& ev);
  Status AddRow(const consume::Event& ev, Table* t, char op);
  Status AddWholeRow(const consume::Event& ev, Table* t, char op);
  Status FlushGroup();
  std::string Conflict(const Table& t) const;
  bool GroupFull(size_t cols) const;
  void Param(const std::string* value);  // nullptr: NULL
  Result<bool> Convert(const Table& t, const Column& c, const event::Field* f,
                       const char* where);
  Status ValueParam(const Table& t, const Column& c, const event::Field* f,
                    const char* where);
  Status Send(std::string sql, std::string what, bool prepare = false);
  // One value of the row being added to the group: a parameter, or an
  // element of its column's array (unnest groups).
  Status GroupValue(const Table& t, const Column& c, const event::Field* f,
                    const char* where, size_t i);
  void StartGroup(Group g, Table* t, std::vector<size_t> cols, uint64_t seq);
  bool JsonNull(const char* where, const std::string& column, int element);

  Options o_;
  std::unique_ptr<pg::Connection> conn_;
  std::string state_;  // the quoted state table
  std::unordered_map<std::string, std::unique_ptr<Table>> tables_;
  std::unordered_map<std::string, std::vector<SourceColumn>> schemas_;
  // Source tables whose inserts met rows the target held: upserts.
  std::unordered_set<std::string> upsert_tables_;
  std::optional<uint64_t> expected_;  // what the target holds after flights
  uint64_t confirmed_ = 0, queued_ = 0, answers_ = 0;
  std::deque<Flight> flights_;
  Stats m_;
  bool opened_ = false;

  // The statement being built.
  Flight* building_ = nullptr;
  Group group_ = Group::kNone;
  Table* group_table_ = nullptr;
  std::vector<size_t> group_cols_;
  // The group sends each column as one array (unnest): no array columns.
  bool group_unnest_ = false;
  std::vector<std::string> colbuf_;
  std::unordered_map<std::string, std::string> prepared_;  // sql -> name
  std::unordered_set<std::string> group_keys_;
  size_t group_rows_ = 0;
  uint64_t group_first_ = 0, group_last_ = 0;
  std::string sql_, pbuf_, scratch_;
  std::vector<std::pair<size_t, int>> params_;  // offset, length (-1: NULL)
  event::Fields ev_, key_, after_, jnull_;
  std::vector<std::string> json_nulls_;
};

}  // namespace cdc::pgsink
