#include "cdc/cursor/snapshot.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cdc/base/fs.h"

namespace cdc::cursor {

namespace {

constexpr int kBusyTimeoutMs = 30000;

struct Db {
  sqlite3* db = nullptr;
  ~Db() { sqlite3_close_v2(db); }
  std::string Error() const {
    return db ? sqlite3_errmsg(db) : "out of memory";
  }
};

}  // namespace

Status SnapshotConsumers(const std::string& log_dir, const std::string& dest) {
  const std::string src_path = JoinPath(log_dir, "consumers.db");
  struct stat st;
  if (::lstat(src_path.c_str(), &st) != 0)
    return ErrnoStatus("open", src_path, errno);
  if (!S_ISREG(st.st_mode))
    return Status::Corruption("refusing " + src_path +
                              ": it is not a regular file");
  {
    // Created here so its mode is ours, not SQLite's default.
    auto f = OpenFile(dest, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (!f.ok())
      return f.status().code() == Code::kIOError && PathExists(dest)
                 ? Status::CannotCreate(dest + " exists")
                 : f.status();
  }
  Db src;
  // Read-write lets SQLite set up the WAL index when no process has the
  // database open; a reader that may not write the log falls back.
  int rc =
      sqlite3_open_v2(src_path.c_str(), &src.db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_close_v2(src.db);
    src.db = nullptr;
    rc = sqlite3_open_v2(src_path.c_str(), &src.db,
                         SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW, nullptr);
  }
  if (rc != SQLITE_OK)
    return Status::IOError("cannot open " + src_path + ": " + src.Error());
  sqlite3_busy_timeout(src.db, kBusyTimeoutMs);
  Db dst;
  if (sqlite3_open_v2(dest.c_str(), &dst.db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW,
                      nullptr) != SQLITE_OK)
    return Status::IOError("cannot open " + dest + ": " + dst.Error());
  sqlite3_backup* b = sqlite3_backup_init(dst.db, "main", src.db, "main");
  if (b == nullptr)
    return Status::IOError("cannot copy " + src_path + ": " + dst.Error());
  // One step copies every page under one read transaction: a consistent
  // snapshot. A writer holding the lock makes the step return BUSY; retry
  // until the busy timeout.
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    rc = sqlite3_backup_step(b, -1);
    if (rc == SQLITE_DONE) break;
    if ((rc == SQLITE_BUSY || rc == SQLITE_LOCKED) &&
        std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    break;
  }
  int fin = sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE || fin != SQLITE_OK)
    return (rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? Status::Busy
                                                     : Status::IOError)(
        "cannot copy " + src_path + ": " + sqlite3_errstr(rc));
  // The copy keeps the source's WAL mode; closing the only connection
  // checkpoints it into the one file that is then synced.
  if (sqlite3_close_v2(dst.db) != SQLITE_OK)
    return Status::IOError("cannot close " + dest + ": " + dst.Error());
  dst.db = nullptr;
  CDC_ASSIGN_OR_RETURN(FileHandle f, OpenFile(dest, O_RDONLY));
  CDC_RETURN_IF_ERROR(SyncFile(f.fd(), dest));
  if (PathExists(dest + "-wal"))
    return Status::IOError("cannot copy " + src_path + ": " + dest +
                           "-wal was left behind");
  return Status::OK();
}

}  // namespace cdc::cursor
