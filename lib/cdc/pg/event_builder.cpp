#include "cdc/pg/event_builder.h"

#include <type_traits>
#include <utility>
#include <variant>

#include "cdc/base/time.h"
#include "cdc/pg/json_text.h"

namespace cdc::pg {

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

void AppendHeadFields(std::string_view lsn, Xid xid, std::string_view ts,
                      char op, std::string* line) {
  line->append("{\"lsn\":\"");
  line->append(lsn);
  line->append("\",\"xid\":");
  line->append(std::to_string(xid));
  line->append(",\"ts\":\"");
  line->append(ts);
  line->append("\",\"op\":\"");
  line->push_back(op);
  line->push_back('"');
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
  xid_ = xid;
  lsn_text_ = FormatLsn(commit_lsn);
  ts_text_ = FormatTimestamp(commit_time);
}

void EventBuilder::EndTransaction() { in_txn_ = false; }

const Relation* EventBuilder::FindRelation(Oid oid) const {
  auto it = relations_.find(oid);
  return it == relations_.end() ? nullptr : &it->second;
}

Status EventBuilder::Apply(const Message& message,
                           std::vector<std::string>* events) {
  return std::visit(
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
          return ApplyRelation(m, events);
        } else if constexpr (std::is_same_v<M, Insert>) {
          return ApplyInsert(m, events);
        } else if constexpr (std::is_same_v<M, Update>) {
          return ApplyUpdate(m, events);
        } else if constexpr (std::is_same_v<M, Delete>) {
          return ApplyDelete(m, events);
        } else if constexpr (std::is_same_v<M, Truncate>) {
          return ApplyTruncate(m, events);
        } else if constexpr (std::is_same_v<M, LogicalMessage>) {
          return ApplyMessage(m, events);
        } else {
          return Status::Internal(
              std::string("pgoutput stream message '") + MessageType(message) +
              "' passed to the event builder (streamed transactions are "
              "replayed by the caller)");
        }
      },
      message);
}

Status EventBuilder::NeedTransaction(const char* what) const {
  if (in_txn_) return Status::OK();
  return Status::BadInput(std::string("pgoutput ") + what +
                          " message outside a transaction");
}

Result<const Relation*> EventBuilder::RelationFor(Oid oid, const char* what,
                                                  const TupleData* a,
                                                  const TupleData* b) {
  CDC_RETURN_IF_ERROR(NeedTransaction(what));
  const Relation* rel = FindRelation(oid);
  if (rel == nullptr) {
    return Status::BadInput(std::string("pgoutput ") + what +
                            " for relation OID " + std::to_string(oid) +
                            " that no Relation message described");
  }
  for (const TupleData* tuple : {a, b}) {
    if (tuple != nullptr && tuple->size() != rel->columns.size()) {
      return Status::BadInput(std::string("pgoutput ") + what + " for " +
                              QualifiedName(*rel) + " has " +
                              std::to_string(tuple->size()) +
                              " columns but its Relation message has " +
                              std::to_string(rel->columns.size()));
    }
  }
  return rel;
}

void EventBuilder::AppendHead(char op, const Relation* rel,
                              std::string* line) const {
  AppendHeadFields(lsn_text_, xid_, ts_text_, op, line);
  if (rel != nullptr) {
    // Checked when the Relation arrived (ApplyRelation).
    line->append(",\"schema\":");
    (void)AppendJsonString(rel->nspname, line);
    line->append(",\"table\":");
    (void)AppendJsonString(rel->relname, line);
  }
}

Status EventBuilder::AppendColumn(const Relation& rel, size_t i,
                                  const TupleColumn& col,
                                  std::string* out) const {
  switch (col.kind) {
    case TupleColumn::Kind::kText: {
      Status s =
          AppendTextValue(rel.columns[i].type_oid, col.value, catalog_, out);
      if (!s.ok()) {
        return s.Annotate("column \"" + rel.columns[i].name + "\" of " +
                          QualifiedName(rel));
      }
      return s;
    }
    case TupleColumn::Kind::kBinary:
      AppendBinaryValue(col.value, out);
      return Status::OK();
    case TupleColumn::Kind::kNull:
    case TupleColumn::Kind::kUnchangedToast:
      break;
  }
  out->append("null");
  return Status::OK();
}

