#include "cdc/capture/tables.h"

#include <cstdlib>

namespace cdc::capture {

std::string EstimateText(uint64_t estimate) {
  return estimate == 0 ? "estimate unknown" : "~" + std::to_string(estimate);
}

Result<std::vector<Table>> ListTables(pg::Connection& conn,
                                      const std::string& publication) {
  CDC_ASSIGN_OR_RETURN(
      pg::PgResult r,
      conn.ExecParams(
          "SELECT c.oid, pt.schemaname, pt.tablename, c.relreplident, "
          "c.relkind, pt.attnames::text, pt.rowfilter, "
          "CASE WHEN c.relkind = 'p' THEN (SELECT COALESCE(sum(GREATEST("
          "k.reltuples, 0)), 0) FROM pg_partition_tree(c.oid) p JOIN pg_class "
          "k ON k.oid = p.relid WHERE p.isleaf) ELSE GREATEST(c.reltuples, 0) "
          "END::bigint "
          "FROM pg_publication_tables pt "
          "JOIN pg_namespace n ON n.nspname = pt.schemaname "
          "JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = "
          "pt.tablename WHERE pt.pubname = $1 ORDER BY 2, 3",
          {publication}));
  std::vector<Table> tables;
  for (int i = 0; i < r.rows(); ++i) {
    Table t;
    CDC_ASSIGN_OR_RETURN(t.oid,
                         pg::ParseReplyUint32(r.get(i, 0), "pg_class.oid"));
    t.schema = r.get(i, 1);
    t.name = r.get(i, 2);
    t.replica_identity = r.get(i, 3).empty() ? 'd' : r.get(i, 3)[0];
    t.kind = r.get(i, 4).empty() ? 'r' : r.get(i, 4)[0];
    t.attnames = r.get(i, 5);
    t.rowfilter = r.is_null(i, 6) ? "" : r.get(i, 6);
    t.estimate = std::strtoull(r.get(i, 7).c_str(), nullptr, 10);
    tables.push_back(std::move(t));
  }
  return tables;
}

Result<pg::Relation> DescribeTable(pg::Connection& conn, const Table& t,
                                   bool generated_published,
                                   std::vector<bool>* generated) {
  CDC_ASSIGN_OR_RETURN(
      pg::PgResult r,
      conn.ExecParams(
          "SELECT a.attname, a.atttypid, a.atttypmod, CASE c.relreplident "
          "WHEN 'f' THEN true WHEN 'n' THEN false ELSE EXISTS (SELECT 1 FROM "
          "pg_index i WHERE i.indrelid = c.oid AND CASE c.relreplident WHEN "
          "'d' THEN i.indisprimary ELSE i.indisreplident END AND a.attnum = "
          "ANY (i.indkey)) END, a.attgenerated <> '' "
          "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
          "WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped "
          "AND (a.attgenerated = '' OR $3::bool) "
          "AND a.attname = ANY ($2::name[]) ORDER BY a.attnum",
          {std::to_string(t.oid), t.attnames,
           generated_published ? "true" : "false"}));
  pg::Relation rel;
  rel.oid = t.oid;
  rel.nspname = t.schema;
  rel.relname = t.name;
  rel.replica_identity = t.replica_identity;
  generated->clear();
  for (int i = 0; i < r.rows(); ++i) {
    pg::RelationColumn c;
    c.name = r.get(i, 0);
    CDC_ASSIGN_OR_RETURN(c.type_oid,
                         pg::ParseReplyUint32(r.get(i, 1), "atttypid"));
    c.type_modifier = std::atoi(r.get(i, 2).c_str());
    c.flags = r.get(i, 3) == "t" ? 1 : 0;
    generated->push_back(r.get(i, 4) == "t");
    rel.columns.push_back(std::move(c));
  }
  return rel;
}

Result<std::vector<std::string>> GeneratedNames(pg::Connection& conn,
                                                pg::Oid oid) {
  CDC_ASSIGN_OR_RETURN(
      pg::PgResult r,
      conn.ExecParams(
          "SELECT attname FROM pg_attribute WHERE attrelid = $1 AND attnum > 0 "
          "AND NOT attisdropped AND attgenerated <> '' ORDER BY attnum",
          {std::to_string(oid)}));
  std::vector<std::string> names;
  for (int i = 0; i < r.rows(); ++i) names.push_back(r.get(i, 0));
  return names;
}

std::string CopySql(pg::Connection& conn, const Table& t,
                    const pg::Relation& rel, const std::vector<bool>& generated,
                    bool binary) {
  const std::string to = binary ? " TO STDOUT (FORMAT binary)" : " TO STDOUT";
  std::string cols;
  bool any_generated = false;
  for (size_t i = 0; i < rel.columns.size(); ++i) {
    if (i > 0) cols += ", ";
    cols += conn.QuoteIdent(rel.columns[i].name);
    any_generated = any_generated || generated[i];
  }
  const std::string name =
      conn.QuoteIdent(t.schema) + "." + conn.QuoteIdent(t.name);
  // COPY of a plain table is the fastest form, and copies only that table
  // (not its inheritance children, which pgoutput reports as themselves).
  if (t.kind == 'r' && t.rowfilter.empty() && !any_generated &&
      !rel.columns.empty())
    return "COPY " + name + " (" + cols + ")" + to;
  std::string sql = "COPY (SELECT " + (cols.empty() ? std::string() : cols) +
                    " FROM " + (t.kind == 'r' ? "ONLY " : "") + name;
  if (!t.rowfilter.empty()) sql += " WHERE " + t.rowfilter;
  return sql + ")" + to;
}

Result<PrimaryKey> LookupPrimaryKey(pg::Connection& conn, const Table& t,
                                    const pg::Relation& rel) {
  CDC_ASSIGN_OR_RETURN(
      pg::PgResult r,
      conn.ExecParams(
          "SELECT a.attname, format_type(a.atttypid, a.atttypmod) "
          "FROM pg_index i, unnest(i.indkey) WITH ORDINALITY k(attnum, n) "
          "JOIN pg_attribute a ON a.attrelid = $1 AND a.attnum = k.attnum "
          "WHERE i.indrelid = $1 AND i.indisprimary ORDER BY k.n",
          {std::to_string(t.oid)}));
  if (r.rows() == 0)
    return Status::NotFound("table " + t.schema + "." + t.name +
                            " has no primary key (an incremental snapshot "
                            "reads a table in key order)");
  PrimaryKey k;
  for (int i = 0; i < r.rows(); ++i) {
    k.names.push_back(r.get(i, 0));
    k.types.push_back(r.get(i, 1));
    size_t c = 0;
    while (c < rel.columns.size() && rel.columns[c].name != k.names.back()) ++c;
    if (c == rel.columns.size())
      return Status::Usage("key column " + k.names.back() + " of " + t.schema +
                           "." + t.name +
                           " is not published (the publication's column "
                           "list leaves it out)");
    k.columns.push_back(c);
  }
  return k;
}

std::string ChunkSql(pg::Connection& conn, const Table& t,
                     const pg::Relation& rel, const PrimaryKey& key,
                     const std::optional<std::vector<std::string>>& after,
                     uint32_t limit) {
  std::string cols, keys, values;
  for (size_t i = 0; i < rel.columns.size(); ++i) {
    if (i > 0) cols += ", ";
    cols += conn.QuoteIdent(rel.columns[i].name);
  }
  for (size_t i = 0; i < key.names.size(); ++i) {
    if (i > 0) {
      keys += ", ";
      values += ", ";
    }
    keys += conn.QuoteIdent(key.names[i]);
    if (after) values += conn.QuoteLiteral((*after)[i]) + "::" + key.types[i];
  }
  std::string sql = "COPY (SELECT " + cols + " FROM " +
                    (t.kind == 'r' ? "ONLY " : "") + conn.QuoteIdent(t.schema) +
                    "." + conn.QuoteIdent(t.name);
  std::string where;
  if (!t.rowfilter.empty()) where = "(" + t.rowfilter + ")";
  // A row comparison orders composite keys of any btree-orderable types.
  if (after)
    where += (where.empty() ? "" : " AND ") + std::string("(") + keys +
             ") > (" + values + ")";
  if (!where.empty()) sql += " WHERE " + where;
  return sql + " ORDER BY " + keys + " LIMIT " + std::to_string(limit) +
         ") TO STDOUT";
}

}  // namespace cdc::capture
