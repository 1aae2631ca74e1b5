// Conversion of text from a PostgreSQL server encoding to UTF-8.
//
// pgoutput converts row values and names to the client encoding (capture's
// sessions use UTF8), but sends the content of a logical decoding message
// as the bytes pg_logical_emit_message was given, in the database's own
// encoding. This converts such text as the server would have converted a
// value. Not thread-safe: one converter per thread.
#pragma once

#include <iconv.h>

#include <string>
#include <string_view>

#include "cdc/base/status.h"

namespace cdc::pg {

class ServerText {
 public:
  ServerText() = default;
  ~ServerText();
  ServerText(const ServerText&) = delete;
  ServerText& operator=(const ServerText&) = delete;

  // `encoding` as the server reports server_encoding ("UTF8", "LATIN1",
  // "WIN1252", ...). UTF8 and SQL_ASCII (which PostgreSQL never converts)
  // pass text through. Config for an encoding this build cannot convert
  // (MULE_INTERNAL); the converter then passes text through too.
  Status SetEncoding(std::string_view encoding);
  const std::string& encoding() const { return encoding_; }
  // Whether text is passed through as it is.
  bool identity() const { return cd_ == kNone; }

  // Appends `text` converted to UTF-8 to `out`. False, leaving `out` as it
  // was, if `text` is not valid in the server encoding (for example the
  // bytes of a bytea message). Passed-through text is appended as it is.
  bool ToUtf8(std::string_view text, std::string* out);

 private:
  static inline const iconv_t kNone = reinterpret_cast<iconv_t>(-1);
  std::string encoding_ = "UTF8";
  iconv_t cd_ = kNone;
};

}  // namespace cdc::pg
