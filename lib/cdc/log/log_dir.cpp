#include "cdc/log/log_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "cdc/base/time.h"
#include "cdc/log/segment.h"
#include "cdc/log/snapshots.h"

namespace cdc::log {

namespace {

std::string RandomId() {
  std::random_device rd;
  static const char* kHex = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 32; ++i) id += kHex[rd() % 16];
  return id;
}

}  // namespace

std::string SourceIdentity::Describe() const {
  if (is_mariadb())
    return "MariaDB database " + database + ", GTID domain " +
           std::to_string(gtid_domain);
  return "system " + system_id + ", database " + database + ", slot " + slot +
         ", publication " + publication;
}

std::string IdentityJson(const LogIdentity& id) {
  nlohmann::ordered_json j;
  j["log_id"] = id.log_id;
  j["format_version"] = id.format_version;
  j["created"] = id.created;
  if (id.source && id.source->is_mariadb()) {
    j["source"] = {{"kind", id.source->kind},
                   {"database", id.source->database},
                   {"gtid_domain", id.source->gtid_domain}};
  } else if (id.source) {
    j["source"] = {{"system_id", id.source->system_id},
                   {"database", id.source->database},
                   {"slot", id.source->slot},
                   {"publication", id.source->publication}};
  } else {
    j["source"] = nullptr;
  }
  return j.dump(2) + "\n";
}

Result<LogIdentity> ReadIdentity(const std::string& dir) {
  const std::string path = JoinPath(dir, "log.json");
  auto text = ReadFileToString(path);
  if (!text.ok()) {
    if (text.status().code() == Code::kNotFound)
      return Status::NotFound("no cdc log at " + dir + " (" +
                              (PathExists(dir) ? "log.json is missing"
                                               : "directory does not exist") +
                              ")");
    return text.status();
  }
  try {
    auto j = nlohmann::json::parse(*text);
    LogIdentity id;
    id.format_version = j.at("format_version").get<int>();
    if (id.format_version < kOldestLogFormatVersion ||
        id.format_version > kLogFormatVersion)
      return Status::Corruption("log " + dir + " has format version " +
                                std::to_string(id.format_version) +
                                "; this cdc reads versions " +
                                std::to_string(kOldestLogFormatVersion) +
                                " to " + std::to_string(kLogFormatVersion));
    id.log_id = j.at("log_id").get<std::string>();
    id.created = j.value("created", "");
    if (j.contains("source") && !j["source"].is_null()) {
      const auto& s = j["source"];
      if (s.value("kind", "") == "mariadb") {
        SourceIdentity m;
        m.kind = "mariadb";
        m.database = s.at("database").get<std::string>();
        m.gtid_domain = s.at("gtid_domain").get<uint32_t>();
        id.source = m;
      } else if (s.contains("kind")) {
        return Status::Corruption("log " + dir + " has a source of kind " +
                                  s["kind"].dump() +
                                  ", which this cdc does not know");
      } else {
        SourceIdentity p;
        p.system_id = s.at("system_id").get<std::string>();
        p.database = s.at("database").get<std::string>();
        p.slot = s.at("slot").get<std::string>();
        p.publication = s.at("publication").get<std::string>();
        id.source = p;
      }
    }
    CDC_RETURN_IF_ERROR(CheckLogDirs(dir));
    return id;
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption("unreadable " + path + ": " + e.what());
  }
}

Result<std::string> LogSubdir(const std::string& dir, std::string_view name) {
  std::string path = JoinPath(dir, std::string(name));
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return path;
    return ErrnoStatus("stat", path, errno);
  }
  if (S_ISLNK(st.st_mode))
    return Status::Corruption("refusing " + path +
                              ": it is a symbolic link (not followed)");
  if (!S_ISDIR(st.st_mode))
    return Status::Corruption("refusing " + path + ": it is not a directory");
  return path;
}

Result<std::string> MakeLogSubdir(const std::string& dir,
                                  std::string_view name) {
  // mkdir never follows a link in its last component (EEXIST), so what
  // stands there after it is checked as any other time.
  CDC_RETURN_IF_ERROR(MakeDir(JoinPath(dir, std::string(name))));
  return LogSubdir(dir, name);
}

Status CheckLogDirs(const std::string& dir) {
  for (const char* name : {kSegmentsDir, kSnapshotsDir}) {
    CDC_RETURN_IF_ERROR(LogSubdir(dir, name).status());
  }
  return Status::OK();
}

