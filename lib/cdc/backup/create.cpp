#include "cdc/backup/create.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "cdc/backup/source.h"
#include "cdc/backup/tar.h"
#include "cdc/base/fs.h"
#include "cdc/base/sha256.h"
#include "cdc/base/time.h"
#include "cdc/base/version.h"
#include "cdc/cursor/snapshot.h"
#include "cdc/log/log_dir.h"
#include "cdc/log/pin.h"
#include "cdc/log/scan.h"
#include "cdc/log/schemas.h"
#include "cdc/log/segment.h"
#include "cdc/log/snapshots.h"

namespace cdc::backup {

namespace {

// Stores `len` bytes of `fd` (from offset 0) through `write`, hashing them
// on the way; `done` is told of each chunk.
Status HashAndCopy(
    int fd, const std::string& src, uint64_t len, std::string* sha256,
    const std::function<Status(std::string_view, uint64_t)>& write,
    const std::function<void(uint64_t)>& done) {
  Sha256 h;
  std::string buf(kChunk, '\0');
  uint64_t off = 0;
  while (off < len) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, len - off));
    CDC_ASSIGN_OR_RETURN(size_t got, PreadUpTo(fd, buf.data(), want, off, src));
    if (got < want)
      return Status::IOError(src + " shrank while it was copied (from " +
                             std::to_string(len) + " to " +
                             std::to_string(off + got) + " bytes)");
    std::string_view d(buf.data(), got);
    h.Update(d);
    CDC_RETURN_IF_ERROR(write(d, off));
    off += got;
    done(got);
  }
  *sha256 = h.HexDigest();
  return Status::OK();
}

// Where the copied files go: a directory or a tar stream.
class Out {
 public:
  virtual ~Out() = default;
  virtual Status Begin(const std::string& rel, uint64_t size) = 0;
  virtual Status Write(std::string_view data) = 0;
  virtual Status End() = 0;
  // Stores `len` bytes of `fd` as `rel`; its SHA-256 in `sha256`. Called
  // from Threads() threads at once; nothing else runs meanwhile.
  virtual Status Store(const std::string& rel, int fd, const std::string& src,
                       uint64_t len, std::string* sha256,
                       const std::function<void(uint64_t)>& done) {
    CDC_RETURN_IF_ERROR(Begin(rel, len));
    CDC_RETURN_IF_ERROR(HashAndCopy(
        fd, src, len, sha256,
        [this](std::string_view d, uint64_t) { return Write(d); }, done));
    return End();
  }
  virtual int Threads() const { return 1; }
  // Writes the manifest and makes the backup whole.
  virtual Status Commit(const std::string& manifest) = 0;
};

