// Column values as Debezium's PostgreSQL connector renders them (through
// JsonConverter, schemas.enable=false), from the native stored value and
// the column's PostgreSQL type (its oid and type modifier, as a schema
// event "s" records them). See cdc-tail(1), FORMATS (Debezium).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cdc/event/renderer.h"

namespace cdc::event {

// PostgreSQL type oids the conversions know.
namespace pgtype {
inline constexpr uint32_t kBytea = 17, kJson = 114, kFloat4 = 700,
                          kFloat8 = 701, kMoney = 790, kDate = 1082,
                          kTime = 1083, kTimestamp = 1114, kTimestamptz = 1184,
                          kInterval = 1186, kTimetz = 1266, kBit = 1560,
                          kVarbit = 1562, kNumeric = 1700, kJsonb = 3802;
}  // namespace pgtype

// True when a value of this type is rendered other than as stored.
bool DebeziumConverts(uint32_t oid, const RenderOptions& o);

// Appends the Debezium form of the stored JSON value `v` (its text, as
// the log holds it) of a column of type `oid` with modifier `typmod` (-1:
// none). `snapshot_read`: the value is of a row read by a snapshot (op r,
// initial or incremental), which the connector reads through JDBC rather
// than from the stream; a few values (a date's infinities) differ between
// the two. A value this cannot read (a form the writer does not produce,
// money in a locale whose form it does not know, numeric NaN in precise
// mode, for which Debezium has no value) is appended as stored. The JSON
// null of a json column is the caller's to tell from SQL NULL (the event's
// "json_null"): this appends null for both.
void AppendDebeziumValue(std::string_view v, uint32_t oid, int32_t typmod,
                         const RenderOptions& o, bool snapshot_read,
                         std::string* out);

}  // namespace cdc::event