Status EventBuilder::AppendRow(const Relation& rel, const TupleData& tuple,
                               bool keys_only, std::string* out) const {
  out->push_back('{');
  bool first = true;
  for (size_t i = 0; i < tuple.size(); ++i) {
    if (keys_only && !rel.columns[i].is_key()) continue;
    if (tuple[i].kind == TupleColumn::Kind::kUnchangedToast) continue;
    if (!first) out->push_back(',');
    first = false;
    (void)AppendJsonString(rel.columns[i].name, out);
    out->push_back(':');
    CDC_RETURN_IF_ERROR(AppendColumn(rel, i, tuple[i], out));
  }
  out->push_back('}');
  return Status::OK();
}

Status EventBuilder::AppendKey(const Relation& rel, const TupleData& tuple,
                               std::string* out) const {
  for (const RelationColumn& c : rel.columns) {
    if (c.is_key()) return AppendRow(rel, tuple, true, out);
  }
  out->append("null");
  return Status::OK();
}

Status EventBuilder::AppendNewRow(const Relation& rel, const TupleData& tuple,
                                  char old_kind, const TupleData& old,
                                  std::string* out,
                                  std::vector<size_t>* unchanged) const {
  out->push_back('{');
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
    if (!first) out->push_back(',');
    first = false;
    (void)AppendJsonString(rel.columns[i].name, out);
    out->push_back(':');
    CDC_RETURN_IF_ERROR(AppendColumn(rel, i, *col, out));
  }
  out->push_back('}');
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

Status EventBuilder::ApplyRelation(const Relation& rel,
                                   std::vector<std::string>* events) {
  // Names are checked once here, so that every event can append them
  // without checking again.
  std::string scratch;
  CDC_RETURN_IF_ERROR(AppendName(rel.nspname, &scratch));
  CDC_RETURN_IF_ERROR(AppendName(rel.relname, &scratch));
  for (const RelationColumn& c : rel.columns) {
    CDC_RETURN_IF_ERROR(AppendName(c.name, &scratch));
  }
  auto it = relations_.find(rel.oid);
  if (it == relations_.end()) {
    relations_.emplace(rel.oid, rel);
    return Status::OK();
  }
  // PostgreSQL resends Relation messages with nothing changed (after a
  // reconnect, after cache invalidations such as autoanalyze's).
  if (SameShape(it->second, rel)) {
    it->second.replica_identity = rel.replica_identity;
    return Status::OK();
  }
  CDC_RETURN_IF_ERROR(NeedTransaction("Relation"));
  it->second = rel;
  std::string line;
  AppendHead('s', &it->second, &line);
  line.append(",\"key\":null,\"before\":null,\"after\":null,\"columns\":[");
  for (size_t i = 0; i < rel.columns.size(); ++i) {
    const RelationColumn& c = rel.columns[i];
    if (i > 0) line.push_back(',');
    line.append("{\"name\":");
    (void)AppendJsonString(c.name, &line);
    line.append(",\"type_oid\":");
    line.append(std::to_string(c.type_oid));
    line.append(c.is_key() ? ",\"key\":true}" : ",\"key\":false}");
  }
  line.append("]}");
  events->push_back(std::move(line));
  return Status::OK();
}

Status EventBuilder::ApplyInsert(const Insert& m,
                                 std::vector<std::string>* events) {
  CDC_ASSIGN_OR_RETURN(
      const Relation* rel,
      RelationFor(m.relation_oid, "Insert", &m.new_tuple, nullptr));
  std::string line;
  AppendHead('c', rel, &line);
  line.append(",\"key\":");
  CDC_RETURN_IF_ERROR(AppendKey(*rel, m.new_tuple, &line));
  line.append(",\"before\":null,\"after\":");
  std::vector<size_t> unchanged;
  CDC_RETURN_IF_ERROR(
      AppendNewRow(*rel, m.new_tuple, 0, m.new_tuple, &line, &unchanged));
  AppendUnchanged(*rel, unchanged, &line);
  line.push_back('}');
  events->push_back(std::move(line));
  return Status::OK();
}

