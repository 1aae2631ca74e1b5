// Events in their stored and native NDJSON forms.
//
// THE STORED EVENT (defined here once; cdc-log-format(5), EVENTS, is the
// user-facing copy). Each event is one line of a frame's payload: a JSON
// object whose members come in this order:
//
//   "lsn"     string "X/Y": the source transaction's commit LSN (a
//             non-transactional message: its own LSN)
//   "xid"     integer: the transaction id (0 for a non-transactional
//             message)
//   "ts"      string, RFC 3339 UTC with 6 fraction digits: commit time
//   "op"      one letter: c insert, u update, d delete, t truncate,
//             r snapshot read, m logical decoding message, s schema change
//   "schema", "table"   strings; absent only for op m
//   then, by op:
//   c u d r   "key" (replica-identity columns: object, or null when the
//             table has none), "before" (whole old row under REPLICA
//             IDENTITY FULL, else null), "after" (new row, null for d);
//             optional "unchanged":[names] (TOASTed columns left out of
//             "after") and "json_null":[JSON Pointers]; r also
//             "snapshot":"first"/"last"/"only" on a table's first, last
//             or only row
//   t         "key","before","after" null, "options":{"cascade":bool,
//             "restart_identity":bool}
//   m         "prefix" string, "content" string (text, or base64 with
//             "content_encoding":"base64"), "transactional" bool
//   s         "key","before","after" null, "columns":[{"name","type_oid",
//             ["type_mod",] "key"}...] (type_mod: atttypmod, only when the
//             type has one), optional "generated":[names]
//   Any other member is kept and passed on as it is (cdc-log import).
//
// Row objects map column names to values rendered as cdc/pg/types.h says.
// "seq" and "last" are not stored: seq is implied by the frame, "last" by
// TXN_END. The native form a reader prints is the stored object with
// "seq" first and, on the last event of a source transaction,
// "last":true at the end. Other forms are made by renderers (renderer.h);
// stored.h finds the members of a stored event without a DOM.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"

namespace cdc::event {

// Appends the native line (with '\n') for a stored event to `out`.
void AppendNative(uint64_t seq, std::string_view stored, bool last,
                  std::string* out);

// The native line as three pieces that, written one after the other, are
// what AppendNative appends; `body` points into `stored`, `head` into
// `scratch`. For writing a large event out without copying it.
struct NativePieces {
  std::string_view head, body, tail;
};
NativePieces SplitNative(uint64_t seq, std::string_view stored, bool last,
                         char (&scratch)[32]);

// The leading fields of a stored event, read without parsing the rest.
struct EventHead {
  std::string lsn;
  uint64_t xid = 0;
  std::string ts;
  std::string op;
  std::string schema;
  std::string table;
};
// False if `stored` does not begin with the canonical keys.
bool ParseHead(std::string_view stored, EventHead* head);

// The same leading fields as views into `stored`, for readers that judge
// every event: no copy, no allocation. True only for the exact head the
// writers store ({"lsn":"..","xid":N,"ts":"..","op":".." then
// ,"schema":"..","table":".." or, for op m, ,"prefix":) with no escape in
// any of its strings; ParseHead then reads the same values. False says
// nothing about the event: use ParseHead for it.
struct HeadView {
  std::string_view lsn, ts, op, schema, table;
  uint64_t xid = 0;
  size_t op_at = 0;  // offset in `stored` of the op's value
  size_t end = 0;    // offset in `stored` just past the last field read
};
bool ScanHead(std::string_view stored, HeadView* head);
// ScanHead's first half: reads lsn, xid and ts and sets `op_at`.
bool ScanHeadStart(std::string_view stored, HeadView* head);
// ScanHead's second half, for a line whose first `op_at` bytes equal
// those of a line ScanHead read (the events of one transaction share lsn,
// xid and ts): reads op, schema and table from `op_at` and sets `end`,
// leaving lsn, xid and ts as they are. Same result as ScanHead then.
bool ScanHeadFrom(std::string_view stored, size_t op_at, HeadView* head);

// One event accepted by `cdc-log import`, in stored form.
struct ImportedEvent {
  std::string stored;
  char op = 0;
  Lsn lsn = 0;
  uint64_t xid = 0;
  int64_t ts = 0;  // µs since epoch
};

// Validates one input line and renders its stored form. The contract
// (also in cdc-log(1)): a JSON object with
//   "lsn"  string "X/Y"                        required
//   "xid"  integer >= 0                        required
//   "ts"   RFC 3339 string                     required
//   "op"   one of c u d r t m s                required
//   "schema", "table"  strings                 required unless op is m
//   "key", "before", "after"  object or null   optional
// Any other keys are kept as they are (compacted; numbers keep their text);
// "seq" and "last" are dropped (the log assigns them). Nesting deeper than
// kMaxJsonDepth, a number beyond a double's range and a repeated top-level
// key are refused. BadInput with a one-line reason otherwise. Linear time.
Result<ImportedEvent> ParseImportLine(std::string_view line);

}  // namespace cdc::event
