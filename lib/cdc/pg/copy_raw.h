// A COPY ... TO STDOUT run over a connection's socket without libpq.
//
// libpq hands out each CopyData message in a buffer of its own: a malloc, a
// copy and a free per row, about a tenth of capture's CPU in an initial
// snapshot. On a connection with no TLS or GSS encryption, idle, its input
// read to the end (libpq read the last ReadyForQuery and the server sends
// nothing unasked), the same exchange can be read straight from the socket
// into one buffer, each row handed out where it lies. The exchange ends,
// as libpq's would, at the server's ReadyForQuery, and libpq's next query
// runs as after any other. What libpq last recorded of the session stays
// as it was before the copy: the transaction status (a failed copy in a
// transaction block leaves the server's in error while libpq's says "in
// transaction"; callers treat both alike) and the parameters the server
// reports (ParameterStatus during the copy, e.g. after a configuration
// reload, is not passed on). Only a COPY TO STDOUT may be sent this way:
// the replies of another statement are taken for a broken connection.
// Should part of a message the server sent unasked (a notice) already sit
// in libpq's buffer, the reader meets the rest as nonsense and fails the
// copy, never mistaking it for rows.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "cdc/base/status.h"

namespace cdc::pg {

struct RawCopyOptions {
  // Called once, on the first error on_row returns, to ask the server to
  // stop sending (the rest of the exchange is then read and dropped).
  std::function<void()> cancel;
  // A NoticeResponse during the copy: its severity and primary message.
  std::function<void(const std::string& severity, const std::string& message)>
      notice;
  size_t buffer_bytes = 256u << 10;  // grows for a larger row
};

// Sends `sql` as a simple Query on `fd` and reads its replies to the
// ReadyForQuery that ends them, calling on_row with each CopyData message
// (valid until on_row returns). Returns the first error on_row returned,
// else the server's ErrorResponse as "COPY failed: MESSAGE" (classified by
// its SQLSTATE, as libpq's path does), else OK. `*broken` is set when the
// connection is no longer in step with the server (the socket failed, the
// server closed it, or a reply made no sense); the caller must then not use
// the connection again.
Status RawCopyOut(int fd, const std::string& sql,
                  const std::function<Status(std::string_view row)>& on_row,
                  const RawCopyOptions& o, bool* broken);

// Server errors that retrying cannot fix are configuration or permission
// problems, not an unavailable server: a missing table (42P01), wal_level
// not logical or an invalidated slot (55000), no free slots (53400), an
// unsupported feature (0A000); and insufficient privilege (42501, 28xxx).
Status ClassifySqlState(const char* code, Status s);

// libpq's messages span lines ("...failed: ...\n\tIs the server running
// ...?\n"); an error here is one line, with each run of whitespace one space.
std::string OneLine(const char* msg);

}  // namespace cdc::pg
