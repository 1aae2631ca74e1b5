#include "cdc/pg/event_builder.h"

#include <type_traits>
#include <utility>
#include <variant>

#include "cdc/base/time.h"
#include "cdc/event/json_text.h"
#include "cdc/log/schemas.h"

namespace cdc::pg {

using event::AppendBase64;
using event::AppendCompactJson;
using event::AppendJsonString;
using event::HexValue;
using event::IsDigit;
using event::IsJsonNumber;
using event::IsValidUtf8;

namespace {

std::string QualifiedName(const Relation& rel) {
  return rel.nspname + "." + rel.relname;
}

// Names from the catalog are UTF-8 when the server's encoding is; a name
// that is not cannot be shown, and saying so beats a line that is not JSON.
Status AppendName(std::string_view name, std::string* out) {
  if (AppendJsonString(name, out)) return Status::OK();
  return Status::BadInput(
      "pgoutput Relation message has a name that is not valid UTF-8");
}

// {"lsn":"..","xid":..,"ts":"..","op":" (the op and its closing quote
// follow).
std::string HeadPrefix(Lsn lsn, Xid xid, int64_t time) {
  std::string head = "{\"lsn\":\"";
  head.append(FormatLsn(lsn));
  head.append("\",\"xid\":");
  head.append(std::to_string(xid));
  head.append(",\"ts\":\"");
  head.append(FormatTimestamp(time));
  head.append("\",\"op\":\"");
  return head;
}

void AppendHeadFields(std::string_view head, char op, std::string* line) {
  line->append(head);
  line->push_back(op);
  line->push_back('"');
}

// A JSON Pointer reference token (RFC 6901): '~' and '/' escaped.
void AppendPointerToken(std::string_view name, std::string* out) {
  for (char c : name) {
    if (c == '~') {
      out->append("~0");
    } else if (c == '/') {
      out->append("~1");
    } else {
      out->push_back(c);
    }
  }
}

// Adds a pointer (a valid UTF-8 name: checked with its Relation) to a
// comma-separated list of JSON strings.
void AppendPointer(std::string_view pointer, std::string* list) {
  if (!list->empty()) list->push_back(',');
  (void)AppendJsonString(pointer, list);
}

// Appends a column's member name (CachedRelation::members), opening the
// object with '{' instead of the comma when it is the first.
void AppendMember(bool first, std::string_view member, std::string* out) {
  if (first) {
    out->push_back('{');
    member.remove_prefix(1);
  }
  out->append(member);
}

// Makes room in `line` for the rows of a change as they were sent (their
// names and text), so that rendering a large value does not grow the line
// by doubling: that copies it, and holds it twice meanwhile. `key` is the
// tuple the key comes from, `before` the old row ('O') or null.
void ReserveFor(const Relation& rel, const TupleData& key,
                const TupleData* before, const TupleData* after,
                std::string* line) {
  size_t n = line->size() + 256;
  for (size_t i = 0; i < rel.columns.size(); ++i) {
    const size_t name = rel.columns[i].name.size() + 8;
    if (rel.columns[i].is_key() && i < key.size())
      n += name + key[i].text().size();
    if (before != nullptr && i < before->size())
      n += name + (*before)[i].text().size();
    if (after != nullptr && i < after->size())
      n += name + (*after)[i].text().size();
  }
  line->reserve(n);
}

bool SameShape(const Relation& a, const Relation& b) {
  return a.nspname == b.nspname && a.relname == b.relname &&
         a.columns == b.columns;
}

}  // namespace

EventBuilder::EventBuilder(const TypeCatalog* catalog,
                           std::function<int64_t()> clock)
    : catalog_(catalog),
      clock_(clock ? std::move(clock) : std::function<int64_t()>(NowMicros)) {}

void EventBuilder::BeginTransaction(Lsn commit_lsn, Xid xid,
                                    int64_t commit_time) {
  in_txn_ = true;
  ++txn_;
  xid_ = xid;
  head_ = HeadPrefix(commit_lsn, xid, commit_time);
}

void EventBuilder::EndTransaction() { in_txn_ = false; }

const Relation* EventBuilder::FindRelation(Oid oid) const {
  auto it = relations_.find(oid);
  return it == relations_.end() ? nullptr : &it->second.rel;
}

Status EventBuilder::Apply(const Message& message, EventLines* events) {
  const size_t mark = events->size();
  Status s = std::visit(
      [&](const auto& m) -> Status {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, Begin>) {
          if (in_txn_) {
            return Status::BadInput(
                "pgoutput Begin of xid " + std::to_string(m.xid) +
                " inside transaction " + std::to_string(xid_));
          }
          BeginTransaction(m.final_lsn, m.xid, m.commit_time);
          return Status::OK();
        } else if constexpr (std::is_same_v<M, Commit>) {
          CDC_RETURN_IF_ERROR(NeedTransaction("Commit"));
          EndTransaction();
          return Status::OK();
        } else if constexpr (std::is_same_v<M, Origin> ||
                             std::is_same_v<M, Type>) {
          return Status::OK();
        } else if constexpr (std::is_same_v<M, Relation>) {
          return ApplyRelation(m);
        } else if constexpr (std::is_same_v<M, Insert>) {
          return ApplyInsert(m, 'c', events);
        } else if constexpr (std::is_same_v<M, Update>) {
          return ApplyUpdate(m, events);
        } else if constexpr (std::is_same_v<M, Delete>) {
          return ApplyDelete(m, events);
        } else if constexpr (std::is_same_v<M, Truncate>) {
          return ApplyTruncate(m, events);
        } else {
          static_assert(std::is_same_v<M, LogicalMessage>);
          return ApplyMessage(m, events);
        }
      },
      message);
  if (!s.ok()) events->Truncate(mark);  // nothing of a failed message
  return s;
}