// Builds the backup in a hidden sibling directory and renames it into
// place once everything is synced and the manifest written.
//
// Files are not synced one by one as they are written (each fdatasync
// would wait for the disk while nothing else is copied): writeback of each
// chunk is started at once (sync_file_range), the file kept open, and
// fdatasync'd later, when more than kMaxUnsynced wait or in Commit, before
// the manifest is written. By then most of it is on disk already.
class DirOut : public Out {
 public:
  DirOut(std::string target, bool sync)
      : target_(std::move(target)),
        tmp_(TempSibling(target_, "partial")),
        sync_(sync) {}
  ~DirOut() override {
    unsynced_.clear();
    if (!done_) (void)RemoveTree(tmp_);
  }
  Status Start() {
    CDC_RETURN_IF_ERROR(CheckNewTarget(target_, "--out"));
    CDC_RETURN_IF_ERROR(RemoveTree(tmp_));  // left by a killed run
    CDC_RETURN_IF_ERROR(MakePrivateDir(tmp_));
    return MakePrivateDir(JoinPath(tmp_, "segments"));
  }
  Status Begin(const std::string& rel, uint64_t) override {
    // snapshots/ exists only in backups of logs that have requests.
    if (IsSnapshotRequestPath(rel) && !snapshots_dir_) {
      CDC_RETURN_IF_ERROR(MakePrivateDir(JoinPath(tmp_, log::kSnapshotsDir)));
      snapshots_dir_ = true;
    }
    path_ = JoinPath(tmp_, rel);
    CDC_ASSIGN_OR_RETURN(f_,
                         OpenFile(path_, O_WRONLY | O_CREAT | O_EXCL, 0600));
    return Status::OK();
  }
  Status Write(std::string_view d) override {
    return WriteAll(f_.fd(), d.data(), d.size(), path_);
  }
  Status End() override { return SyncLater(std::move(f_), path_); }
  Status Store(const std::string& rel, int fd, const std::string& src,
               uint64_t len, std::string* sha256,
               const std::function<void(uint64_t)>& done) override {
    const std::string path = JoinPath(tmp_, rel);
    CDC_ASSIGN_OR_RETURN(FileHandle f,
                         OpenFile(path, O_WRONLY | O_CREAT | O_EXCL, 0600));
    CDC_RETURN_IF_ERROR(HashAndCopy(
        fd, src, len, sha256,
        [&](std::string_view d, uint64_t off) {
          CDC_RETURN_IF_ERROR(WriteAll(f.fd(), d.data(), d.size(), path));
          // Only starts the writeback; errors show in the fdatasync.
          if (sync_)
            (void)::sync_file_range(f.fd(), static_cast<off_t>(off),
                                    static_cast<off_t>(d.size()),
                                    SYNC_FILE_RANGE_WRITE);
          return Status::OK();
        },
        done));
    return SyncLater(std::move(f), path);
  }
  int Threads() const override { return 2; }
  Status Commit(const std::string& manifest) override {
    // Every file the manifest names is durable before it is written.
    while (!unsynced_.empty()) {
      Unsynced u = std::move(unsynced_.front());
      unsynced_.pop_front();
      CDC_RETURN_IF_ERROR(SyncFile(u.f.fd(), u.path));
    }
    if (sync_) CDC_RETURN_IF_ERROR(SyncDir(JoinPath(tmp_, "segments")));
    if (sync_ && snapshots_dir_)
      CDC_RETURN_IF_ERROR(SyncDir(JoinPath(tmp_, log::kSnapshotsDir)));
    const std::string mpath = JoinPath(tmp_, kManifestName);
    CDC_RETURN_IF_ERROR(WriteFileAtomic(mpath, manifest));
    if (::chmod(mpath.c_str(), 0600) != 0)
      return ErrnoStatus("chmod", mpath, errno);
    CDC_RETURN_IF_ERROR(SyncDir(tmp_));
    CDC_RETURN_IF_ERROR(PublishDir(tmp_, target_));
    done_ = true;
    return Status::OK();
  }

 private:
  struct Unsynced {
    FileHandle f;
    std::string path;
  };
  static constexpr size_t kMaxUnsynced = 64;  // open descriptors kept

  // Keeps `f` open to fdatasync it later, syncing the oldest when too many
  // wait (its writeback began long ago).
  Status SyncLater(FileHandle f, const std::string& path) {
    if (!sync_) return Status::OK();  // closed unsynced
    std::optional<Unsynced> oldest;
    {
      std::lock_guard<std::mutex> l(mu_);
      unsynced_.push_back(Unsynced{std::move(f), path});
      if (unsynced_.size() > kMaxUnsynced) {
        oldest = std::move(unsynced_.front());
        unsynced_.pop_front();
      }
    }
    return oldest ? SyncFile(oldest->f.fd(), oldest->path) : Status::OK();
  }

  std::string target_, tmp_, path_;
  FileHandle f_;
  std::mutex mu_;
  std::deque<Unsynced> unsynced_;
  const bool sync_;
  bool snapshots_dir_ = false;
  bool done_ = false;
};

class TarOut : public Out {
 public:
  explicit TarOut(int fd) : w_(fd, "stdout") {}
  Status Begin(const std::string& rel, uint64_t size) override {
    return w_.Begin(rel, size, NowMicros() / 1000000);
  }
  Status Write(std::string_view d) override { return w_.Write(d); }
  Status End() override { return w_.End(); }
  Status Commit(const std::string& manifest) override {
    CDC_RETURN_IF_ERROR(Begin(kManifestName, manifest.size()));
    CDC_RETURN_IF_ERROR(Write(manifest));
    CDC_RETURN_IF_ERROR(End());
    return w_.Finish();
  }

 private:
  TarWriter w_;
};

