// Rows of COPY ... TO STDOUT in text format (PostgreSQL's "Text Format" of
// COPY): columns separated by a tab, the row ended by '\n', NULL as \N, and
// backslash escapes for backslash, tab, newline and the other control
// characters. Each value is then the type's text output form, exactly what
// pgoutput sends for it, so snapshot rows render through the same code as
// streamed ones (EventBuilder).
//
// Pure; no libpq.
#pragma once

#include <cstddef>
#include <string_view>

#include "cdc/base/status.h"
#include "cdc/pg/pgoutput.h"

namespace cdc::pg {

// Splits `line` (one CopyData message, with or without its final '\n')
// into `row`, which is resized to `columns` (its strings' buffers are
// reused from row to row) with each column kText, or kNull for \N.
// BadInput naming the problem when the row does not hold exactly `columns`
// columns or ends inside an escape.
Status ParseCopyTextRow(std::string_view line, size_t columns, TupleData* row);

}  // namespace cdc::pg
