// Turns decoded pgoutput messages into stored-form event lines
// (cdc/event/event.h), one message at a time: nothing of a transaction is
// kept but its commit LSN, xid and commit time, so memory does not grow with
// transaction size.
//
// Every event begins {"lsn","xid","ts","op" then, except for op m,
// "schema","table"; then:
//   c  "key"  replica-identity columns of the new row (null if the relation
//             has none), "before":null, "after" the new row
//   r  as c, for a row read by a snapshot (ApplySnapshotRead)
//   u  "key"  the identity of the row before the change: from the old tuple
//             when one came ('K' after a key change: key columns only; 'O'
//             under REPLICA IDENTITY FULL), else from the new row;
//      "before" the old row when 'O' came, else null; "after" the new row.
//      An unchanged TOASTed column ('u') is filled from an 'O' old tuple;
//      otherwise it is left out of "after" and named in "unchanged":[...].
//   d  "key" from the old tuple, "before" the old row when 'O' came, else
//      null, "after":null
//   t  one event per relation: "key","before","after" null and
//      "options":{"cascade":bool,"restart_identity":bool}
//   m  "prefix", "content" (a JSON string when it is text of the server
//      encoding, converted to UTF-8 as row values are; else its bytes in
//      base64 with "content_encoding":"base64"), "transactional"
//   s  before the first change to a relation (its first Relation message
//      arrived) unless the log already holds its shape (KnowSchemaEvent),
//      and before the first change after a Relation message that changes a
//      cached relation (its schema or table name, or its columns' names,
//      type OIDs, type modifiers such as a varchar length, or key flags).
//      Relations no change refers to (the partitions of a table published
//      through its root) get none. The event:
//      "key","before","after" null and
//      "columns":[{"name":..,"type_oid":..,"type_mod":..,"key":bool},...],
//      then "generated":[names...] when the relation has stored generated
//      columns (see SetGeneratedColumns). Identical repeats yield nothing.
//      EventLines::is_schema tells these lines apart.
// In a 'K' old tuple, a column that is not part of the key comes as 'n'
// ("not sent", not NULL) and is left out.
//
// A json/jsonb value that is the JSON literal null renders as `null`, as
// SQL NULL does. Events of op c, u and d that hold such values end with
// "json_null":[...], the JSON Pointers (RFC 6901) of those nulls, e.g.
// "/after/doc" or "/before/docs/2" (an element of a json[] column); every
// other null is SQL NULL.
//
// "lsn" is the transaction's commit LSN (Begin's final LSN) and "ts" its
// commit time. A non-transactional logical message has no transaction: its
// "lsn" is the message's own LSN, "xid" 0 and "ts" the clock's reading.
//
// Snapshot reads (op r) render through the same code as inserts: a row
// copied by COPY ... TO STDOUT holds the same text forms pgoutput sends
// (see copy_text.h), so a value looks the same read or streamed.
//
// Not thread-safe; one builder per replication connection. The relation
// cache survives reconnects (PostgreSQL resends Relation messages then, and
// a change made meanwhile is reported as op s).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"
#include "cdc/event/lines.h"
#include "cdc/pg/encoding.h"
#include "cdc/pg/pgoutput.h"
#include "cdc/pg/types.h"

namespace cdc::pg {

// The lines a builder yields (cdc/event/lines.h).
using EventLines = event::EventLines;

class EventBuilder {
 public:
  // `catalog` (may be null) must outlive the builder; the caller may add to
  // it between calls. `clock` returns µs since the Unix epoch (default:
  // cdc::NowMicros).
  explicit EventBuilder(const TypeCatalog* catalog = nullptr,
                        std::function<int64_t()> clock = {});
  // Not copied: it keeps a pointer into its own relation cache.
  EventBuilder(const EventBuilder&) = delete;
  EventBuilder& operator=(const EventBuilder&) = delete;

  // Feeds one message in stream order and appends the stored-form lines it
  // yields (each without '\n') to `events`. Begin and Commit open and close
  // the transaction; Relation updates the cache. BadInput for a change to a
  // relation with no Relation message, a tuple whose column count differs
  // from its Relation, a value that does not render (see types.h), or a
  // message out of place (a change outside a transaction, Begin inside
  // one). Nothing is appended on error.
  Status Apply(const Message& message, EventLines* events);

  // A row of relation `row.relation_oid` read by a snapshot: an event of op
  // r, rendered as an insert's. Errors as Apply's for an Insert.
  Status ApplySnapshotRead(const Insert& row, EventLines* events);
  // As ApplySnapshotRead, but the row's event (no newline) is appended to
  // `*out` (a batch of rows, say) and only a schema event that must come
  // before it goes to `schema`. Nothing is appended on error.
  Status AppendSnapshotRead(const Insert& row, EventLines* schema,
                            std::string* out);

  // Opens and closes a transaction explicitly (a snapshot's rows are one
  // transaction with the consistent point as its LSN).
  void BeginTransaction(Lsn commit_lsn, Xid xid, int64_t commit_time);
  void EndTransaction();
  bool in_transaction() const { return in_txn_; }

  // A schema event the log holds (its latest for that schema and table):
  // the first Relation message of a relation of that name and shape then
  // yields no schema event.
  void KnowSchemaEvent(std::string_view stored);

