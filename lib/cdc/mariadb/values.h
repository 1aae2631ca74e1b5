// Column values of MariaDB row images, rendered as the log's JSON (the
// conventions cdc-capture(1) lists for PostgreSQL, and its MariaDB section
// for the types PostgreSQL does not have).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/mariadb/binlog.h"

namespace cdc::mariadb {

// How the bytes of a text column become UTF-8.
class Charset {
 public:
  enum Kind { kUtf8, kLatin1, kBinary, kAscii, kIconv };
  // From MariaDB's character set name (utf8mb4, latin1, binary, ...).
  // Config when neither this code nor iconv knows it.
  static Result<Charset> ForName(std::string_view name);
  Kind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  // Appends `bytes` as a JSON string (base64 for binary). BadInput when
  // they are not valid text of the charset.
  Status AppendJson(std::string_view bytes, std::string* out) const;
  // Converts to UTF-8 (binary: the bytes as they are).
  Status ToUtf8(std::string_view bytes, std::string* out) const;

 private:
  Kind kind_ = kUtf8;
  std::string name_;
  std::string iconv_name_;
};

// One column of a table map, resolved for rendering.
struct Column {
  std::string name;
  std::string json_name;  // "name": as a row object's member starts
  uint8_t type = 0;       // as logged
  uint8_t real = 0;       // RealType()
  uint16_t meta = 0;
  bool is_unsigned = false;
  bool key = false;
  const Charset* charset = nullptr;  // text, ENUM and SET columns
  const std::vector<std::string>* labels = nullptr;  // ENUM and SET
};

// A DATE, TIME, DATETIME or TIMESTAMP as the binary protocol gives it
// (MYSQL_TIME): `hour` counts whole hours of a TIME (up to 838).
struct WireTime {
  bool neg = false;
  uint32_t year = 0, month = 0, day = 0;
  uint32_t hour = 0, minute = 0, second = 0, micros = 0;
};

// Appends the JSON of a value a prepared statement's row gives (the binary
// protocol; see RowStream), exactly as AppendValue renders the same value
// from a row image. Integers, YEAR: Int/Uint; FLOAT and DOUBLE: Float and
// Double; temporal types: Time (TIMESTAMP read in a session whose
// time_zone is +00:00); everything else: Bytes, the value as the server
// sends it with character_set_results NULL (DECIMAL's text, BIT's bytes,
// text in the column's charset, ENUM and SET labels, GEOMETRY's SRID and
// WKB). BadInput for bytes that are not a value of the column's type.
void AppendWireInt(int64_t v, std::string* out);
void AppendWireUint(uint64_t v, std::string* out);
void AppendWireFloat(float v, std::string* out);
void AppendWireDouble(double v, std::string* out);
Status AppendWireTime(const Column& c, const WireTime& t, std::string* out);
Status AppendWireBytes(const Column& c, std::string_view b, std::string* out);

// Decodes the value at the front of *in for `c`, appends its JSON and
// advances *in past it. BadInput when the bytes end early or do not form
// a value of the type; Config for a type this release does not read.
Status AppendValue(const Column& c, std::string_view* in, std::string* out);

// Decodes the row image at the front of *rows (a rows event's: the null
// bitmap of the columns `present` marks, then their values) and advances
// *rows past it. (*values)[i] is column i's JSON ("null" for NULL), empty
// when the image leaves the column out. BadInput when the image is cut
// short or a value is malformed.
Status DecodeRowImage(const std::vector<Column>& cols,
                      const std::vector<bool>& present, std::string_view* rows,
                      std::vector<std::string>* values);

// The column's type as the schema event names it ("int unsigned",
// "decimal(10,2)", "varchar", "datetime(3)", ...).
std::string TypeName(const Column& c);

// For tests and oracles: DECIMAL's binary form to text ("-12.50").
Result<std::string> DecodeDecimal(std::string_view bytes, int precision,
                                  int scale, size_t* used);

}  // namespace cdc::mariadb
