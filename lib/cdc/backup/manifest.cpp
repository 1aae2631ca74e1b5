#include "cdc/backup/manifest.h"

#include <nlohmann/json.hpp>

#include "cdc/base/sha256.h"
#include "cdc/log/schemas.h"
#include "cdc/log/snapshots.h"

namespace cdc::backup {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kSegPrefix = "segments/";

// The base seq in a segment's file name, or 0.
uint64_t SegmentBase(std::string_view path) {
  if (path.substr(0, kSegPrefix.size()) != kSegPrefix) return 0;
  std::string_view name = path.substr(kSegPrefix.size());
  if (name.size() != 24 || name.substr(20) != ".seg") return 0;
  uint64_t v = 0;
  for (char c : name.substr(0, 20)) {
    if (c < '0' || c > '9') return 0;
    if (v > (UINT64_MAX - 9) / 10) return 0;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

std::string SelfHash(const Json& body) {
  Sha256 h;
  h.Update(body.dump(2));
  return h.HexDigest();
}

bool IsHex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

bool IsSnapshotRequestPath(std::string_view path) {
  constexpr std::string_view kDir = "snapshots/", kExt = ".json";
  if (path.size() <= kDir.size() + kExt.size() ||
      path.substr(0, kDir.size()) != kDir ||
      path.substr(path.size() - kExt.size()) != kExt)
    return false;
  return log::IsSnapshotId(
      path.substr(kDir.size(), path.size() - kDir.size() - kExt.size()));
}

bool FileEntry::is_segment() const { return SegmentBase(path) != 0; }

bool IsBackupPath(std::string_view path, bool manifest_too) {
  if (path == "log.json" || path == "consumers.db" || path == log::kSchemasFile)
    return true;
  if (manifest_too && path == kManifestName) return true;
  if (IsSnapshotRequestPath(path)) return true;
  if (path.size() > 7 && path.substr(path.size() - 7) == ".sealed")
    path.remove_suffix(7);
  return SegmentBase(path) != 0;
}

const FileEntry* Manifest::Find(const std::string& path) const {
  for (const auto& f : files)
    if (f.path == path) return &f;
  return nullptr;
}

uint64_t Manifest::LocalBytes() const {
  uint64_t n = 0;
  for (const auto& f : files)
    if (f.holder.empty()) n += f.bytes;
  return n;
}

uint64_t Manifest::TotalBytes() const {
  uint64_t n = 0;
  for (const auto& f : files) n += f.bytes;
  return n;
}

std::string ManifestJson(const Manifest& m) {
  Json j;
  j["format_version"] = m.format_version;
  j["log_id"] = m.log_id;
  j["log_format_version"] = m.log_format_version;
  j["created"] = m.created;
  j["tool_version"] = m.tool_version;
  j["first_seq"] = m.first_seq;
  j["end_seq"] = m.end_seq;
  j["first_lsn"] = FormatLsn(m.first_lsn);
  j["last_lsn"] = FormatLsn(m.last_lsn);
  if (m.base)
    j["base"] = {{"manifest_sha256", m.base->manifest_sha256},
                 {"name", m.base->name}};
  else
    j["base"] = nullptr;
  Json files = Json::array();
  for (const auto& f : m.files) {
    Json e;
    e["path"] = f.path;
    e["bytes"] = f.bytes;
    e["sha256"] = f.sha256;
    if (!f.holder.empty()) e["in"] = f.holder;
    if (f.is_segment()) {
      e["first_seq"] = f.first_seq;
      e["end_seq"] = f.end_seq;
      e["sealed"] = f.sealed;
    }
    files.push_back(std::move(e));
  }
  j["files"] = std::move(files);
  j["self_sha256"] = SelfHash(j);
  return j.dump(2) + "\n";
}

Result<Manifest> ParseManifest(std::string_view text,
                               const std::string& where) {
  auto bad = [&](const std::string& why) {
    return Status::CheckFailed(where + ": " + why);
  };
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return bad("not a readable manifest (not valid JSON at byte " +
               std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::exception& e) {
    // e.g. a number too large for a double: JSON, but not ours.
    return bad(std::string("not a readable manifest (") + e.what() + ")");
  }
  if (!j.is_object()) return bad("not a readable manifest (not an object)");
  try {
    // The version decides how the rest is read: look at it first.
    if (!j.contains("format_version") ||
        !j["format_version"].is_number_integer())
      return bad("no format_version");
    Manifest m;
    m.format_version = j["format_version"].get<int>();
    if (m.format_version != kBackupFormatVersion)
      return Status::BadInput(where + ": backup format version " +
                              std::to_string(m.format_version) +
                              "; this cdc-backup reads version " +
                              std::to_string(kBackupFormatVersion));
    if (!j.contains("self_sha256") || !j["self_sha256"].is_string())
      return bad("no self_sha256");
    const std::string self = j["self_sha256"].get<std::string>();
    Json body = j;
    body.erase("self_sha256");
    if (SelfHash(body) != self)
      return bad(
          "the manifest's own checksum does not match its text "
          "(the manifest was altered or damaged)");
    m.log_id = j.at("log_id").get<std::string>();
    m.log_format_version = j.at("log_format_version").get<int>();
    m.created = j.at("created").get<std::string>();
    m.tool_version = j.at("tool_version").get<std::string>();
    m.first_seq = j.at("first_seq").get<uint64_t>();
    m.end_seq = j.at("end_seq").get<uint64_t>();
    auto lsn = [&](const char* k) -> Result<Lsn> {
      auto l = ParseLsn(j.at(k).get<std::string>());
      if (!l.ok()) return bad(std::string("bad ") + k);
      return *l;
    };
    CDC_ASSIGN_OR_RETURN(m.first_lsn, lsn("first_lsn"));
    CDC_ASSIGN_OR_RETURN(m.last_lsn, lsn("last_lsn"));
    if (!j.at("base").is_null()) {
      const auto& b = j["base"];
      m.base = BaseRef{b.at("manifest_sha256").get<std::string>(),
                       b.at("name").get<std::string>()};
      if (!IsHex64(m.base->manifest_sha256)) return bad("bad base hash");
    }
    for (const auto& e : j.at("files")) {
      FileEntry f;
      f.path = e.at("path").get<std::string>();
      if (!IsBackupPath(f.path))
        return bad("file \"" + f.path + "\" is not part of a log");
      if (m.Find(f.path)) return bad("file " + f.path + " listed twice");
      f.bytes = e.at("bytes").get<uint64_t>();
      f.sha256 = e.at("sha256").get<std::string>();
      if (!IsHex64(f.sha256)) return bad("bad SHA-256 of " + f.path);
      if (e.contains("in")) {
        f.holder = e["in"].get<std::string>();
        if (!m.base) return bad(f.path + " is in a base, but there is none");
        if (!IsHex64(f.holder)) return bad("bad holder of " + f.path);
      }
      if (f.is_segment()) {
        f.first_seq = e.at("first_seq").get<uint64_t>();
        f.end_seq = e.at("end_seq").get<uint64_t>();
        f.sealed = e.at("sealed").get<bool>();
        if (f.first_seq != SegmentBase(f.path))
          return bad(f.path + ": first_seq " + std::to_string(f.first_seq) +
                     " differs from its name");
      }
      m.files.push_back(std::move(f));
    }
    // The segments form one dense range of seqs.
    uint64_t expect = m.first_seq;
    bool any = false;
    for (const auto& f : m.files) {
      if (!f.is_segment()) continue;
      if (f.first_seq != expect)
        return bad(f.path + " starts at seq " + std::to_string(f.first_seq) +
                   ", expected " + std::to_string(expect) +
                   " (a segment is missing)");
      if (f.end_seq < f.first_seq) return bad(f.path + ": bad end_seq");
      expect = f.end_seq;
      any = true;
    }
    if (!any) return bad("no segments");
    if (expect != m.end_seq)
      return bad("segments end at seq " + std::to_string(expect) +
                 ", the manifest says " + std::to_string(m.end_seq));
    if (!m.Find("log.json")) return bad("no log.json");
    return m;
  } catch (const nlohmann::json::exception& e) {
    return bad("malformed manifest (" + std::string(e.what()) + ")");
  }
}

}  // namespace cdc::backup
