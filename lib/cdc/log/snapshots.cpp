#include "cdc/log/snapshots.h"

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>

#include "cdc/base/fs.h"
#include "cdc/base/time.h"
#include "cdc/log/log_dir.h"

namespace cdc::log {

namespace {

// LOG/snapshots/ID.json, refusing a planted LOG/snapshots (LogSubdir):
// capture rewrites these files for as long as it runs.
Result<std::string> FilePath(const std::string& dir, const std::string& id) {
  CDC_ASSIGN_OR_RETURN(const std::string snapshots,
                       LogSubdir(dir, kSnapshotsDir));
  return JoinPath(snapshots, id + ".json");
}

// A compact, sortable id: the request's UTC time and 24 random bits.
std::string NewId(int64_t now_us) {
  const time_t secs = static_cast<time_t>(now_us / 1000000);
  struct tm tm;
  gmtime_r(&secs, &tm);
  char buf[64];
  std::random_device rd;
  snprintf(buf, sizeof buf, "%04d%02d%02dT%02d%02d%02dZ-%06x",
           tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
           tm.tm_sec, static_cast<unsigned>(rd() & 0xffffff));
  return buf;
}

}  // namespace

bool IsSnapshotId(std::string_view id) {
  return !id.empty() && id.size() <= 64 &&
         std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
                  (c >= 'a' && c <= 'z') || c == '-';
         });
}

std::string IncrementalSnapshotJson(const IncrementalSnapshot& s) {
  nlohmann::ordered_json j;
  j["id"] = s.id;
  j["schema"] = s.schema;
  j["table"] = s.table;
  j["chunk_rows"] = s.chunk_rows;
  j["requested"] = s.requested;
  j["state"] = s.state;
  j["error"] = s.error;
  j["estimate"] = s.estimate;
  j["chunks"] = s.chunks;
  j["rows"] = s.rows;
  j["last_key"] = s.last_key ? nlohmann::ordered_json(*s.last_key)
                             : nlohmann::ordered_json(nullptr);
  j["seq"] = s.seq;
  j["updated"] = s.updated;
  // Names hold any byte PostgreSQL allows; never let that stop a write.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

Result<IncrementalSnapshot> ParseIncrementalSnapshot(const std::string& text,
                                                     const std::string& what) {
  IncrementalSnapshot s;
  try {
    auto j = nlohmann::json::parse(text);
    s.id = j.at("id").get<std::string>();
    s.schema = j.at("schema").get<std::string>();
    s.table = j.at("table").get<std::string>();
    s.chunk_rows = j.at("chunk_rows").get<uint32_t>();
    s.requested = j.at("requested").get<std::string>();
    s.state = j.at("state").get<std::string>();
    s.error = j.value("error", "");
    s.estimate = j.value("estimate", uint64_t{0});
    s.chunks = j.value("chunks", uint64_t{0});
    s.rows = j.value("rows", uint64_t{0});
    if (j.contains("last_key") && !j["last_key"].is_null())
      s.last_key = j["last_key"].get<std::vector<std::string>>();
    s.seq = j.value("seq", uint64_t{0});
    s.updated = j.value("updated", "");
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(what + ": not an incremental snapshot (" +
                              e.what() + ")");
  }
  if (!IsSnapshotId(s.id) || s.chunk_rows == 0 ||
      s.chunk_rows > kMaxChunkRows ||
      (s.state != "pending" && s.state != "running" && s.state != "done" &&
       s.state != "failed"))
    return Status::Corruption(what + ": not an incremental snapshot");
  return s;
}

Result<std::pair<std::string, std::string>> ParseTableName(
    const std::string& text) {
  std::vector<std::string> parts(1);
  size_t i = 0;
  bool quoted_part = false;
  while (i < text.size()) {
    if (text[i] == '"' && parts.back().empty() && !quoted_part) {
      quoted_part = true;
      for (++i;; ++i) {
        if (i >= text.size())
          return Status::Usage("--table " + text + ": unmatched '\"'");
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            parts.back().push_back('"');
            ++i;
            continue;
          }
          ++i;
          break;
        }
        parts.back().push_back(text[i]);
      }
      continue;
    }
    if (text[i] == '.') {
      parts.emplace_back();
      quoted_part = false;
      ++i;
      continue;
    }
    if (quoted_part)
      return Status::Usage("--table " + text + ": text after a quoted name");
    parts.back().push_back(text[i++]);
  }
  if (parts.size() != 2 || parts[0].empty() || parts[1].empty())
    return Status::Usage("--table \"" + text +
                         "\": expected SCHEMA.TABLE (quote a name that holds "
                         "a dot: '\"my.schema\".t')");
  return std::make_pair(parts[0], parts[1]);
}

Result<IncrementalSnapshot> RequestIncrementalSnapshot(
    const std::string& dir, const std::string& schema, const std::string& table,
    uint32_t chunk_rows, int64_t now_us) {
  if (chunk_rows == 0 || chunk_rows > kMaxChunkRows)
    return Status::Usage("--chunk-rows must be 1 to " +
                         std::to_string(kMaxChunkRows));
  CDC_RETURN_IF_ERROR(MakeLogSubdir(dir, kSnapshotsDir).status());
  IncrementalSnapshot s;
  s.id = NewId(now_us);
  s.schema = schema;
  s.table = table;
  s.chunk_rows = chunk_rows;
  s.requested = s.updated = FormatTimestamp(now_us);
  CDC_RETURN_IF_ERROR(WriteIncrementalSnapshot(dir, s));
  return s;
}

Result<std::vector<IncrementalSnapshot>> ListIncrementalSnapshots(
    const std::string& dir) {
  std::vector<IncrementalSnapshot> out;
  CDC_ASSIGN_OR_RETURN(const std::string snapshots,
                       LogSubdir(dir, kSnapshotsDir));
  if (!PathExists(snapshots)) return out;
  CDC_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDir(snapshots));
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    if (n.size() <= 5 || n.substr(n.size() - 5) != ".json") continue;
    const std::string id = n.substr(0, n.size() - 5);
    if (!IsSnapshotId(id)) continue;
    CDC_ASSIGN_OR_RETURN(IncrementalSnapshot s,
                         ReadIncrementalSnapshot(dir, id));
    out.push_back(std::move(s));
  }
  return out;
}

Result<IncrementalSnapshot> ReadIncrementalSnapshot(const std::string& dir,
                                                    const std::string& id) {
  if (!IsSnapshotId(id))
    return Status::Usage("no snapshot request \"" + id + "\"");
  CDC_ASSIGN_OR_RETURN(const std::string path, FilePath(dir, id));
  CDC_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  CDC_ASSIGN_OR_RETURN(IncrementalSnapshot s,
                       ParseIncrementalSnapshot(text, path));
  if (s.id != id)
    return Status::Corruption(path + ": holds the request " + s.id);
  return s;
}

Status WriteIncrementalSnapshot(const std::string& dir,
                                const IncrementalSnapshot& s) {
  CDC_ASSIGN_OR_RETURN(const std::string path, FilePath(dir, s.id));
  return WriteFileAtomic(path, IncrementalSnapshotJson(s));
}

}  // namespace cdc::log