Status EventBuilder::NeedTransaction(const char* what) const {
  if (in_txn_) return Status::OK();
  return Status::BadInput(std::string("pgoutput ") + what +
                          " message outside a transaction");
}

Result<const EventBuilder::CachedRelation*> EventBuilder::RelationFor(
    EventLines* events, Oid oid, const char* what, const TupleData* a,
    const TupleData* b) {
  CDC_RETURN_IF_ERROR(NeedTransaction(what));
  // The relation of the change before, most often (a snapshot's table):
  // the map's nodes never move or go, so the pointer stays valid.
  CachedRelation* cr = last_oid_ == oid ? last_ : nullptr;
  if (cr == nullptr) {
    auto it = relations_.find(oid);
    if (it == relations_.end()) {
      return Status::BadInput(std::string("pgoutput ") + what +
                              " for relation OID " + std::to_string(oid) +
                              " that no Relation message described");
    }
    cr = &it->second;
    last_oid_ = oid;
    last_ = cr;
  }
  const Relation& rel = cr->rel;
  for (const TupleData* tuple : {a, b}) {
    if (tuple != nullptr && tuple->size() != rel.columns.size()) {
      return Status::BadInput(std::string("pgoutput ") + what + " for " +
                              QualifiedName(rel) + " has " +
                              std::to_string(tuple->size()) +
                              " columns but its Relation message has " +
                              std::to_string(rel.columns.size()));
    }
  }
  if (cr->announce) Announce(cr, events);
  return cr;
}

void EventBuilder::AppendHead(char op, const CachedRelation* rel,
                              std::string* line) const {
  AppendHeadFields(head_, op, line);
  if (rel != nullptr) line->append(rel->names_json);
}

