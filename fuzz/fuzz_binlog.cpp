// The MariaDB binlog decoder on arbitrary events, as a hostile or broken
// server would send them: the input is a sequence of events, each a 2-byte
// length then its bytes. Every event is parsed by its type; a table map is
// kept, and the rows events after it are decoded value by value against
// its columns, as capture renders them. A checksummed stream's CRC32 is
// made right first unless the event's first length byte is odd, so the
// fuzzer reaches the decoders behind the check as well as the check.
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cdc/base/coding.h"
#include "cdc/mariadb/binlog.h"
#include "cdc/mariadb/values.h"

namespace {

using namespace cdc::mariadb;

// Text columns get one of a few charsets, by collation number.
const Charset* CharsetFor(uint32_t collation) {
  static const std::vector<Charset>* sets = [] {
    auto* v = new std::vector<Charset>;
    for (const char* name : {"utf8mb4", "latin1", "binary", "ascii", "ucs2"}) {
      auto c = Charset::ForName(name);
      if (c.ok()) v->push_back(*c);
    }
    return v;
  }();
  return collation == 0 ? nullptr : &(*sets)[collation % sets->size()];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  Format format;
  std::map<uint64_t, TableMap> maps;
  std::map<uint64_t, std::vector<Column>> columns;
  std::vector<std::string> values;
  (void)ParseGtidText(in.substr(0, 32));
  while (in.size() >= 2) {
    const bool fix_crc = (static_cast<uint8_t>(in[0]) & 1) == 0;
    size_t n = (static_cast<uint8_t>(in[0]) << 8) | static_cast<uint8_t>(in[1]);
    in.remove_prefix(2);
    n = std::min(n, in.size());
    std::string ev(in.substr(0, n));
    in.remove_prefix(n);
    auto h = ParseHeader(ev);
    if (!h.ok()) continue;
    if (format.checksum && fix_crc && ev.size() >= kHeaderLen + 4) {
      char crc[4];
      cdc::PutFixed32(crc,
                      Crc32(std::string_view(ev).substr(0, ev.size() - 4)));
      std::memcpy(ev.data() + ev.size() - 4, crc, 4);
    }
    if (h->type == kFormatDescriptionEvent) {
      auto body = EventBody(ev, *h, Format{});
      if (!body.ok()) continue;
      auto f = ParseFormatDescription(*body);
      if (f.ok()) format = *f;
      continue;
    }
    auto body = EventBody(ev, *h, format);
    if (!body.ok()) continue;
    switch (h->type) {
      case kRotateEvent:
        (void)ParseRotate(*body);
        break;
      case kGtidEvent:
        (void)ParseGtid(*body, h->server_id);
        break;
      case kGtidListEvent:
        (void)ParseGtidList(*body);
        break;
      case kXidEvent:
        (void)ParseXid(*body);
        break;
      case kQueryEvent:
        (void)ParseQuery(*body, format);
        break;
      case kTableMapEvent: {
        auto tm = ParseTableMap(*body, format);
        if (!tm.ok()) break;
        std::vector<Column> cols(tm->types.size());
        for (size_t i = 0; i < cols.size(); ++i) {
          Column& c = cols[i];
          c.type = tm->types[i];
          c.meta = tm->meta[i];
          c.real = RealType(c.type, c.meta);
          c.is_unsigned = i < tm->is_unsigned.size() && tm->is_unsigned[i];
          c.charset =
              CharsetFor(i < tm->collations.size() ? tm->collations[i] : 0);
        }
        const uint64_t id = tm->table_id;
        TableMap& kept = maps[id];
        kept = std::move(*tm);
        for (size_t i = 0; i < cols.size(); ++i) {
          if (i < kept.enum_values.size() && cols[i].real == 247)
            cols[i].labels = &kept.enum_values[i];
          if (i < kept.set_values.size() && cols[i].real == 248)
            cols[i].labels = &kept.set_values[i];
        }
        columns[id] = std::move(cols);
        break;
      }
      default: {
        auto r = ParseRows(h->type, *body, format);
        if (!r.ok()) break;
        auto it = columns.find(r->table_id);
        if (it == columns.end() || it->second.size() != r->columns) break;
        std::string_view rows = r->rows;
        for (int guard = 0; !rows.empty() && guard < 10000; ++guard) {
          if (!DecodeRowImage(it->second, r->present, &rows, &values).ok())
            break;
          if (r->kind == 'u' &&
              !DecodeRowImage(it->second, r->present_after, &rows, &values)
                   .ok())
            break;
        }
        break;
      }
    }
  }
  return 0;
}
