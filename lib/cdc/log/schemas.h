// LOG/schemas.ndjson: every schema event (op s) of the log, with its seq,
// so that a reader starting anywhere knows the column types of every
// relation without reading the log from its beginning (and after
// retention removed the segment that held a relation's schema event).
//
// One line per schema event, in seq order, each the stored event with its
// seq put first:
//   {"seq":12,"lsn":"0/16B3F28","xid":750,...,"op":"s","schema":"public",
//    "table":"orders",...,"columns":[...]}
// The writer (LogWriter::AppendSchema) appends and fdatasyncs a line
// before the event itself goes into a frame, so the file holds every
// schema event the log holds durably, and possibly lines of events that
// never became durable (a crash) or were aborted: those have seqs at or
// beyond the log's end, and the writer cuts them when it opens the log
// (or aborts the transaction) before any other event takes their seqs. A
// line cut short by a crash is the file's torn tail, cut the same way.
// Retention never touches the file, so lines of the events of removed
// segments stay (they are what a reader starting after them learns types
// from); cdc-backup copies it. A log without schema events has none.
//
// What cdc-log verify checks (VerifyLog): every schema event of the
// retained segments has its line, equal to it; no line of a seq within
// them is of another event; lines below the earliest retained seq are
// schema events in seq order (their events are gone); lines at or beyond
// the end are the leftovers above (a note). A reader uses only lines
// below where it starts (consume::LearnSchemas checks the ones it relies
// on against the log).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"

namespace cdc::log {

inline constexpr const char* kSchemasFile = "schemas.ndjson";
// A larger file is not ours (about 4 million schema events of 256 bytes).
inline constexpr uint64_t kMaxSchemasBytes = 1ull << 30;
inline constexpr size_t kMaxSchemaLineBytes = 16u << 20;

struct SchemaEntry {
  uint64_t seq = 0;
  std::string stored;  // the stored event, as in its frame
};

std::string SchemasPath(const std::string& dir);

// The file's line for the schema event `stored` at `seq`.
std::string SchemaLine(uint64_t seq, std::string_view stored);

// Whether `stored`, an event line in stored form, is a schema event: its
// "op", the fourth member of the head every stored event begins with
// ({"lsn":"X/Y","xid":N,"ts":"...","op":"s"...), is "s".
bool IsSchemaEvent(std::string_view stored);

// The entries of the file at DIR (none when it does not exist), in seq
// order, dropping a torn last line. Corruption naming the line for a line
// that is not one of ours, or seqs out of order.
// `valid_bytes` (if not null) is set to the length of the whole lines.
Result<std::vector<SchemaEntry>> ReadSchemas(const std::string& dir,
                                             uint64_t* valid_bytes = nullptr);

// A stored schema event's name part (,"schema":..,"table":.. as written)
// and shape (from ,"key":null, on): what a source compares to decide
// whether a relation needs a new schema event. False when it has neither.
bool SplitSchemaEvent(std::string_view stored, std::string_view* names,
                      std::string_view* shape);

}  // namespace cdc::log
