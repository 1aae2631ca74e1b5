#include "cdc/log/schemas.h"

#include <fcntl.h>

#include <charconv>

#include "cdc/base/fs.h"

namespace cdc::log {

namespace {

constexpr std::string_view kPrefix = "{\"seq\":";

}  // namespace

std::string SchemasPath(const std::string& dir) {
  return JoinPath(dir, kSchemasFile);
}

std::string SchemaLine(uint64_t seq, std::string_view stored) {
  std::string line(kPrefix);
  line += std::to_string(seq);
  // A stored event is a JSON object with members: {"lsn":...}.
  line.push_back(',');
  line.append(stored.substr(1));
  line.push_back('\n');
  return line;
}

bool IsSchemaEvent(std::string_view stored) {
  // LSNs and RFC 3339 times hold no quote, and the xid is digits.
  constexpr std::string_view kLsn = "{\"lsn\":\"",
                             kXid = ",\"xid\":", kTs = ",\"ts\":\"",
                             kOp = ",\"op\":\"s\"";
  if (!stored.starts_with(kLsn)) return false;
  size_t p = stored.find('"', kLsn.size());
  if (p == std::string_view::npos) return false;
  stored.remove_prefix(p + 1);
  if (!stored.starts_with(kXid)) return false;
  stored.remove_prefix(kXid.size());
  p = stored.find_first_not_of("0123456789");
  if (p == 0 || p == std::string_view::npos) return false;
  stored.remove_prefix(p);
  if (!stored.starts_with(kTs)) return false;
  p = stored.find('"', kTs.size());
  if (p == std::string_view::npos) return false;
  return stored.substr(p + 1).starts_with(kOp);
}

Result<std::vector<SchemaEntry>> ReadSchemas(const std::string& dir,
                                             uint64_t* valid_bytes) {
  const std::string path = SchemasPath(dir);
  std::vector<SchemaEntry> out;
  if (valid_bytes != nullptr) *valid_bytes = 0;
  auto f = OpenFile(path, O_RDONLY);
  if (!f.ok()) {
    if (f.status().code() == Code::kNotFound) return out;
    return f.status();
  }
  std::string buf;
  std::string chunk(1 << 16, '\0');
  uint64_t off = 0, line_no = 0, consumed = 0;
  for (;;) {
    CDC_ASSIGN_OR_RETURN(
        size_t n, PreadUpTo(f->fd(), chunk.data(), chunk.size(), off, path));
    if (n == 0) break;
    off += n;
    if (off > kMaxSchemasBytes)
      return Status::Corruption(path + " is larger than " +
                                std::to_string(kMaxSchemasBytes >> 20) +
                                " MiB: not a cdc schema file");
    buf.append(chunk, 0, n);
    size_t start = 0, nl;
    while ((nl = buf.find('\n', start)) != std::string::npos) {
      ++line_no;
      std::string_view line(buf.data() + start, nl - start);
      auto bad = [&](const std::string& why) {
        return Status::Corruption(path + " line " + std::to_string(line_no) +
                                  ": " + why);
      };
      if (!line.starts_with(kPrefix)) return bad("no leading \"seq\"");
      line.remove_prefix(kPrefix.size());
      SchemaEntry e;
      auto [end, ec] =
          std::from_chars(line.data(), line.data() + line.size(), e.seq);
      if (ec != std::errc() || e.seq == 0 || end == line.data() + line.size() ||
          *end != ',' || line.back() != '}')
        return bad("not a schema event with its seq");
      if (!out.empty() && e.seq <= out.back().seq)
        return bad("seq " + std::to_string(e.seq) + " after seq " +
                   std::to_string(out.back().seq));
      e.stored = "{";
      e.stored.append(end + 1, line.data() + line.size());
      out.push_back(std::move(e));
      consumed += nl - start + 1;
      start = nl + 1;
    }
    buf.erase(0, start);
    if (buf.size() > kMaxSchemaLineBytes)
      return Status::Corruption(path + " line " + std::to_string(line_no + 1) +
                                " is longer than " +
                                std::to_string(kMaxSchemaLineBytes >> 20) +
                                " MiB: not a cdc schema file");
  }
  // What follows the last newline is a line a crash cut short.
  if (valid_bytes != nullptr) *valid_bytes = consumed;
  return out;
}

bool SplitSchemaEvent(std::string_view stored, std::string_view* names,
                      std::string_view* shape) {
  // {"lsn":..,"xid":..,"ts":..,"op":"s","schema":..,"table":..,"key":null
  // ...}: the part from ,"key" on is the shape; ,"schema":..,"table":..
  // before it the name.
  const size_t n = stored.find(",\"schema\":");
  const size_t k = stored.find(",\"key\":null,");
  if (n == std::string_view::npos || k == std::string_view::npos || k < n)
    return false;
  *names = stored.substr(n, k - n);
  *shape = stored.substr(k);
  return true;
}

}  // namespace cdc::log