Result<LogIdentity> CreateLog(const std::string& dir,
                              std::optional<SourceIdentity> source,
                              int format_version) {
  Status s = MakeDir(dir);
  if (!s.ok()) return s;
  CDC_RETURN_IF_ERROR(CheckLogDirs(dir));
  CDC_ASSIGN_OR_RETURN(auto names, ListDir(dir));
  for (const auto& n : names) {
    if (n != "segments" && n != "LOCK" && n != "consumers.db" &&
        n.rfind("consumers.db-", 0) != 0)
      return Status::CannotCreate("cannot create a log in " + dir +
                                  ": directory is not empty and holds no "
                                  "cdc log (found " +
                                  n + ")");
    if (n != "segments") continue;
    // A creation cut short leaves at most the empty first segment. Anything
    // else is a log whose log.json is gone: adopting it as a new log would
    // give its events a new identity and append after them blindly.
    CDC_ASSIGN_OR_RETURN(auto files, ListDir(SegmentsDir(dir)));
    for (const auto& f : files) {
      auto size = FileSize(JoinPath(SegmentsDir(dir), f));
      if (f != SegmentFileName(1) || !size.ok() || *size != 0)
        return Status::CannotCreate(
            "cannot create a log in " + dir +
            ": it holds segments but no log.json (found segments/" + f +
            "); restore log.json or move the segments away");
    }
  }
  CDC_ASSIGN_OR_RETURN(const std::string segments,
                       MakeLogSubdir(dir, kSegmentsDir));
  // The first segment exists from the start, so readers and followers can
  // open a log before anything is written to it.
  const std::string first = JoinPath(segments, SegmentFileName(1));
  CDC_RETURN_IF_ERROR(OpenFile(first, O_WRONLY | O_CREAT).status());
  CDC_RETURN_IF_ERROR(SyncDir(segments));
  LogIdentity id;
  id.log_id = RandomId();
  id.format_version = format_version;
  id.created = FormatTimestamp(NowMicros());
  id.source = std::move(source);
  CDC_RETURN_IF_ERROR(
      WriteFileAtomic(JoinPath(dir, "log.json"), IdentityJson(id)));
  CDC_RETURN_IF_ERROR(SyncDir(dir));
  return id;
}

Result<LogIdentity> OpenOrCreateLog(const std::string& dir) {
  auto id = ReadIdentity(dir);
  if (id.ok() || id.status().code() != Code::kNotFound) return id;
  return CreateLog(dir, std::nullopt);
}

Status SetSource(const std::string& dir, LogIdentity* id,
                 const SourceIdentity& source) {
  id->source = source;
  return WriteFileAtomic(JoinPath(dir, "log.json"), IdentityJson(*id));
}

Status RaiseFormatVersion(const std::string& dir, LogIdentity* id,
                          int version) {
  if (id->format_version >= version) return Status::OK();
  LogIdentity next = *id;
  next.format_version = version;
  CDC_RETURN_IF_ERROR(
      WriteFileAtomic(JoinPath(dir, "log.json"), IdentityJson(next)));
  *id = next;
  return Status::OK();
}

namespace {
std::string WritableByOthers(const std::string& d) {
  struct stat st;
  if (::stat(d.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) == 0) return "";
  char mode[8];
  snprintf(mode, sizeof mode, "%04o",
           static_cast<unsigned>(st.st_mode & 07777));
  return d + " is writable by " +
         ((st.st_mode & S_IWOTH) ? "all users" : "its group") + " (mode " +
         mode +
         "); others could plant files there (files are opened without "
         "following symlinks, but consider chmod go-w)";
}
}  // namespace

std::string SharedDirWarning(const std::string& dir) {
  std::string w = WritableByOthers(dir);
  return w.empty() ? WritableByOthers(SegmentsDir(dir)) : w;
}

std::string SharedParentWarning(const std::string& file) {
  return WritableByOthers(DirName(file));
}

Result<WriterLock> WriterLock::Acquire(const std::string& dir) {
  const std::string path = JoinPath(dir, "LOCK");
  auto f = OpenFile(path, O_RDWR | O_CREAT);
  if (!f.ok()) return f.status();
  if (::flock(f->fd(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      std::string holder;
      auto text = ReadFileToString(path);
      if (text.ok() && !text->empty())
        holder = " (pid " + text->substr(0, text->find('\n')) + ")";
      return Status::Busy("log " + dir + " is locked by another writer" +
                          holder);
    }
    return ErrnoStatus("lock", path, errno);
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(f->fd(), 0) == 0)
    (void)WriteAll(f->fd(), pid.data(), pid.size(), path);
  WriterLock lock;
  lock.fd_ = std::move(f).value();
  return lock;
}

Result<bool> RemoveUnusedLog(const std::string& dir) {
  auto id = ReadIdentity(dir);
  if (!id.ok() || id->source) return false;
  auto entries = [](const std::string& d) -> std::vector<std::string> {
    std::vector<std::string> names;
    if (DIR* h = ::opendir(d.c_str())) {
      while (const dirent* e = ::readdir(h)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") names.push_back(n);
      }
      ::closedir(h);
    }
    return names;
  };
  const std::string segs = SegmentsDir(dir);
  const std::string first = SegmentFileName(1);
  for (const std::string& n : entries(dir))
    if (n != "log.json" && n != "LOCK" && n != kSegmentsDir) return false;
  for (const std::string& n : entries(segs)) {
    struct stat st;
    if (n != first || ::lstat(JoinPath(segs, n).c_str(), &st) != 0 ||
        !S_ISREG(st.st_mode) || st.st_size != 0)
      return false;
  }
  for (const std::string& f : {JoinPath(segs, first), JoinPath(dir, "log.json"),
                               JoinPath(dir, "LOCK")})
    if (::unlink(f.c_str()) != 0 && errno != ENOENT)
      return Status::IOError("remove " + f + ": " + strerror(errno));
  if (::rmdir(segs.c_str()) != 0 && errno != ENOENT)
    return Status::IOError("remove " + segs + ": " + strerror(errno));
  if (::rmdir(dir.c_str()) != 0)
    return Status::IOError("remove " + dir + ": " + strerror(errno));
  return true;
}

}  // namespace cdc::log