Status EventBuilder::AppendColumn(const Relation& rel, size_t i,
                                  const TupleColumn& col,
                                  std::string_view section, std::string* out) {
  switch (col.kind) {
    case TupleColumn::Kind::kText: {
      Status s = AppendTextValue(rel.columns[i].type_oid, col.text(), catalog_,
                                 out, &value_nulls_);
      if (!s.ok()) {
        return s.Annotate("column \"" + rel.columns[i].name + "\" of " +
                          QualifiedName(rel));
      }
      if (value_nulls_.any()) {
        std::string pointer = "/";
        pointer.append(section);
        pointer.push_back('/');
        AppendPointerToken(rel.columns[i].name, &pointer);
        if (value_nulls_.whole) AppendPointer(pointer, &json_null_);
        for (uint32_t e : value_nulls_.elements)
          AppendPointer(pointer + "/" + std::to_string(e), &json_null_);
      }
      return s;
    }
    case TupleColumn::Kind::kBinary:
      AppendBinaryValue(col.text(), out);
      return Status::OK();
    case TupleColumn::Kind::kNull:
    case TupleColumn::Kind::kUnchangedToast:
      break;
  }
  out->append("null");
  return Status::OK();
}

Status EventBuilder::AppendRow(const CachedRelation& cr, const TupleData& tuple,
                               bool keys_only, std::string_view section,
                               std::string* out) {
  const Relation& rel = cr.rel;
  bool first = true;
  for (size_t i = 0; i < tuple.size(); ++i) {
    if (keys_only && !rel.columns[i].is_key()) continue;
    if (tuple[i].kind == TupleColumn::Kind::kUnchangedToast) continue;
    AppendMember(first, cr.members[i], out);
    first = false;
    CDC_RETURN_IF_ERROR(AppendColumn(rel, i, tuple[i], section, out));
  }
  out->append(first ? "{}" : "}");
  return Status::OK();
}

Status EventBuilder::AppendKey(const CachedRelation& cr, const TupleData& tuple,
                               std::string* out) {
  if (cr.has_key) return AppendRow(cr, tuple, true, "key", out);
  out->append("null");
  return Status::OK();
}

Status EventBuilder::AppendNewRow(const CachedRelation& cr,
                                  const TupleData& tuple, char old_kind,
                                  const TupleData& old, std::string* out,
                                  std::vector<size_t>* unchanged) {
  const Relation& rel = cr.rel;
  bool first = true;
  for (size_t i = 0; i < tuple.size(); ++i) {
    const TupleColumn* col = &tuple[i];
    if (col->kind == TupleColumn::Kind::kUnchangedToast) {
      // The value did not change, so the old tuple's copy is the new value:
      // any column of an 'O' tuple, but of a 'K' tuple only key columns
      // ('n' elsewhere there means "not sent").
      bool from_old =
          (old_kind == 'O' &&
           old[i].kind != TupleColumn::Kind::kUnchangedToast) ||
          (old_kind == 'K' && rel.columns[i].is_key() && old[i].has_value());
      if (!from_old) {
        unchanged->push_back(i);
        continue;
      }
      col = &old[i];
    }
    AppendMember(first, cr.members[i], out);
    first = false;
    CDC_RETURN_IF_ERROR(AppendColumn(rel, i, *col, "after", out));
  }
  out->append(first ? "{}" : "}");
  return Status::OK();
}

void EventBuilder::AppendUnchanged(const Relation& rel,
                                   const std::vector<size_t>& unchanged,
                                   std::string* out) {
  if (unchanged.empty()) return;
  out->append(",\"unchanged\":[");
  for (size_t k = 0; k < unchanged.size(); ++k) {
    if (k > 0) out->push_back(',');
    (void)AppendJsonString(rel.columns[unchanged[k]].name, out);
  }
  out->push_back(']');
}