// A scratch directory under $TMPDIR, removed with everything in it.
struct Scratch {
  std::string path;
  ~Scratch() {
    if (!path.empty()) (void)RemoveTree(path);
  }
  Status Make() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/cdc-backup.XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr)
      return ErrnoStatus("create", tmpl, errno);
    path = tmpl;
    return Status::OK();
  }
};

// A segment to copy in RunCopies: its first `len` bytes.
struct CopyJob {
  std::string src;  // opened when copied: one descriptor per thread
  uint64_t len = 0;
  size_t entry = 0;    // its index in the manifest's files
  std::string expect;  // the seal record's SHA-256, when it has one
};

class Builder {
 public:
  Builder(const CreateOptions& o, Out* out) : o_(o), out_(out) {}

  Status AddBase(LoadedManifest base) {
    base_ = std::move(base);
    return Status::OK();
  }
  // Refers to the base's copy when it has these very bytes.
  bool Reuse(FileEntry* e) {
    if (!base_) return false;
    const FileEntry* b = base_->manifest.Find(e->path);
    if (!b || b->bytes != e->bytes || b->sha256 != e->sha256) return false;
    e->holder = b->holder.empty() ? base_->sha256 : b->holder;
    return true;
  }
  // Stores `len` bytes of `fd` as `rel`, hashing them on the way.
  Status Copy(int fd, const std::string& src, uint64_t len, FileEntry* e) {
    CDC_RETURN_IF_ERROR(out_->Store(e->path, fd, src, len, &e->sha256,
                                    [this](uint64_t n) { Progress(n); }));
    e->bytes = len;
    bytes_stored_ += len;
    return Status::OK();
  }
  // Copies every job's file into `files` (a sealed segment's SHA-256
  // checked against its seal record), Threads() of them at a time.
  Status RunCopies(std::vector<CopyJob>& jobs, std::vector<FileEntry>& files) {
    std::vector<Status> st(jobs.size());
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    auto work = [&] {
      for (size_t i; !failed && (i = next++) < jobs.size();) {
        CopyJob& j = jobs[i];
        FileEntry& e = files[j.entry];
        auto f = log::SegmentFile::Open(j.src);
        st[i] = f.ok() ? Copy(f->fd(), j.src, j.len, &e) : f.status();
        if (st[i].ok() && !j.expect.empty() && e.sha256 != j.expect)
          st[i] =
              Status::Corruption(e.path + ": SHA-256 " + e.sha256 +
                                 " does not match its seal record " + j.expect +
                                 " (the log is damaged; run cdc-log verify)");
        if (!st[i].ok()) failed = true;
      }
    };
    const size_t n = std::min<size_t>(out_->Threads(), jobs.size());
    std::vector<std::thread> helpers;
    for (size_t t = 1; t < n; ++t) helpers.emplace_back(work);
    work();
    for (auto& t : helpers) t.join();
    for (auto& s : st)
      if (!s.ok()) return s;
    return Status::OK();
  }
  Status StoreText(const std::string& text, FileEntry* e) {
    e->bytes = text.size();
    Sha256 h;
    h.Update(text);
    e->sha256 = h.HexDigest();
    if (Reuse(e)) return Status::OK();
    CDC_RETURN_IF_ERROR(out_->Begin(e->path, text.size()));
    CDC_RETURN_IF_ERROR(out_->Write(text));
    bytes_stored_ += text.size();
    Progress(text.size());
    return out_->End();
  }
  void Progress(uint64_t n) {
    std::lock_guard<std::mutex> l(mu_);
    done_ += n;
    if (o_.progress) o_.progress(done_, std::max(done_, total_));
  }
  void set_total(uint64_t t) { total_ = t; }
  uint64_t bytes_stored() const { return bytes_stored_; }

 private:
  const CreateOptions& o_;
  Out* out_;
  std::optional<LoadedManifest> base_;
  std::mutex mu_;
  uint64_t done_ = 0, total_ = 0;
  std::atomic<uint64_t> bytes_stored_{0};
};