Status EventBuilder::ApplyUpdate(const Update& m,
                                 std::vector<std::string>* events) {
  const TupleData* old = m.old_kind != 0 ? &m.old_tuple : nullptr;
  CDC_ASSIGN_OR_RETURN(
      const Relation* rel,
      RelationFor(m.relation_oid, "Update", &m.new_tuple, old));
  std::string line;
  AppendHead('u', rel, &line);
  line.append(",\"key\":");
  CDC_RETURN_IF_ERROR(AppendKey(*rel, old ? *old : m.new_tuple, &line));
  line.append(",\"before\":");
  if (m.old_kind == 'O') {
    CDC_RETURN_IF_ERROR(AppendRow(*rel, m.old_tuple, false, &line));
  } else {
    line.append("null");
  }
  line.append(",\"after\":");
  std::vector<size_t> unchanged;
  CDC_RETURN_IF_ERROR(AppendNewRow(*rel, m.new_tuple, m.old_kind,
                                   old ? *old : m.new_tuple, &line,
                                   &unchanged));
  AppendUnchanged(*rel, unchanged, &line);
  line.push_back('}');
  events->push_back(std::move(line));
  return Status::OK();
}

Status EventBuilder::ApplyDelete(const Delete& m,
                                 std::vector<std::string>* events) {
  CDC_ASSIGN_OR_RETURN(
      const Relation* rel,
      RelationFor(m.relation_oid, "Delete", &m.old_tuple, nullptr));
  std::string line;
  AppendHead('d', rel, &line);
  line.append(",\"key\":");
  CDC_RETURN_IF_ERROR(AppendKey(*rel, m.old_tuple, &line));
  line.append(",\"before\":");
  if (m.old_kind == 'O') {
    CDC_RETURN_IF_ERROR(AppendRow(*rel, m.old_tuple, false, &line));
  } else {
    line.append("null");
  }
  line.append(",\"after\":null}");
  events->push_back(std::move(line));
  return Status::OK();
}

Status EventBuilder::ApplyTruncate(const Truncate& m,
                                   std::vector<std::string>* events) {
  std::vector<std::string> lines;
  for (Oid oid : m.relation_oids) {
    CDC_ASSIGN_OR_RETURN(const Relation* rel,
                         RelationFor(oid, "Truncate", nullptr, nullptr));
    std::string line;
    AppendHead('t', rel, &line);
    line.append(
        ",\"key\":null,\"before\":null,\"after\":null,"
        "\"options\":{\"cascade\":");
    line.append(m.cascade() ? "true" : "false");
    line.append(",\"restart_identity\":");
    line.append(m.restart_identity() ? "true}}" : "false}}");
    lines.push_back(std::move(line));
  }
  for (std::string& line : lines) events->push_back(std::move(line));
  return Status::OK();
}

Status EventBuilder::ApplyMessage(const LogicalMessage& m,
                                  std::vector<std::string>* events) {
  std::string line;
  if (m.transactional()) {
    CDC_RETURN_IF_ERROR(NeedTransaction("Message"));
    AppendHead('m', nullptr, &line);
  } else {
    // Sent as soon as it is decoded, outside any transaction: it has only
    // its own position, and no time at all.
    AppendHeadFields(FormatLsn(m.lsn), m.xid, FormatTimestamp(clock_()), 'm',
                     &line);
  }
  line.append(",\"prefix\":");
  if (!AppendJsonString(m.prefix, &line)) {
    return Status::BadInput(
        "logical decoding message prefix is not valid "
        "UTF-8");
  }
  line.append(",\"content\":");
  if (!AppendJsonString(m.content, &line)) {
    line.push_back('"');
    AppendBase64(m.content, &line);
    line.append("\",\"content_encoding\":\"base64\"");
  }
  line.append(m.transactional() ? ",\"transactional\":true}"
                                : ",\"transactional\":false}");
  events->push_back(std::move(line));
  return Status::OK();
}

}  // namespace cdc::pg