Status EventBuilder::ApplyRelation(const Relation& rel) {
  // Names are checked once here, so that every event can append them
  // without checking again.
  std::string names = ",\"schema\":";
  CDC_RETURN_IF_ERROR(AppendName(rel.nspname, &names));
  names.append(",\"table\":");
  CDC_RETURN_IF_ERROR(AppendName(rel.relname, &names));
  std::string scratch;
  for (const RelationColumn& c : rel.columns) {
    CDC_RETURN_IF_ERROR(AppendName(c.name, &scratch));
  }
  auto it = relations_.find(rel.oid);
  std::vector<std::string> generated;
  auto g = generated_.find(rel.oid);
  if (g != generated_.end()) {
    for (const std::string& name : g->second)
      CDC_RETURN_IF_ERROR(AppendName(name, &scratch));
    generated = std::move(g->second);
    generated_.erase(g);
  } else if (it != relations_.end()) {
    generated = it->second.generated;  // not looked up this time: as it was
  }
  if (it == relations_.end()) {
    it = relations_
             .emplace(rel.oid,
                      MakeCached(rel, std::move(names), std::move(generated)))
             .first;
    // The first sight of a relation: announced unless the log holds this
    // very shape already (the latest schema event of that name).
    std::string shape;
    AppendShape(it->second, &shape);
    auto known = known_shapes_.find(it->second.names_json);
    it->second.announce =
        known == known_shapes_.end() || known->second != shape;
    return Status::OK();
  }
  // PostgreSQL resends Relation messages with nothing changed (after a
  // reconnect, after cache invalidations such as autoanalyze's).
  if (SameShape(it->second.rel, rel) && it->second.generated == generated) {
    it->second.rel.replica_identity = rel.replica_identity;
    return Status::OK();
  }
  CDC_RETURN_IF_ERROR(NeedTransaction("Relation"));
  it->second = MakeCached(rel, std::move(names), std::move(generated));
  it->second.announce = true;
  return Status::OK();
}

EventBuilder::CachedRelation EventBuilder::MakeCached(
    const Relation& rel, std::string names_json,
    std::vector<std::string> generated) {
  CachedRelation cr;
  cr.rel = rel;
  cr.names_json = std::move(names_json);
  cr.generated = std::move(generated);
  for (const RelationColumn& c : rel.columns) {
    std::string& m = cr.members.emplace_back(",");
    (void)AppendJsonString(c.name, &m);  // checked by ApplyRelation
    m.push_back(':');
    cr.has_key = cr.has_key || c.is_key();
  }
  return cr;
}

void EventBuilder::Announce(CachedRelation* cr, EventLines* events) {
  std::string shape;
  AppendShape(*cr, &shape);
  known_shapes_[cr->names_json] = shape;
  cr->announce = false;
  std::string& line = *events->Add();
  events->MarkSchema();
  AppendHead('s', cr, &line);
  line.append(shape);
}

void EventBuilder::AppendShape(const CachedRelation& cr, std::string* out) {
  const Relation& rel = cr.rel;
  std::string& line = *out;
  line.append(",\"key\":null,\"before\":null,\"after\":null,\"columns\":[");
  for (size_t i = 0; i < rel.columns.size(); ++i) {
    const RelationColumn& c = rel.columns[i];
    if (i > 0) line.push_back(',');
    line.append("{\"name\":");
    (void)AppendJsonString(c.name, &line);
    line.append(",\"type_oid\":");
    line.append(std::to_string(c.type_oid));
    if (c.type_modifier >= 0) {  // e.g. numeric(10,2), timestamp(3)
      line.append(",\"type_mod\":");
      line.append(std::to_string(c.type_modifier));
    }
    line.append(c.is_key() ? ",\"key\":true}" : ",\"key\":false}");
  }
  line.push_back(']');
  const std::vector<std::string>& gen = cr.generated;
  if (!gen.empty()) {
    line.append(",\"generated\":[");
    for (size_t i = 0; i < gen.size(); ++i) {
      if (i > 0) line.push_back(',');
      (void)AppendJsonString(gen[i], &line);
    }
    line.push_back(']');
  }
  line.push_back('}');
}