// Stores every incremental snapshot request of the log (snapshots/ID.json).
Status CopySnapshotRequests(const std::string& log, Builder& b, Manifest* m) {
  CDC_ASSIGN_OR_RETURN(const std::string dir,
                       log::LogSubdir(log, log::kSnapshotsDir));
  if (!PathExists(dir)) return Status::OK();
  CDC_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDir(dir));
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    FileEntry e;
    e.path = std::string(log::kSnapshotsDir) + "/" + n;
    // Anything else there is a request being rewritten (its temporary file).
    if (!IsSnapshotRequestPath(e.path)) continue;
    // Rewritten by renaming a whole new file over it: read whole, old or new.
    CDC_ASSIGN_OR_RETURN(std::string text, ReadFileToString(JoinPath(dir, n)));
    CDC_RETURN_IF_ERROR(b.StoreText(text, &e));
    m->files.push_back(e);
  }
  return Status::OK();
}

Status CopySegments(const std::string& log, Builder& b, Manifest* m) {
  CDC_ASSIGN_OR_RETURN(auto segs, log::ListSegments(log));
  if (segs.empty()) return Status::NotFound("log " + log + " has no segments");
  uint64_t total = 0;
  for (const auto& s : segs) {
    auto n = FileSize(s.path);
    if (n.ok()) total += *n;
  }
  b.set_total(total);
  m->first_seq = segs.front().base_seq;
  std::vector<CopyJob> jobs;
  for (size_t i = 0; i < segs.size(); ++i) {
    const auto& s = segs[i];
    FileEntry e;
    e.path = s.name;
    e.first_seq = s.base_seq;
    CDC_ASSIGN_OR_RETURN(log::SegmentFile f, log::SegmentFile::Open(s.path));
    CDC_ASSIGN_OR_RETURN(uint64_t size, f.Size());
    if (i + 1 < segs.size()) {
      // Sealed: never changes again; copied whole and checked against
      // its seal record, which is copied beside it.
      if (!s.seal_error.empty()) return Status::Corruption(s.seal_error);
      e.sealed = true;
      e.end_seq = segs[i + 1].base_seq;
      std::string record;
      if (s.seal) {
        CDC_RETURN_IF_ERROR(
            log::CheckSealedSegment(s, size, segs[i + 1].base_seq));
        e.bytes = size;
        e.sha256 = s.seal->sha256;
        if (!b.Reuse(&e))
          jobs.push_back(
              CopyJob{s.path, size, m->files.size(), s.seal->sha256});
        else
          b.Progress(size);
        if (m->first_lsn == 0) m->first_lsn = s.seal->first_lsn;
        if (s.seal->last_lsn != 0) m->last_lsn = s.seal->last_lsn;
        CDC_ASSIGN_OR_RETURN(record,
                             ReadFileToString(log::SealRecordPath(s.path)));
      } else {
        // Sealed by a writer that died before recording it: the next
        // writer rebuilds the record, so does a restored log's.
        jobs.push_back(CopyJob{s.path, size, m->files.size(), ""});
      }
      m->files.push_back(e);
      if (!record.empty()) {
        FileEntry r;
        r.path = s.name + ".sealed";
        CDC_RETURN_IF_ERROR(b.StoreText(record, &r));
        m->files.push_back(r);
      }
      continue;
    }
    // The active segment, up to its last complete transaction: what a
    // reader would see now.
    CDC_ASSIGN_OR_RETURN(log::SegmentScan scan,
                         log::ScanSegment(f, size, s.base_seq, false));
    if (scan.stop == log::FrameStatus::kBadHeader ||
        scan.stop == log::FrameStatus::kBadChecksum) {
      // A torn tail is a writer mid-write; damage with whole frames after
      // it is not, and would be left out silently.
      CDC_ASSIGN_OR_RETURN(auto later,
                           f.FindValidFrameAfter(scan.valid_end, size));
      if (later)
        return Status::Corruption(log::DescribeCorruption(
            s.name, scan.valid_end, scan.next_seq, 0, scan.stop_detail));
    }
    e.end_seq = scan.next_seq;
    jobs.push_back(CopyJob{s.path, scan.txn_end, m->files.size(), ""});
    if (scan.has_commit) {
      if (m->first_lsn == 0) m->first_lsn = scan.first_lsn;
      m->last_lsn = scan.last_lsn;
    }
    m->end_seq = e.end_seq;
    m->files.push_back(e);
  }
  return b.RunCopies(jobs, m->files);
}

