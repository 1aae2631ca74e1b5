#include "cdc/cursor/consumers.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "cdc/base/fs.h"
#include "cdc/base/time.h"

namespace cdc::cursor {

namespace {

constexpr int kBusyTimeoutMs = 30000;
constexpr size_t kSqliteMaxPath = 512;  // unix VFS's MAX_PATHNAME

// Finalizes a prepared statement on every path out of a function.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &st_, nullptr);
  }
  ~Stmt() { sqlite3_finalize(st_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  sqlite3_stmt* get() { return st_; }
  void Bind(int i, const std::string& s) {
    sqlite3_bind_text(st_, i, s.data(), static_cast<int>(s.size()),
                      SQLITE_TRANSIENT);
  }
  void Bind(int i, uint64_t v) {
    sqlite3_bind_int64(st_, i, static_cast<sqlite3_int64>(v));
  }
  void Bind(int i, int64_t v) { sqlite3_bind_int64(st_, i, v); }
  int Step() { return sqlite3_step(st_); }

 private:
  sqlite3_stmt* st_ = nullptr;
  int rc_;
};

Consumer RowToConsumer(sqlite3_stmt* st) {
  Consumer c;
  c.name = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  c.acked_seq = static_cast<uint64_t>(sqlite3_column_int64(st, 1));
  c.created_us = sqlite3_column_int64(st, 2);
  c.updated_us = sqlite3_column_int64(st, 3);
  return c;
}

}  // namespace

Status ValidateConsumerName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 64;
  for (char c : name)
    ok = ok && (isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                c == '_' || c == '-');
  if (!ok)
    return Status::Usage("invalid consumer name \"" + name +
                         "\" (use 1-64 of A-Z a-z 0-9 . _ -)");
  return Status::OK();
}

bool CursorDamaged(const Consumer& c, uint64_t last_seq) {
  return StoredAckedSeq(c) < 0 || c.acked_seq > last_seq;
}

int64_t StoredAckedSeq(const Consumer& c) {
  return static_cast<int64_t>(c.acked_seq);
}

Status CheckCursor(const Consumer& c, uint64_t last_seq) {
  if (!CursorDamaged(c, last_seq)) return Status::OK();
  const int64_t acked = StoredAckedSeq(c);
  return Status::BadInput(
      "consumer " + c.name + " is damaged: its cursor, acked seq " +
      std::to_string(acked) + ", is " +
      (acked < 0 ? std::string("negative") : "beyond the end of the log") +
      " (last seq " + std::to_string(last_seq) +
      "); move it with \"cdc-ack -c " + c.name + " --seek POS\"");
}

ConsumerStore::~ConsumerStore() { sqlite3_close_v2(db_); }

Status ConsumerStore::Error(const std::string& what) {
  int rc = sqlite3_errcode(db_);
  std::string msg = path_ + ": " + what + ": " + sqlite3_errmsg(db_);
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Busy(msg);
    case SQLITE_CANTOPEN: {
      // Only an errno says whether this is about permission.
      const int err = sqlite3_system_errno(db_);
      if (err == EACCES || err == EPERM || err == EROFS)
        return Status::Permission(msg + ": " + strerror(err));
      if (err == ENOENT || err == ENOTDIR)
        return Status::NotFound(msg + ": " + strerror(err));
      return Status::IOError(err ? msg + ": " + strerror(err) : msg);
    }
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return Status::Permission(msg);
    case SQLITE_FULL:
      return Status::IOError(msg + " (disk full)");
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corruption(msg);
    default:
      return Status::IOError(msg);
  }
}

Status ConsumerStore::Exec(const char* sql) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
    return Error("cannot run \"" + std::string(sql) + "\"");
  return Status::OK();
}

