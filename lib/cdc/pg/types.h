// Rendering of PostgreSQL column values as JSON, by type OID, as
// cdc-capture(1) (EVENTS, Types) fixes it:
//
//   int2 int4 int8 oid        JSON number
//   float4 float8             JSON number; NaN, Infinity, -Infinity as strings
//   numeric                   JSON string (exact), NaN/Infinity included
//   bool                      true / false
//   json jsonb                embedded JSON, compacted (numbers, key order and
//                             duplicate keys kept exactly as sent); a value
//                             that is the JSON literal null is reported in
//                             JsonNulls, since it renders as SQL NULL does
//   bytea                     base64 JSON string
//   date                      "YYYY-MM-DD"
//   timestamp                 "YYYY-MM-DDTHH:MM:SS[.ffffff]"
//   timestamptz               UTC "YYYY-MM-DDTHH:MM:SS.ffffffZ"
//   ±infinity dates/stamps    "infinity" / "-infinity"
//   one-dimensional arrays    JSON array, elements by their own rule, NULL
//                             elements as null
//   everything else           JSON string of the text form (time, timetz,
//                             interval, uuid, text, varchar, char(n) with its
//                             padding, inet, enums, multi-dimensional arrays,
//                             arrays with explicit bounds, ...)
//
// Years are numbered astronomically, as ISO 8601 does: 1 BC is year 0000,
// 2 BC is -0001 ("0044-03-15 BC" → "-0043-03-15"), and a year outside
// 0000-9999 carries a sign ("+10000-01-01").
//
// The input is a value in PostgreSQL's text output form, as pgoutput sends
// it without `binary`. The session must use DateStyle=ISO, bytea_output hex
// or escape, and client_encoding UTF8; timestamptz values may carry any UTC
// offset. Pure functions, safe to call from any thread. JSON string and
// base64 helpers are in cdc/event/json_text.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cdc/base/status.h"

namespace cdc::pg {

using Oid = uint32_t;

// Built-in type OIDs (PostgreSQL's pg_type.dat; stable across versions).
namespace type_oid {
inline constexpr Oid kBool = 16;
inline constexpr Oid kBytea = 17;
inline constexpr Oid kChar = 18;
inline constexpr Oid kName = 19;
inline constexpr Oid kInt8 = 20;
inline constexpr Oid kInt2 = 21;
inline constexpr Oid kInt4 = 23;
inline constexpr Oid kText = 25;
inline constexpr Oid kOid = 26;
inline constexpr Oid kJson = 114;
inline constexpr Oid kXml = 142;
inline constexpr Oid kFloat4 = 700;
inline constexpr Oid kFloat8 = 701;
inline constexpr Oid kMoney = 790;
inline constexpr Oid kMacaddr = 829;
inline constexpr Oid kInet = 869;
inline constexpr Oid kCidr = 650;
inline constexpr Oid kBpchar = 1042;
inline constexpr Oid kVarchar = 1043;
inline constexpr Oid kDate = 1082;
inline constexpr Oid kTime = 1083;
inline constexpr Oid kTimestamp = 1114;
inline constexpr Oid kTimestamptz = 1184;
inline constexpr Oid kInterval = 1186;
inline constexpr Oid kTimetz = 1266;
inline constexpr Oid kBit = 1560;
inline constexpr Oid kVarbit = 1562;
inline constexpr Oid kNumeric = 1700;
inline constexpr Oid kUuid = 2950;
inline constexpr Oid kJsonb = 3802;
}  // namespace type_oid

// What the caller knows from pg_type about types that are not built in.
// Both maps are optional; a type found in neither renders as a string.
struct TypeCatalog {
  // Domain OID → pg_type.typbasetype (which may itself be a domain or an
  // array type).
  std::unordered_map<Oid, Oid> domain_base;
  // Array type OID → pg_type.typelem, for array types whose element type is
  // not built in (enum[], domain[], ...) and whose typdelim is ','.
  std::unordered_map<Oid, Oid> array_element;
};

// Where a rendered value holds a json/jsonb value that is the JSON literal
// null, which renders as `null` just as SQL NULL does: the value itself
// (`whole`), or elements of a one-dimensional array (their 0-based indexes,
// ascending).
struct JsonNulls {
  bool whole = false;
  std::vector<uint32_t> elements;

  bool any() const { return whole || !elements.empty(); }
  void clear() {
    whole = false;
    elements.clear();
  }
};

// Appends the JSON rendering of `text`, a value of type `type_oid` in text
// output form, to `out`. `catalog` may be null. BadInput with a one-line
// message (naming the type and the value, shortened) when the text does not
// have the form PostgreSQL gives that type, or a string is not valid UTF-8;
// `out` is then left as it was. A json/jsonb value that is not strict
// RFC 8259 JSON (PostgreSQL's json accepts unpaired \u surrogate escapes) is
// rendered as a JSON string of its text instead. `json_nulls` (may be null)
// is cleared, then filled as described above.
Status AppendTextValue(Oid type_oid, std::string_view text,
                       const TypeCatalog* catalog, std::string* out,
                       JsonNulls* json_nulls = nullptr);

// The OID of the built-in type named `name` in pg_catalog ("int4", "_int4"
// for its array, ...), among those this file knows; 0 for any other name.
// A pgoutput Type message names a domain by its base type (as it was at
// the change), so this finds a domain's base even after it was dropped.
Oid BuiltinTypeOid(std::string_view name);

// Appends a value sent in binary form ('b'): a base64 JSON string.
void AppendBinaryValue(std::string_view bytes, std::string* out);

}  // namespace cdc::pg