  // The cached Relation for `oid`, or null. Valid until the next Apply.
  const Relation* FindRelation(Oid oid) const;

  // How to read message content (default: as UTF-8). `text` (may be null)
  // must outlive the builder.
  void SetServerText(ServerText* text) { server_text_ = text; }

  // The stored generated columns of relation `oid` (PostgreSQL 15 does not
  // send them), as the caller found them in the catalog, for the next
  // Relation message of `oid`: they are named in its op s event, and a
  // change to them alone is a change of the relation.
  void SetGeneratedColumns(Oid oid, std::vector<std::string> names) {
    generated_[oid] = std::move(names);
  }

 private:
  Status ApplyRelation(const Relation& rel);
  Status ApplyInsert(const Insert& m, char op, EventLines* events);
  Status ApplyUpdate(const Update& m, EventLines* events);
  Status ApplyDelete(const Delete& m, EventLines* events);
  Status ApplyTruncate(const Truncate& m, EventLines* events);
  Status ApplyMessage(const LogicalMessage& m, EventLines* events);

  // A cached Relation, with its schema and table rendered once as
  // ,"schema":..,"table":.. for the head of each event.
  struct CachedRelation {
    Relation rel;
    std::string names_json;
    // Each column's ,"name": (its name checked and escaped once).
    std::vector<std::string> members;
    std::vector<std::string> generated;
    // Its description is news to the log: the next change to it comes
    // after a schema event.
    bool announce = false;
    bool has_key = false;  // a column is in the replica identity
    // An insert's head up to its key ({"lsn":..,"op":..,"table":..,"key":)
    // for op insert_head_op in transaction insert_head_txn.
    mutable std::string insert_head;
    mutable uint64_t insert_head_txn = 0;
    mutable char insert_head_op = 0;
  };
  static CachedRelation MakeCached(const Relation& rel, std::string names_json,
                                   std::vector<std::string> generated);
  // Appends the event of insert `m` under `op` (c or r) to `*line`.
  Status RenderInsert(const CachedRelation& cr, const Insert& m, char op,
                      std::string* line);

  // Appends what follows the head of the relation's schema event:
  // ,"key":null,"before":null,"after":null,"columns":[...]...}
  static void AppendShape(const CachedRelation& cr, std::string* out);
  // Appends the schema event of `cr` and remembers its shape as the log's.
  void Announce(CachedRelation* cr, EventLines* events);

  // The relation a change refers to, checking the tuples' column counts;
  // its schema event goes to `events` first when it is to be announced.
  Result<const CachedRelation*> RelationFor(EventLines* events, Oid oid,
                                            const char* what,
                                            const TupleData* a,
                                            const TupleData* b);
  Status NeedTransaction(const char* what) const;
  // Appends {"lsn":..,"xid":..,"ts":..,"op":.. and, given a relation,
  // ,"schema":..,"table":..
  void AppendHead(char op, const CachedRelation* rel, std::string* line) const;
  // Appends {"col":value,...} of the columns of `tuple` that have something
  // to show; with `keys_only`, only the replica-identity columns. `section`
  // ("key", "before", "after") names the object in "json_null" pointers.
  Status AppendRow(const CachedRelation& cr, const TupleData& tuple,
                   bool keys_only, std::string_view section, std::string* out);
  // Appends ,"before": and the old row when `old_kind` is 'O', else null.
  Status AppendBefore(const CachedRelation& cr, char old_kind,
                      const TupleData& old, std::string* out);
  // Appends the key object, or null if the relation has no key column.
  Status AppendKey(const CachedRelation& cr, const TupleData& tuple,
                   std::string* out);
  // Appends the new row as "after": an unchanged TOASTed column is taken
  // from `old` when `old_kind` allows, else its index goes to `unchanged`.
  Status AppendNewRow(const CachedRelation& cr, const TupleData& tuple,
                      char old_kind, const TupleData& old, std::string* out,
                      std::vector<size_t>* unchanged);
  static void AppendUnchanged(const Relation& rel,
                              const std::vector<size_t>& unchanged,
                              std::string* out);
  Status AppendColumn(const Relation& rel, size_t i, const TupleColumn& col,
                      std::string_view section, std::string* out);
  // Appends ,"json_null":[...] when the event's rows held JSON nulls, and
  // forgets them.
  void AppendJsonNulls(std::string* out);

  const TypeCatalog* catalog_;
  ServerText* server_text_ = nullptr;
  std::function<int64_t()> clock_;
  std::unordered_map<Oid, std::vector<std::string>> generated_;
  std::unordered_map<Oid, CachedRelation> relations_;
  // By ,"schema":..,"table":.. (CachedRelation::names_json): the shape of
  // the newest schema event the log holds or this builder yielded.
  std::unordered_map<std::string, std::string> known_shapes_;

  bool in_txn_ = false;
  uint64_t txn_ = 0;  // transactions begun (CachedRelation::insert_head)
  Xid xid_ = 0;
  // The relation RelationFor found last (a pointer into relations_).
  Oid last_oid_ = 0;
  CachedRelation* last_ = nullptr;
  // The open transaction's {"lsn":..,"xid":..,"ts":..,"op":" rendered once.
  std::string head_;
  // The current event's "json_null" pointers, as JSON strings joined by ','.
  std::string json_null_;
  JsonNulls value_nulls_;  // scratch for one value
};

}  // namespace cdc::pg
