#include "cdc/backup/source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdc/backup/files.h"
#include "cdc/backup/tar.h"
#include "cdc/base/fs.h"
#include "cdc/base/sha256.h"

namespace cdc::backup {

namespace {

Result<std::string> ReadEntry(TarReader& tar, uint64_t size,
                              const std::string& where) {
  if (size > kMaxMetadataBytes)
    return Status::CheckFailed(where + ": manifest.json is too large");
  std::string text(static_cast<size_t>(size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    CDC_ASSIGN_OR_RETURN(size_t n,
                         tar.Read(text.data() + got, text.size() - got));
    if (n == 0) break;
    got += n;
  }
  return text;
}

}  // namespace

bool IsArchive(const std::string& path) {
  if (path == "-") return true;
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Result<LoadedManifest> ReadManifestText(const std::string& text,
                                        const std::string& where) {
  LoadedManifest lm;
  CDC_ASSIGN_OR_RETURN(lm.manifest, ParseManifest(text, where));
  Sha256 h;
  h.Update(text);
  lm.sha256 = h.HexDigest();
  return lm;
}

Result<LoadedManifest> LoadManifest(const std::string& path) {
  if (!PathExists(path))
    return Status::NotFound("no backup at " + path + " (it does not exist)");
  if (!IsArchive(path)) {
    const std::string mpath = JoinPath(path, kManifestName);
    auto text = ReadFileToString(mpath);
    if (!text.ok()) {
      if (text.status().code() == Code::kNotFound)
        return Status::CheckFailed(
            path + ": no " + kManifestName +
            " (not a backup, or one whose creation did not finish)");
      return text.status();
    }
    return ReadManifestText(*text, mpath);
  }
  CDC_ASSIGN_OR_RETURN(FileHandle f, OpenFile(path, O_RDONLY));
  TarReader tar(f.fd(), path);
  for (;;) {
    CDC_ASSIGN_OR_RETURN(auto e, tar.Next());
    if (!e)
      return Status::CheckFailed(path + ": the archive holds no " +
                                 std::string(kManifestName) +
                                 " (an unfinished backup)");
    if (e->name == kManifestName) {
      CDC_ASSIGN_OR_RETURN(std::string text, ReadEntry(tar, e->size, path));
      return ReadManifestText(text, path + ":" + kManifestName);
    }
  }
}

Result<std::string> ReadStoredFiles(const std::string& path,
                                    const StoredFileFn& file) {
  if (!IsArchive(path)) {
    const std::string mpath = JoinPath(path, kManifestName);
    auto text = ReadFileToString(mpath);
    if (!text.ok()) {
      if (text.status().code() == Code::kNotFound)
        return Status::CheckFailed(
            path + ": no " + kManifestName +
            " (not a backup, or one whose creation did not finish)");
      return text.status();
    }
    CDC_ASSIGN_OR_RETURN(LoadedManifest lm, ReadManifestText(*text, mpath));
    for (const auto& e : lm.manifest.files) {
      if (!e.holder.empty()) continue;
      const std::string fpath = JoinPath(path, e.path);
      auto f = OpenFile(fpath, O_RDONLY);
      if (!f.ok()) {
        if (f.status().code() == Code::kNotFound) continue;
        return f.status();
      }
      CDC_ASSIGN_OR_RETURN(uint64_t size, FileSize(fpath));
      uint64_t off = 0;
      const int fd = f->fd();
      ChunkFn read = [&](char* buf, size_t n) -> Result<size_t> {
        CDC_ASSIGN_OR_RETURN(size_t got, PreadUpTo(fd, buf, n, off, fpath));
        off += got;
        return got;
      };
      CDC_RETURN_IF_ERROR(file(e.path, size, read));
    }
    return *text;
  }
  FileHandle owned;
  int fd = 0;
  if (path != "-") {
    CDC_ASSIGN_OR_RETURN(owned, OpenFile(path, O_RDONLY));
    fd = owned.fd();
  }
  const std::string where = path == "-" ? "stdin" : path;
  TarReader tar(fd, where);
  std::string manifest;
  for (;;) {
    CDC_ASSIGN_OR_RETURN(auto e, tar.Next());
    if (!e) break;
    if (e->name == kManifestName) {
      CDC_ASSIGN_OR_RETURN(manifest, ReadEntry(tar, e->size, where));
      continue;
    }
    ChunkFn read = [&](char* buf, size_t n) { return tar.Read(buf, n); };
    CDC_RETURN_IF_ERROR(file(e->name, e->size, read));
  }
  return manifest;
}

Result<std::string> FindBase(const std::string& path, const BaseRef& ref,
                             const std::string& search_dir) {
  std::string dir = search_dir;
  if (dir.empty()) {
    std::string p = path;
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    dir = path == "-" ? "." : DirName(p);
  }
  const std::string named = JoinPath(dir, ref.name);
  if (ref.name.find('/') == std::string::npos && ref.name != "." &&
      ref.name != ".." && PathExists(named)) {
    auto lm = LoadManifest(named);
    if (lm.ok() && lm->sha256 == ref.manifest_sha256) return named;
  }
  auto names = ListDir(dir);
  if (names.ok()) {
    for (const auto& n : *names) {
      if (n.empty() || n[0] == '.') continue;
      const std::string p = JoinPath(dir, n);
      // Directories only: finding a base among archives would read them.
      if (IsArchive(p)) continue;
      auto lm = LoadManifest(p);
      if (lm.ok() && lm->sha256 == ref.manifest_sha256) return p;
    }
  }
  return Status::NotFound(
      "the base backup " + ref.name + " (manifest " +
      ref.manifest_sha256.substr(0, 12) + "...) is not in " + dir +
      (PathExists(named) ? " (" + ref.name + " is another backup)" : ""));
}

}  // namespace cdc::backup
