// The top-level members of a stored event (see event.h), found by one scan
// of its text without building a DOM or decoding values.
//
// Renderers read events the log already holds: the writer produced them
// (capture's event builder, or `cdc-log import` after checking the JSON),
// and the frame checksum vouches for the bytes. The scan still trusts
// nothing it reads: it never looks outside the line, nests by counting
// (no recursion, so depth costs nothing), and reports a line that is not an
// object of members as Corruption instead of guessing.
#pragma once

#include <cstdint>
#include <string_view>

#include "cdc/base/lsn.h"
#include "cdc/base/status.h"

namespace cdc::event {

struct StoredFields {
  // Each member's value as its JSON text in the line (a string keeps its
  // quotes and escapes); empty when the member is absent.
  std::string_view lsn, xid, ts, op, schema, table;
  std::string_view key, before, after, unchanged, json_null;
  std::string_view snapshot;  // op r: "first", "last" or "only" (a table's)
  std::string_view prefix, content, content_encoding, transactional;
  std::string_view options, columns;
  std::string_view gtid, file, pos;  // a MariaDB log's binlog position

  // Decoded from the above by ScanStored.
  Lsn lsn_value = 0;
  uint64_t xid_value = 0;
  char op_code = 0;
};

// Fills `f` from `line`. Corruption (naming the problem, not the line)
// when `line` is not one JSON object of members, or lacks a well-formed
// "lsn", "xid", "ts" or one-letter "op".
Status ScanStored(std::string_view line, StoredFields* f);

// Calls fn(element) with the JSON text of each element of the array whose
// text is `array` (as found by ScanStored). False if it is not an array.
template <typename Fn>
bool ForEachElement(std::string_view array, Fn&& fn);

// The JSON text of the value that starts at line[*p] (no leading white
// space); moves *p past it. False when the text ends first or the value is
// not well formed at the top (nested values are only bracket-matched).
bool SkipJsonValue(std::string_view line, size_t* p);

// The content of a JSON string token (quotes removed) when it holds no
// escape; false otherwise.
bool PlainStringContent(std::string_view token, std::string_view* content);

// Appends "schema.table" as one JSON string, from the JSON string tokens
// `schema` and `table`. False (nothing appended) if either is not one.
bool AppendQualifiedName(std::string_view schema, std::string_view table,
                         std::string* out);

template <typename Fn>
bool ForEachElement(std::string_view array, Fn&& fn) {
  if (array.size() < 2 || array.front() != '[') return false;
  size_t p = 1;
  auto ws = [&] {
    while (p < array.size() && (array[p] == ' ' || array[p] == '\n' ||
                                array[p] == '\t' || array[p] == '\r'))
      ++p;
  };
  ws();
  if (p < array.size() && array[p] == ']') return p + 1 == array.size();
  while (p < array.size()) {
    ws();
    size_t start = p;
    if (!SkipJsonValue(array, &p)) return false;
    fn(array.substr(start, p - start));
    ws();
    if (p >= array.size()) return false;
    if (array[p] == ']') return p + 1 == array.size();
    if (array[p] != ',') return false;
    ++p;
  }
  return false;
}

}  // namespace cdc::event