Result<CreateResult> Build(const CreateOptions& o, const log::LogIdentity& id,
                           std::optional<LoadedManifest> base, Out* out) {
  Builder b(o, out);
  Manifest m;
  m.log_id = id.log_id;
  m.log_format_version = id.format_version;
  m.created = FormatTimestamp(NowMicros());
  m.tool_version = kVersion;
  if (base) {
    m.base = BaseRef{base->sha256, BaseName(o.base)};
    CDC_RETURN_IF_ERROR(b.AddBase(std::move(*base)));
  }
  CDC_ASSIGN_OR_RETURN(std::string ident,
                       ReadFileToString(JoinPath(o.log, "log.json")));
  FileEntry e;
  e.path = "log.json";
  CDC_RETURN_IF_ERROR(b.StoreText(ident, &e));
  m.files.push_back(e);
  // Cursors before events: no consumer in the backup is past its end.
  if (PathExists(JoinPath(o.log, "consumers.db"))) {
    Scratch scratch;
    CDC_RETURN_IF_ERROR(scratch.Make());
    const std::string snap = JoinPath(scratch.path, "consumers.db");
    CDC_RETURN_IF_ERROR(cursor::SnapshotConsumers(o.log, snap));
    CDC_ASSIGN_OR_RETURN(FileHandle f, OpenFile(snap, O_RDONLY));
    CDC_ASSIGN_OR_RETURN(uint64_t size, FileSize(snap));
    FileEntry c;
    c.path = "consumers.db";
    CDC_RETURN_IF_ERROR(b.Copy(f.fd(), snap, size, &c));
    m.files.push_back(c);
  }
  // Snapshot requests before events too: capture records a request's
  // progress only once the chunks are durable in the log, so none in the
  // backup is past its events, and a capture on the restored log takes up
  // a pending or running snapshot from what the log holds.
  CDC_RETURN_IF_ERROR(CopySnapshotRequests(o.log, b, &m));
  {
    // Pinned before the listing, so every segment listed stays until
    // copied (a descriptor would keep a removed one readable, but its
    // name would be gone for the next open).
    CDC_ASSIGN_OR_RETURN(log::RetentionPin pin,
                         log::RetentionPin::Acquire(o.log));
    CDC_RETURN_IF_ERROR(CopySegments(o.log, b, &m));
  }
  // After the segments: a schema event's line is synced before its frame,
  // so the file now has the line of every schema event copied; lines of
  // events beyond the copy stay out.
  CDC_ASSIGN_OR_RETURN(std::vector<log::SchemaEntry> schemas,
                       log::ReadSchemas(o.log));
  std::string schema_text;
  for (const log::SchemaEntry& s : schemas)
    if (s.seq < m.end_seq) schema_text += log::SchemaLine(s.seq, s.stored);
  if (!schema_text.empty()) {
    FileEntry sf;
    sf.path = log::kSchemasFile;
    CDC_RETURN_IF_ERROR(b.StoreText(schema_text, &sf));
    m.files.push_back(sf);
  }
  std::string text = ManifestJson(m);
  CDC_RETURN_IF_ERROR(out->Commit(text));
  CreateResult r;
  Sha256 h;
  h.Update(text);
  r.manifest_sha256 = h.HexDigest();
  r.manifest = std::move(m);
  r.bytes_stored = b.bytes_stored() + text.size();
  return r;
}

}  // namespace

Result<CreateResult> CreateBackup(const CreateOptions& o) {
  CDC_ASSIGN_OR_RETURN(log::LogIdentity id, log::ReadIdentity(o.log));
  std::optional<LoadedManifest> base;
  if (!o.base.empty()) {
    auto lm = LoadManifest(o.base);
    if (!lm.ok()) return lm.status().Annotate("--incremental");
    if (lm->manifest.log_id != id.log_id)
      return Status::BadInput("--incremental " + o.base +
                              " is a backup of log " + lm->manifest.log_id +
                              ", not of log " + id.log_id + " at " + o.log);
    base = std::move(*lm);
  }
  if (o.out == "-") {
    TarOut out(1);
    return Build(o, id, std::move(base), &out);
  }
  DirOut out(o.out, o.sync);
  CDC_RETURN_IF_ERROR(out.Start());
  return Build(o, id, std::move(base), &out);
}

}  // namespace cdc::backup
