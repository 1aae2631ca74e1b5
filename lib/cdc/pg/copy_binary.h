// Rows of COPY ... TO STDOUT (FORMAT binary) (PostgreSQL's "Binary Format"
// of COPY), turned into the text output form pgoutput sends, for the
// column types whose binary form maps to that text exactly and whatever
// the session's settings: bool, int2, int4, int8, oid, text, varchar,
// bpchar, name, uuid, json and jsonb. The server spends less per row on
// binary COPY than on text (no output function, no escaping), and so does
// the reader (no unescaping); a table with a column of any other type
// (dates, numerics and floats among them, whose text depends on settings
// or on output code we do not repeat) is copied in text format instead.
//
// Pure; no libpq.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/pg/pgoutput.h"

namespace cdc::pg {

// Whether a column of type `type` can be copied in binary format.
bool BinaryCopyDecodes(Oid type);

// Reads one binary COPY, a CopyData message at a time. The server sends
// the file header with the first row, then one row per message, then the
// trailer (a field count of -1).
class CopyBinaryReader {
 public:
  // `types` are the columns' types, each BinaryCopyDecodes.
  explicit CopyBinaryReader(std::vector<Oid> types)
      : types_(std::move(types)) {}

  // Room for the longest decoded text (a uuid's 36 characters).
  static constexpr size_t kScratchBytes = 40;

  // Parses one CopyData message. Sets *got_row when it held a row, which is
  // then in `row` (resized to the columns), each column kText in the type's
  // text output form, or kNull. Values are views (TupleColumn::view) into
  // `msg` or into this reader: valid until the next call, and while `msg`
  // is. BadInput naming the problem for a missing or wrong header, a
  // wrong field count or length, a value past the message's end, bytes
  // after a row or the trailer, or a message after the trailer.
  Status Next(std::string_view msg, TupleData* row, bool* got_row);

  // OK once the trailer was read; BadInput otherwise (the copy ended early).
  Status Finish() const;

 private:
  std::vector<Oid> types_;
  std::string scratch_;  // kScratchBytes per column, for decoded values
  bool header_ = false;
  bool trailer_ = false;
};

}  // namespace cdc::pg
