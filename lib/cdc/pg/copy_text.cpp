#include "cdc/pg/copy_text.h"

#include <cstring>

#include "cdc/event/json_text.h"

namespace cdc::pg {

namespace {

// Appends the unescaped text of one field (no tab or newline inside).
// Follows CopyReadAttributesText: \b \f \n \r \t \v, \ooo octal (1-3
// digits), \xhh hex (1-2 digits), any other escaped byte stands for itself.
Status Unescape(std::string_view f, std::string* out) {
  out->clear();
  size_t i = 0;
  while (i < f.size()) {
    const char* bs =
        static_cast<const char*>(memchr(f.data() + i, '\\', f.size() - i));
    const size_t end = bs ? static_cast<size_t>(bs - f.data()) : f.size();
    out->append(f.data() + i, end - i);
    if (bs == nullptr) break;
    i = end + 1;
    if (i >= f.size())
      return Status::BadInput("COPY row ends inside a backslash escape");
    char c = f[i++];
    switch (c) {
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'v':
        out->push_back('\v');
        break;
      case 'x': {
        int v = i < f.size() ? event::HexValue(f[i]) : -1;
        if (v < 0) {
          out->push_back('x');
          break;
        }
        ++i;
        if (i < f.size() && event::HexValue(f[i]) >= 0)
          v = v * 16 + event::HexValue(f[i++]);
        out->push_back(static_cast<char>(v));
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          int v = c - '0';
          for (int k = 0; k < 2 && i < f.size() && f[i] >= '0' && f[i] <= '7';
               ++k)
            v = v * 8 + (f[i++] - '0');
          out->push_back(static_cast<char>(v));
        } else {
          out->push_back(c);
        }
    }
  }
  return Status::OK();
}

}  // namespace

Status ParseCopyTextRow(std::string_view line, size_t columns, TupleData* row) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  row->resize(columns);
  size_t col = 0;
  size_t start = 0;
  for (;;) {
    const char* tab = static_cast<const char*>(
        memchr(line.data() + start, '\t', line.size() - start));
    const size_t end =
        tab ? static_cast<size_t>(tab - line.data()) : line.size();
    if (col >= columns) break;
    std::string_view f = line.substr(start, end - start);
    TupleColumn& c = (*row)[col];
    if (f == "\\N") {
      c.kind = TupleColumn::Kind::kNull;
      c.value.clear();
      c.view = {};
    } else {
      c.view = {};
      c.kind = TupleColumn::Kind::kText;
      CDC_RETURN_IF_ERROR(Unescape(f, &c.value));
    }
    ++col;
    if (tab == nullptr) {
      if (col == columns) return Status::OK();
      break;
    }
    start = end + 1;
  }
  // A zero-column row is an empty line.
  if (columns == 0 && line.empty()) return Status::OK();
  size_t found = line.empty() ? 0 : 1;
  for (char ch : line) found += ch == '\t';
  return Status::BadInput("COPY row has " + std::to_string(found) +
                          " columns, expected " + std::to_string(columns));
}

}  // namespace cdc::pg
