#include "cdc/backup/check.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <functional>
#include <map>
#include <set>

#include "cdc/backup/source.h"
#include "cdc/base/fs.h"
#include "cdc/base/sha256.h"
#include "cdc/log/snapshots.h"
#include "cdc/log/verify.h"

namespace cdc::backup {

namespace {

struct Seen {
  uint64_t bytes = 0;
  std::string sha256;
};

std::string Where(const std::string& path) {
  return path == "-" ? "stdin" : path;
}

class Checker {
 public:
  Checker(const CheckOptions& o, std::string restore_dir, int dir_mode,
          int file_mode)
      : o_(o),
        restore_dir_(std::move(restore_dir)),
        dir_mode_(dir_mode),
        file_mode_(file_mode) {}

  Result<CheckReport> Run();

 private:
  // Hashes every file the backup at `path` stores; writes those `want`
  // names into the restore directory. Returns its manifest.
  Result<LoadedManifest> ReadOne(
      const std::string& path,
      const std::function<bool(const std::string&)>& want,
      std::map<std::string, Seen>* seen);
  void Compare(const std::string& where, const FileEntry& e,
               const std::map<std::string, Seen>& seen);

  const CheckOptions& o_;
  std::string restore_dir_;
  int dir_mode_;
  int file_mode_;
  bool snapshots_dir_ = false;
  CheckReport rep_;
  uint64_t total_ = 0;
};

Result<LoadedManifest> Checker::ReadOne(
    const std::string& path,
    const std::function<bool(const std::string&)>& want,
    std::map<std::string, Seen>* seen) {
  const std::string where = Where(path);
  std::string buf(kChunk, '\0');
  StoredFileFn fn = [&](const std::string& name, uint64_t,
                        const ChunkFn& read) -> Status {
    if (!IsBackupPath(name)) {
      rep_.problems.push_back(where + ": unexpected file \"" + name +
                              "\" (not part of a log)");
      return Status::OK();
    }
    if (seen->count(name)) {
      rep_.problems.push_back(where + ": " + name + " appears twice");
      return Status::OK();
    }
    FileHandle out;
    std::string opath;
    if (!restore_dir_.empty() && want(name)) {
      if (IsSnapshotRequestPath(name) && !snapshots_dir_) {
        CDC_RETURN_IF_ERROR(MakePrivateDir(
            JoinPath(restore_dir_, log::kSnapshotsDir), dir_mode_));
        snapshots_dir_ = true;
      }
      opath = JoinPath(restore_dir_, name);
      CDC_ASSIGN_OR_RETURN(
          out, OpenFile(opath, O_WRONLY | O_CREAT | O_EXCL, file_mode_));
      // The documented mode, not what the umask leaves of it (077 would
      // take --group-access's group read away).
      if (::fchmod(out.fd(), static_cast<mode_t>(file_mode_)) != 0)
        return ErrnoStatus("chmod", opath, errno);
    }
    Sha256 h;
    uint64_t n = 0;
    for (;;) {
      CDC_ASSIGN_OR_RETURN(size_t got, read(buf.data(), buf.size()));
      if (got == 0) break;
      std::string_view d(buf.data(), got);
      h.Update(d);
      if (out.valid())
        CDC_RETURN_IF_ERROR(WriteAll(out.fd(), d.data(), got, opath));
      n += got;
      rep_.bytes += got;
      if (o_.progress) o_.progress(rep_.bytes, std::max(rep_.bytes, total_));
    }
    if (out.valid()) CDC_RETURN_IF_ERROR(SyncFile(out.fd(), opath));
    (*seen)[name] = Seen{n, h.HexDigest()};
    return Status::OK();
  };
  CDC_ASSIGN_OR_RETURN(std::string text, ReadStoredFiles(path, fn));
  if (text.empty())
    return Status::CheckFailed(where + ": no " + std::string(kManifestName) +
                               " (an unfinished backup, or a truncated "
                               "archive)");
  return ReadManifestText(text, where + ": " + kManifestName);
}

void Checker::Compare(const std::string& where, const FileEntry& e,
                      const std::map<std::string, Seen>& seen) {
  auto it = seen.find(e.path);
  if (it == seen.end())
    rep_.problems.push_back(where + ": " + e.path + " is missing");
  else if (it->second.bytes != e.bytes)
    rep_.problems.push_back(
        where + ": " + e.path + " has " + std::to_string(it->second.bytes) +
        " bytes, the manifest says " + std::to_string(e.bytes));
  else if (it->second.sha256 != e.sha256)
    rep_.problems.push_back(where + ": " + e.path + ": SHA-256 " +
                            it->second.sha256 +
                            " differs from the manifest's " + e.sha256);
}

Result<CheckReport> Checker::Run() {
  const std::string where = Where(o_.path);
  if (o_.path != "-" && !PathExists(o_.path))
    return Status::NotFound("no backup at " + o_.path + " (it does not exist)");
  if (o_.path != "-" && !IsArchive(o_.path)) {
    // A directory's manifest tells the size of the work up front.
    auto lm = LoadManifest(o_.path);
    if (lm.ok()) total_ = lm->manifest.TotalBytes();
  }
  std::map<std::string, Seen> seen;
  CDC_ASSIGN_OR_RETURN(
      LoadedManifest top,
      ReadOne(
          o_.path, [](const std::string&) { return true; }, &seen));
  const Manifest& m = top.manifest;
  rep_.manifest = m;
  rep_.manifest_sha256 = top.sha256;
  rep_.chain.push_back(where);
  std::set<std::string> local;
  for (const auto& e : m.files) {
    if (!e.holder.empty()) continue;
    local.insert(e.path);
    Compare(where, e, seen);
  }
  for (const auto& [name, s] : seen)
    if (!local.count(name))
      rep_.problems.push_back(where + ": " + name +
                              " is not listed in the manifest");
  std::set<std::string> in_chain;
  LoadedManifest cur = top;
  std::string cur_path = o_.path;
  while (cur.manifest.base) {
    const BaseRef ref = *cur.manifest.base;
    auto bp = FindBase(cur_path, ref, o_.search_dir);
    if (!bp.ok()) return bp.status().Annotate(Where(cur_path));
    if (in_chain.count(ref.manifest_sha256))
      return Status::CheckFailed(*bp + ": the chain of bases loops");
    std::map<std::string, Seen> bseen;
    auto want = [&](const std::string& name) {
      const FileEntry* e = m.Find(name);
      return e && e->holder == ref.manifest_sha256;
    };
    CDC_ASSIGN_OR_RETURN(LoadedManifest b, ReadOne(*bp, want, &bseen));
    if (b.sha256 != ref.manifest_sha256)
      return Status::CheckFailed(*bp + ": its manifest is not the one " +
                                 Where(cur_path) + " names as its base");
    if (b.manifest.log_id != m.log_id)
      return Status::BadInput(*bp + " is a backup of log " + b.manifest.log_id +
                              ", not of log " + m.log_id);
    for (const auto& e : b.manifest.files)
      if (e.holder.empty()) Compare(*bp, e, bseen);
    for (const auto& e : m.files)
      if (e.holder == ref.manifest_sha256) Compare(*bp, e, bseen);
    in_chain.insert(ref.manifest_sha256);
    rep_.chain.push_back(*bp);
    cur = std::move(b);
    cur_path = *bp;
  }
  for (const auto& e : m.files)
    if (!e.holder.empty() && !in_chain.count(e.holder))
      rep_.problems.push_back(where + ": " + e.path + " is in backup " +
                              e.holder.substr(0, 12) +
                              "..., which is not in its chain of bases");
  return rep_;
}

}  // namespace

Result<CheckReport> VerifyBackup(const CheckOptions& o) {
  Checker c(o, "", 0, 0);
  return c.Run();
}

Result<CheckReport> RestoreBackup(const RestoreOptions& o) {
  CDC_RETURN_IF_ERROR(CheckNewTarget(o.log, "--log"));
  std::string target = o.log;
  while (target.size() > 1 && target.back() == '/') target.pop_back();
  if (!PathExists(DirName(target)))
    return Status::NotFound("cannot restore into " + o.log + ": " +
                            DirName(target) + " does not exist");
  const std::string tmp = TempSibling(target, "restoring");
  CDC_RETURN_IF_ERROR(RemoveTree(tmp));  // left by a killed restore
  struct Cleanup {
    std::string path;
    bool keep = false;
    ~Cleanup() {
      if (!keep) (void)RemoveTree(path);
    }
  } cleanup{tmp};
  CDC_RETURN_IF_ERROR(MakePrivateDir(tmp, o.dir_mode));
  CDC_RETURN_IF_ERROR(MakePrivateDir(JoinPath(tmp, "segments"), o.dir_mode));
  Checker c(o.check, tmp, o.dir_mode, o.file_mode);
  CDC_ASSIGN_OR_RETURN(CheckReport rep, c.Run());
  if (!rep.ok()) return rep;
  // Every byte is the backup's; now the log as a log: frames, seqs, seals.
  CDC_ASSIGN_OR_RETURN(log::VerifyReport v, log::VerifyLog(tmp));
  for (const auto& p : v.problems) rep.problems.push_back("restored log: " + p);
  if (!rep.ok()) return rep;
  if (v.next_seq != rep.manifest.end_seq)
    rep.problems.push_back("restored log ends at seq " +
                           std::to_string(v.next_seq) + ", the manifest says " +
                           std::to_string(rep.manifest.end_seq));
  if (!rep.ok()) return rep;
  CDC_RETURN_IF_ERROR(SyncDir(JoinPath(tmp, "segments")));
  if (PathExists(JoinPath(tmp, log::kSnapshotsDir)))
    CDC_RETURN_IF_ERROR(SyncDir(JoinPath(tmp, log::kSnapshotsDir)));
  CDC_RETURN_IF_ERROR(SyncDir(tmp));
  CDC_RETURN_IF_ERROR(PublishDir(tmp, target));
  cleanup.keep = true;
  return rep;
}

}  // namespace cdc::backup
