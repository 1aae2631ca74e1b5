// A MariaDB table as capture renders it, whichever path reads its rows:
// the binlog (a table map) or the initial snapshot (information_schema and
// a prepared statement). Both describe a table with the same Columns and
// build its lines here, so a row comes out the same either way.
#pragma once

#include <string>
#include <vector>

#include "cdc/base/status.h"
#include "cdc/mariadb/values.h"

namespace cdc::capture::maria {

struct Table {
  std::string db, name;
  bool selected = false;
  bool signal = false;  // capture's own signal table (watermarks)
  std::vector<mariadb::Column> columns;
  std::string names_json;  // ,"schema":..,"table":..
  std::string shape;       // the schema event from ,"key":null on
  bool has_key = false;
  std::vector<std::vector<std::string>> labels;  // of ENUM and SET columns
};

// Fills each column's json_name, the table's names_json and shape, and
// has_key from db, name and columns (names, types, keys, charsets and
// labels set). `labels_utf8`: the labels are UTF-8 already (from
// information_schema), not in the column's charset (from a table map).
// BadInput when a name or label is not valid text.
Status Describe(Table* t, bool labels_utf8);

// A row's values ((*values)[i] column i's JSON, empty when the image
// leaves it out) as a JSON object: every column, or the key columns only.
void AppendObject(const std::vector<mariadb::Column>& cols,
                  const std::vector<std::string>& values, bool keys_only,
                  std::string* out);

}  // namespace cdc::capture::maria