Result<std::unique_ptr<ConsumerStore>> ConsumerStore::Open(
    const std::string& log_dir) {
  std::unique_ptr<ConsumerStore> s(new ConsumerStore());
  s->path_ = JoinPath(log_dir, "consumers.db");
  // SQLite's unix VFS takes absolute paths of under 512 bytes and fails
  // with a bare "unable to open" beyond; say what is wrong instead (an I/O
  // error, as open(2) reports ENAMETOOLONG).
  char cwd[4096];
  size_t abs_len = s->path_.size();
  if (s->path_[0] != '/' && ::getcwd(cwd, sizeof cwd) != nullptr)
    abs_len += std::strlen(cwd) + 1;
  if (abs_len >= kSqliteMaxPath)
    return Status::IOError("cannot open " + s->path_ +
                           ": log directory path is too long for SQLite "
                           "(it takes paths under " +
                           std::to_string(kSqliteMaxPath) + " bytes)");
  // SQLite follows symlinks and would block on a FIFO: refuse both, and
  // anything else that is not a regular file, before it opens the file.
  struct stat st;
  if (::lstat(s->path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return Status::Corruption("refusing " + s->path_ +
                              ": it is not a regular file");
  // Created empty (a valid database) with our mode: SQLite would make it
  // 0644, and gives its -wal and -shm files the database's mode.
  if (::lstat(s->path_.c_str(), &st) != 0 && errno == ENOENT) {
    // Another process creating it at the same moment wins the O_EXCL:
    // SQLite then opens what that one made.
    const int mode = GroupAccess() ? 0660 : 0600;
    auto made = OpenFile(s->path_, O_WRONLY | O_CREAT | O_EXCL, mode);
    // The group acks: a umask of 022 must not take its write bit.
    if (made.ok()) (void)::fchmod(made->fd(), static_cast<mode_t>(mode));
  }
  int rc = sqlite3_open_v2(s->path_.c_str(), &s->db_,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                               SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
                           nullptr);
  if (rc != SQLITE_OK) {
    if (s->db_ == nullptr)
      return Status::IOError("cannot open " + s->path_ + ": out of memory");
    return s->Error("cannot open");
  }
  sqlite3_busy_timeout(s->db_, kBusyTimeoutMs);
  // The -wal and -shm files stay when the last connection closes: the
  // group's readers (CDC_GROUP_ACCESS) ack through them but cannot create
  // files in the log directory, which is not theirs to write.
  int persist = 1;
  (void)sqlite3_file_control(s->db_, "main", SQLITE_FCNTL_PERSIST_WAL,
                             &persist);
  // Switching a new database to WAL takes an exclusive lock, and SQLite
  // returns SQLITE_BUSY at once (without its busy handler, to avoid a
  // deadlock) when another process is setting up the same file: tools that
  // start together in a pipe do. Retry the setup until the busy timeout.
  int64_t deadline = MonoMicros() + int64_t{kBusyTimeoutMs} * 1000;
  for (int nap_ms = 1;; nap_ms = std::min(nap_ms * 2, 50)) {
    Status st = s->Setup();
    if (st.ok()) return s;
    if (st.code() != Code::kBusy || MonoMicros() >= deadline) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(nap_ms));
  }
}

Status ConsumerStore::Setup() {
  CDC_RETURN_IF_ERROR(Exec("PRAGMA journal_mode=WAL"));
  CDC_RETURN_IF_ERROR(Exec("PRAGMA synchronous=FULL"));
  CDC_RETURN_IF_ERROR(
      Exec("CREATE TABLE IF NOT EXISTS consumers ("
           " name TEXT PRIMARY KEY,"
           " acked_seq INTEGER NOT NULL,"
           " created_us INTEGER NOT NULL,"
           " updated_us INTEGER NOT NULL)"));
  // Stored subscriptions: a table of its own, so that a consumers.db made
  // before them is used as it is.
  CDC_RETURN_IF_ERROR(
      Exec("CREATE TABLE IF NOT EXISTS selections ("
           " name TEXT PRIMARY KEY,"
           " selection TEXT NOT NULL)"));
  // A "consumers" table of another shape (another program's file, or a
  // damaged one) is bad data, not an I/O error.
  Stmt st(db_,
          "SELECT name, acked_seq, created_us, updated_us FROM consumers "
          "LIMIT 0");
  if (!st.ok()) {
    if ((sqlite3_errcode(db_) & 0xff) == SQLITE_ERROR)
      return Status::Corruption(path_ +
                                " is not a cdc consumer store (its consumers "
                                "table has another schema: " +
                                sqlite3_errmsg(db_) + ")");
    return Error("cannot read consumers");
  }
  return Status::OK();
}

Result<std::optional<Consumer>> ConsumerStore::Get(const std::string& name) {
  Stmt st(db_,
          "SELECT name, acked_seq, created_us, updated_us FROM consumers "
          "WHERE name = ?1");
  if (!st.ok()) return Error("cannot read consumer");
  st.Bind(1, name);
  int rc = st.Step();
  if (rc == SQLITE_ROW) return std::optional<Consumer>(RowToConsumer(st.get()));
  if (rc == SQLITE_DONE) return std::optional<Consumer>();
  return Error("cannot read consumer " + name);
}

Result<Consumer> ConsumerStore::Create(const std::string& name,
                                       uint64_t acked_seq) {
  Stmt st(db_,
          "INSERT INTO consumers (name, acked_seq, created_us, updated_us) "
          "VALUES (?1, ?2, ?3, ?3)");
  if (!st.ok()) return Error("cannot create consumer");
  int64_t now = NowMicros();
  st.Bind(1, name);
  st.Bind(2, acked_seq);
  st.Bind(3, now);
  int rc = st.Step();
  if (rc == SQLITE_CONSTRAINT)
    return Status::CannotCreate("consumer " + name + " already exists");
  if (rc != SQLITE_DONE) return Error("cannot create consumer " + name);
  return Consumer{name, acked_seq, now, now};
}

Result<Consumer> ConsumerStore::GetOrCreate(const std::string& name,
                                            uint64_t acked_seq, bool* created) {
  *created = false;
  CDC_ASSIGN_OR_RETURN(auto c, Get(name));
  if (c) return *c;
  auto made = Create(name, acked_seq);
  if (made.ok()) {
    *created = true;
    return made;
  }
  if (made.status().code() != Code::kCannotCreate) return made.status();
  CDC_ASSIGN_OR_RETURN(c, Get(name));  // another process created it first
  if (!c) return Status::Internal("consumer " + name + " vanished");
  return *c;
}

Result<uint64_t> ConsumerStore::Ack(const std::string& name, uint64_t seq) {
  Stmt st(db_,
          "UPDATE consumers SET acked_seq = max(acked_seq, ?2), "
          "updated_us = ?3 WHERE name = ?1 RETURNING acked_seq");
  if (!st.ok()) return Error("cannot ack");
  st.Bind(1, name);
  st.Bind(2, seq);
  st.Bind(3, NowMicros());
  int rc = st.Step();
  if (rc == SQLITE_DONE) return Status::NotFound("no consumer named " + name);
  if (rc != SQLITE_ROW) return Error("cannot ack " + name);
  uint64_t v = static_cast<uint64_t>(sqlite3_column_int64(st.get(), 0));
  if (st.Step() != SQLITE_DONE) return Error("cannot ack " + name);
  return v;
}

Status ConsumerStore::Seek(const std::string& name, uint64_t acked_seq) {
  Stmt st(db_,
          "UPDATE consumers SET acked_seq = ?2, updated_us = ?3 "
          "WHERE name = ?1");
  if (!st.ok()) return Error("cannot seek");
  st.Bind(1, name);
  st.Bind(2, acked_seq);
  st.Bind(3, NowMicros());
  if (st.Step() != SQLITE_DONE) return Error("cannot seek " + name);
  if (sqlite3_changes(db_) == 0)
    return Status::NotFound("no consumer named " + name);
  return Status::OK();
}

Status ConsumerStore::Delete(const std::string& name) {
  Stmt st(db_, "DELETE FROM consumers WHERE name = ?1");
  if (!st.ok()) return Error("cannot delete");
  st.Bind(1, name);
  if (st.Step() != SQLITE_DONE) return Error("cannot delete " + name);
  if (sqlite3_changes(db_) == 0)
    return Status::NotFound("no consumer named " + name);
  Stmt sel(db_, "DELETE FROM selections WHERE name = ?1");
  if (!sel.ok()) return Error("cannot delete");
  sel.Bind(1, name);
  if (sel.Step() != SQLITE_DONE) return Error("cannot delete " + name);
  return Status::OK();
}

Result<std::string> ConsumerStore::GetSelection(const std::string& name) {
  Stmt st(db_, "SELECT selection FROM selections WHERE name = ?1");
  if (!st.ok()) return Error("cannot read the selection of " + name);
  st.Bind(1, name);
  int rc = st.Step();
  if (rc == SQLITE_DONE) return std::string();
  if (rc != SQLITE_ROW) return Error("cannot read the selection of " + name);
  const unsigned char* text = sqlite3_column_text(st.get(), 0);
  return text == nullptr ? std::string()
                         : std::string(reinterpret_cast<const char*>(text));
}

Status ConsumerStore::SetSelection(const std::string& name,
                                   const std::string& selection) {
  Stmt st(db_,
          "INSERT INTO selections (name, selection) VALUES (?1, ?2) "
          "ON CONFLICT(name) DO UPDATE SET selection = ?2");
  if (!st.ok()) return Error("cannot store the selection of " + name);
  st.Bind(1, name);
  st.Bind(2, selection);
  if (st.Step() != SQLITE_DONE)
    return Error("cannot store the selection of " + name);
  return Status::OK();
}

Result<std::vector<Consumer>> ConsumerStore::List() {
  Stmt st(db_,
          "SELECT name, acked_seq, created_us, updated_us FROM consumers "
          "ORDER BY name");
  if (!st.ok()) return Error("cannot list consumers");
  std::vector<Consumer> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out.push_back(RowToConsumer(st.get()));
  if (rc != SQLITE_DONE) return Error("cannot list consumers");
  return out;
}

Status PrepareForGroup(const std::string& log_dir) {
  if (!GroupAccess()) return Status::OK();
  return ConsumerStore::Open(log_dir).status();
}

}  // namespace cdc::cursor