void EventBuilder::KnowSchemaEvent(std::string_view stored) {
  std::string_view names, shape;
  if (log::SplitSchemaEvent(stored, &names, &shape))
    known_shapes_[std::string(names)] = std::string(shape);
}

Status EventBuilder::AppendBefore(const CachedRelation& cr, char old_kind,
                                  const TupleData& old, std::string* out) {
  out->append(",\"before\":");
  // Only a full old row ('O', REPLICA IDENTITY FULL) is a "before".
  if (old_kind != 'O') {
    out->append("null");
    return Status::OK();
  }
  return AppendRow(cr, old, false, "before", out);
}

void EventBuilder::AppendJsonNulls(std::string* out) {
  if (json_null_.empty()) return;
  out->append(",\"json_null\":[");
  out->append(json_null_);
  out->push_back(']');
  json_null_.clear();
}

Status EventBuilder::ApplySnapshotRead(const Insert& row, EventLines* events) {
  const size_t mark = events->size();
  Status s = ApplyInsert(row, 'r', events);
  if (!s.ok()) events->Truncate(mark);
  return s;
}

Status EventBuilder::AppendSnapshotRead(const Insert& row, EventLines* schema,
                                        std::string* out) {
  const size_t mark = schema->size();
  const size_t at = out->size();
  Status s = [&]() -> Status {
    CDC_ASSIGN_OR_RETURN(const CachedRelation* cached,
                         RelationFor(schema, row.relation_oid, "Insert",
                                     &row.new_tuple, nullptr));
    // A large value is rendered into room made for it, not into a buffer
    // doubled (and copied) as it grows.
    ReserveFor(cached->rel, row.new_tuple, nullptr, &row.new_tuple, out);
    return RenderInsert(*cached, row, 'r', out);
  }();
  if (!s.ok()) {
    schema->Truncate(mark);
    out->resize(at);
  }
  return s;
}

Status EventBuilder::ApplyInsert(const Insert& m, char op, EventLines* events) {
  CDC_ASSIGN_OR_RETURN(
      const CachedRelation* cached,
      RelationFor(events, m.relation_oid, "Insert", &m.new_tuple, nullptr));
  std::string& line = *events->Add();
  ReserveFor(cached->rel, m.new_tuple, nullptr, &m.new_tuple, &line);
  return RenderInsert(*cached, m, op, &line);
}

Status EventBuilder::RenderInsert(const CachedRelation& cr, const Insert& m,
                                  char op, std::string* line) {
  json_null_.clear();
  if (cr.insert_head_txn != txn_ || cr.insert_head_op != op) {
    cr.insert_head.clear();
    AppendHead(op, &cr, &cr.insert_head);
    cr.insert_head.append(",\"key\":");
    cr.insert_head_txn = txn_;
    cr.insert_head_op = op;
  }
  line->append(cr.insert_head);
  CDC_RETURN_IF_ERROR(AppendKey(cr, m.new_tuple, line));
  line->append(",\"before\":null,\"after\":");
  std::vector<size_t> unchanged;
  CDC_RETURN_IF_ERROR(
      AppendNewRow(cr, m.new_tuple, 0, m.new_tuple, line, &unchanged));
  AppendUnchanged(cr.rel, unchanged, line);
  AppendJsonNulls(line);
  line->push_back('}');
  return Status::OK();
}

