#include "cdc/capture/pg_incremental.h"

#include <string>
#include <vector>

#include "cdc/capture/tables.h"
#include "cdc/log/snapshots.h"
#include "cdc/pg/conn.h"
#include "cdc/pg/copy_text.h"

namespace cdc::capture {

namespace {

struct PgChunk : ChunkSource::Chunk {
  pg::Relation rel;
  std::vector<std::string> generated;
  std::vector<pg::TupleData> rows;
};

bool SameShape(const pg::Relation& a, const pg::Relation& b) {
  return a.nspname == b.nspname && a.relname == b.relname &&
         a.columns == b.columns;
}

class PgChunkSource : public ChunkSource {
 public:
  PgChunkSource(const Options& o, pg::EventBuilder* builder)
      : o_(o), builder_(*builder) {}

  Result<uint64_t> Validate(const log::IncrementalSnapshot& req) override {
    CDC_RETURN_IF_ERROR(Connect());
    CDC_ASSIGN_OR_RETURN(std::vector<Table> tables,
                         ListTables(*conn_, o_.publication));
    table_ = Table{};
    for (const Table& t : tables)
      if (t.schema == req.schema && t.name == req.table) table_ = t;
    if (table_.oid == 0)
      return Status::NotFound("table " + req.QualifiedName() +
                              " is not in publication " + o_.publication);
    PgChunk c;
    CDC_RETURN_IF_ERROR(Describe(&c));
    return table_.estimate;
  }

  Status Watermark(const std::string& content) override {
    CDC_RETURN_IF_ERROR(Connect());
    return conn_
        ->Exec("SELECT pg_logical_emit_message(true, " +
               conn_->QuoteLiteral(log::kWatermarkPrefix) + ", " +
               conn_->QuoteLiteral(content) + ")")
        .status();
  }

  Status Begin() override {
    CDC_RETURN_IF_ERROR(Connect());
    return conn_->Exec("BEGIN").status();
  }

  Result<std::unique_ptr<Chunk>> Read(
      const log::IncrementalSnapshot& req) override {
    pg::Connection& c = *conn_;
    auto p = std::make_unique<PgChunk>();
    const std::string name = (table_.kind == 'r' ? "ONLY " : "") +
                             c.QuoteIdent(table_.schema) + "." +
                             c.QuoteIdent(table_.name);
    // The lock holds off DDL until the high watermark commits, so the rows
    // read have the shape described here at that point of the stream.
    CDC_RETURN_IF_ERROR(c.Exec("SELECT 1 FROM " + name + " LIMIT 0").status());
    CDC_RETURN_IF_ERROR(Describe(p.get()));
    const size_t ncols = p->rel.columns.size();
    CDC_RETURN_IF_ERROR(c.CopyOut(
        ChunkSql(c, table_, p->rel, key_, req.last_key, req.chunk_rows),
        [&](std::string_view line) {
          pg::TupleData row;
          CDC_RETURN_IF_ERROR(pg::ParseCopyTextRow(line, ncols, &row));
          p->rows.push_back(std::move(row));
          return Status::OK();
        }));
    p->Chunk::rows = p->rows.size();
    if (!p->rows.empty()) {
      std::vector<std::string> k;
      for (size_t col : key_.columns)
        k.push_back(std::string(p->rows.back()[col].text()));
      p->last_key = std::move(k);
    }
    return std::unique_ptr<Chunk>(std::move(p));
  }

  Status Commit() override { return conn_->Exec("COMMIT").status(); }

  void Drop() override {
    // (Not outside a transaction: the server would warn of it.)
    if (conn_ && conn_->InTransaction()) (void)conn_->Exec("ROLLBACK");
    conn_.reset();
  }

  Status RenderSchema(Chunk* chunk, event::EventLines* events) override {
    auto* c = static_cast<PgChunk*>(chunk);
    const pg::Relation* have = builder_.FindRelation(c->rel.oid);
    if (have != nullptr && SameShape(*have, c->rel)) return Status::OK();
    // The table as it is at the watermark (DDL waited for the chunk's
    // lock): what the stream shows next, had it changed the table.
    builder_.SetGeneratedColumns(c->rel.oid, c->generated);
    return builder_.Apply(pg::Message(c->rel), events);
  }

  Status RenderRow(Chunk* chunk, size_t i, event::EventLines* events) override {
    auto* c = static_cast<PgChunk*>(chunk);
    return builder_.ApplySnapshotRead(
        pg::Insert{c->rel.oid, std::move(c->rows[i])}, events);
  }

 private:
  Status Connect() {
    if (conn_) return Status::OK();
    CDC_ASSIGN_OR_RETURN(conn_, pg::Connection::Connect(o_.dsn, false));
    // DDL behind a chunk's lock waits for it, not the other way round for
    // long; and the session is ours to name in pg_stat_activity.
    CDC_RETURN_IF_ERROR(conn_->Exec("SET lock_timeout = '10s'").status());
    CDC_RETURN_IF_ERROR(
        conn_
            ->Exec("SET application_name = 'cdc-capture incremental "
                   "snapshot'")
            .status());
    return Status::OK();
  }
  Status Describe(PgChunk* c) {
    std::vector<bool> generated;
    CDC_ASSIGN_OR_RETURN(
        c->rel, DescribeTable(*conn_, table_, conn_->ServerVersion() >= 180000,
                              &generated));
    CDC_ASSIGN_OR_RETURN(key_, LookupPrimaryKey(*conn_, table_, c->rel));
    CDC_ASSIGN_OR_RETURN(c->generated, GeneratedNames(*conn_, table_.oid));
    return Status::OK();
  }

  const Options& o_;
  pg::EventBuilder& builder_;  // capture thread
  // Worker thread:
  std::unique_ptr<pg::Connection> conn_;
  Table table_;
  PrimaryKey key_;
};

}  // namespace

std::unique_ptr<ChunkSource> MakePgChunkSource(const Options& o,
                                               pg::EventBuilder* builder) {
  return std::make_unique<PgChunkSource>(o, builder);
}

}  // namespace cdc::capture
