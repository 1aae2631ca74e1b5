// Pieces of the Debezium value conventions (debezium_values.h) shared by
// debezium_values.cpp (numbers, money, bits, bytes, JSON) and
// debezium_time.cpp (date, time and interval types). Not a public API.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "cdc/event/renderer.h"

namespace cdc::event::dbz {

inline void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;
  out->append(buf, static_cast<size_t>(end - buf));
}

// Appends `d` as Jackson writes a Java double: Double.toString's layout
// (see debezium_values.cpp) as a JSON number, NaN and the infinities as
// the strings "NaN", "Infinity" and "-Infinity".
void AppendJavaDouble(double d, std::string* out);

// The same for a Java float (Float.toString): a float's shortest digits,
// so 0.1f is "0.1", not the double's "0.10000000149011612".
void AppendJavaFloat(float f, std::string* out);

// Java's (long) and (int) casts of a double: toward zero, saturating, NaN
// to 0.
int64_t JavaDoubleToLong(double d);
int32_t JavaDoubleToInt(double d);

// A bit or varbit value `s` (its digits) of a column of `typmod` bits as
// Debezium has it: a boolean for one bit, else io.debezium.data.Bits in
// base64 (PostgreSQL's connector: no more bytes than the highest set bit
// needs; `column_sized`, the MySQL connector's: the column's bits). False
// when `s` is not digits 0 and 1.
bool AppendBits(std::string_view s, int32_t typmod, bool column_sized,
                std::string* out);

// The Debezium form of the content `s` (a JSON string's, without quotes
// or escapes) of a date, time, timetz, timestamp, timestamptz or interval
// value; `snapshot_read` as for AppendDebeziumValue. False, appending
// nothing, when `s` is not a form it reads.
bool AppendTimeValue(std::string_view s, uint32_t oid, int32_t typmod,
                     const RenderOptions& o, bool snapshot_read,
                     std::string* out);

}  // namespace cdc::event::dbz