Status EventBuilder::ApplyUpdate(const Update& m, EventLines* events) {
  const TupleData* old = m.old_kind != 0 ? &m.old_tuple : nullptr;
  CDC_ASSIGN_OR_RETURN(
      const CachedRelation* cached,
      RelationFor(events, m.relation_oid, "Update", &m.new_tuple, old));
  const Relation* rel = &cached->rel;
  json_null_.clear();
  std::string& line = *events->Add();
  ReserveFor(*rel, old ? *old : m.new_tuple,
             m.old_kind == 'O' ? &m.old_tuple : nullptr, &m.new_tuple, &line);
  AppendHead('u', cached, &line);
  line.append(",\"key\":");
  CDC_RETURN_IF_ERROR(AppendKey(*cached, old ? *old : m.new_tuple, &line));
  CDC_RETURN_IF_ERROR(AppendBefore(*cached, m.old_kind, m.old_tuple, &line));
  line.append(",\"after\":");
  std::vector<size_t> unchanged;
  CDC_RETURN_IF_ERROR(AppendNewRow(*cached, m.new_tuple, m.old_kind,
                                   old ? *old : m.new_tuple, &line,
                                   &unchanged));
  AppendUnchanged(*rel, unchanged, &line);
  AppendJsonNulls(&line);
  line.push_back('}');
  return Status::OK();
}

Status EventBuilder::ApplyDelete(const Delete& m, EventLines* events) {
  CDC_ASSIGN_OR_RETURN(
      const CachedRelation* cached,
      RelationFor(events, m.relation_oid, "Delete", &m.old_tuple, nullptr));
  const Relation* rel = &cached->rel;
  json_null_.clear();
  std::string& line = *events->Add();
  ReserveFor(*rel, m.old_tuple, m.old_kind == 'O' ? &m.old_tuple : nullptr,
             nullptr, &line);
  AppendHead('d', cached, &line);
  line.append(",\"key\":");
  CDC_RETURN_IF_ERROR(AppendKey(*cached, m.old_tuple, &line));
  CDC_RETURN_IF_ERROR(AppendBefore(*cached, m.old_kind, m.old_tuple, &line));
  line.append(",\"after\":null");
  AppendJsonNulls(&line);
  line.push_back('}');
  return Status::OK();
}

Status EventBuilder::ApplyTruncate(const Truncate& m, EventLines* events) {
  for (Oid oid : m.relation_oids) {
    CDC_ASSIGN_OR_RETURN(
        const CachedRelation* rel,
        RelationFor(events, oid, "Truncate", nullptr, nullptr));
    std::string& line = *events->Add();
    AppendHead('t', rel, &line);
    line.append(
        ",\"key\":null,\"before\":null,\"after\":null,"
        "\"options\":{\"cascade\":");
    line.append(m.cascade() ? "true" : "false");
    line.append(",\"restart_identity\":");
    line.append(m.restart_identity() ? "true}}" : "false}}");
  }
  return Status::OK();
}

Status EventBuilder::ApplyMessage(const LogicalMessage& m, EventLines* events) {
  std::string& line = *events->Add();
  if (m.transactional()) {
    CDC_RETURN_IF_ERROR(NeedTransaction("Message"));
    AppendHead('m', nullptr, &line);
  } else {
    // Sent as soon as it is decoded, outside any transaction: it has only
    // its own position, and no time at all.
    AppendHeadFields(HeadPrefix(m.lsn, 0, clock_()), 'm', &line);
  }
  line.append(",\"prefix\":");
  if (!AppendJsonString(m.prefix, &line)) {
    return Status::BadInput(
        "logical decoding message prefix is not valid "
        "UTF-8");
  }
  line.append(",\"content\":");
  // The content is the bytes the message was given, in the server's
  // encoding (pgoutput converts only the prefix).
  bool text = false;
  if (server_text_ == nullptr || server_text_->identity()) {
    text = AppendJsonString(m.content, &line);
  } else {
    std::string utf8;
    text =
        server_text_->ToUtf8(m.content, &utf8) && AppendJsonString(utf8, &line);
  }
  if (!text) {
    line.push_back('"');
    AppendBase64(m.content, &line);
    line.append("\",\"content_encoding\":\"base64\"");
  }
  line.append(m.transactional() ? ",\"transactional\":true}"
                                : ",\"transactional\":false}");
  return Status::OK();
}

}  // namespace cdc::pg
