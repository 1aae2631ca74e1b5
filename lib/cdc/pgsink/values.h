// The log's JSON forms of column values (cdc-capture(1), Types) turned back
// into PostgreSQL's text input forms, by the target column's type.
//
//   SQL NULL, JSON null      NULL; in a json/jsonb column, the JSON literal
//                            null when the event's "json_null" names it
//   true / false             t / f
//   numbers                  their JSON text (exact: no float round trip)
//   json, jsonb              the value's compact JSON text, whatever its kind
//   bytea                    base64 decoded, written \x + hex
//   date, timestamp[tz]      astronomical years back to AD/BC: "0000-12-31"
//                            is 0001-12-31 BC, "-0043-03-15" 0044-03-15 BC,
//                            "+10000-01-01" 10000-01-01
//   arrays                   a JSON array becomes an array literal, each
//                            element converted by the element type's rule
//   anything else            the string as it is (text forms: numeric,
//                            time, interval, uuid, inet, enums, ...)
//
// Pure functions, safe from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/event/json_object.h"

namespace cdc::pgsink {

enum class ValueKind { kText, kBytea, kDate, kTimestamp, kJson };

struct ColumnType {
  ValueKind kind = ValueKind::kText;
  bool array = false;  // a one-dimensional array of `kind`
};

// The conversion for a column whose type (domains resolved to their base
// type) has OID `base_oid`; `elem_oid` is the element type's (again a
// domain's base) for an array type, else 0.
ColumnType ClassifyType(uint32_t base_oid, uint32_t elem_oid);

// A value as event::Fields gives it: its kind, its compact JSON text and,
// for a string, the decoded string.
struct JsonValue {
  event::JsonKind kind = event::JsonKind::kNull;
  std::string_view text;
  std::string_view str;
};

// Whether the event's json_null list names the value (element -1) or the
// element `i` of the array.
using JsonNullTest = std::function<bool(int element)>;

// Appends the text input form of `v` for a column of type `t`; returns
// false (nothing appended) for SQL NULL. BadInput for a value the type
// cannot take in this form (base64 that is not, a date that is not ISO).
Result<bool> AppendValue(const ColumnType& t, const JsonValue& v,
                         const JsonNullTest& json_null, std::string* out);

// `value` (a text input form) as one element of an array literal: quoted,
// with " and \ escaped.
void AppendArrayElement(std::string_view value, std::string* out);

// The elements of `text`, a compact JSON array that was checked before,
// as views into it.
void SplitJsonArray(std::string_view text,
                    std::vector<std::string_view>* elems);

// An ISO 8601 date or timestamp as the log writes it, in PostgreSQL's
// input form (see above). BadInput when it does not start with a year.
Status AppendDateTime(std::string_view iso, std::string* out);

}  // namespace cdc::pgsink
