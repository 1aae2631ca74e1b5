// The initial snapshot's row readers and the event builder on arbitrary
// COPY data: the first byte picks text or binary COPY and the number of
// columns, the next bytes their types (from those binary COPY decodes,
// and a few that it does not, for text), and the rest is a sequence of
// CopyData messages, each a 2-byte length then its bytes, read and
// rendered in order as TableCopier does.
#include <algorithm>
#include <string_view>

#include "cdc/pg/copy_binary.h"
#include "cdc/pg/copy_text.h"
#include "cdc/pg/event_builder.h"
#include "cdc/pg/types.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace t = cdc::pg::type_oid;
  static constexpr cdc::pg::Oid kTypes[] = {
      t::kBool,    t::kInt2,   t::kInt4,        t::kInt8,  t::kOid,  t::kText,
      t::kVarchar, t::kBpchar, t::kName,        t::kUuid,  t::kJson, t::kJsonb,
      t::kNumeric, t::kDate,   t::kTimestamptz, t::kFloat8};
  constexpr size_t kBinaryTypes = 12;  // the first ones
  std::string_view in(reinterpret_cast<const char*>(data), size);
  if (in.empty()) return 0;
  const auto mode = static_cast<unsigned char>(in[0]);
  in.remove_prefix(1);
  const bool binary = (mode & 0x80) != 0;
  const size_t ncols = std::min<size_t>(1 + (mode & 7), in.size());
  cdc::pg::Relation rel;
  rel.oid = 16384;
  rel.nspname = "public";
  rel.relname = "t";
  std::vector<cdc::pg::Oid> types;
  for (size_t i = 0; i < ncols; ++i) {
    const auto b = static_cast<unsigned char>(in[i]);
    const cdc::pg::Oid type =
        kTypes[binary ? b % kBinaryTypes : b % std::size(kTypes)];
    types.push_back(type);
    cdc::pg::RelationColumn c;
    c.flags = i == 0 ? 1 : 0;
    c.name = "c" + std::to_string(i);
    c.type_oid = type;
    rel.columns.push_back(c);
  }
  in.remove_prefix(ncols);
  if (rel.columns.empty()) return 0;
  cdc::pg::EventBuilder builder;
  cdc::pg::EventLines lines;
  builder.BeginTransaction(0x1000, 0, 0);
  if (!builder.Apply(rel, &lines).ok()) return 0;
  cdc::pg::CopyBinaryReader reader(types);
  cdc::pg::Insert row;
  row.relation_oid = rel.oid;
  while (in.size() >= 2) {
    size_t n = (static_cast<unsigned char>(in[0]) << 8) |
               static_cast<unsigned char>(in[1]);
    in.remove_prefix(2);
    n = std::min(n, in.size());
    const std::string_view msg = in.substr(0, n);
    in.remove_prefix(n);
    bool got = true;
    const cdc::Status s =
        binary ? reader.Next(msg, &row.new_tuple, &got)
               : cdc::pg::ParseCopyTextRow(msg, ncols, &row.new_tuple);
    if (!s.ok() || !got) continue;
    lines.clear();
    (void)builder.ApplySnapshotRead(row, &lines);
  }
  (void)reader.Finish();
  return 0;
}
