#include "cdc/backup/catalog.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>

#include "cdc/backup/files.h"
#include "cdc/base/fs.h"

namespace cdc::backup {

Result<std::vector<CatalogEntry>> ListCatalog(const std::string& dir) {
  if (!PathExists(dir)) return Status::NotFound("no backup directory " + dir);
  CDC_ASSIGN_OR_RETURN(auto names, ListDir(dir));
  std::vector<CatalogEntry> out;
  for (const auto& n : names) {
    if (n.empty() || n[0] == '.') continue;
    CatalogEntry e;
    e.name = n;
    e.path = JoinPath(dir, n);
    e.archive = IsArchive(e.path);
    if (e.archive ? n.size() < 5 || n.substr(n.size() - 4) != ".tar"
                  : !PathExists(JoinPath(e.path, kManifestName)))
      continue;
    auto lm = LoadManifest(e.path);
    e.ok = lm.ok();
    if (lm.ok())
      e.lm = std::move(*lm);
    else
      e.error = lm.status().message();
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(),
            [](const CatalogEntry& a, const CatalogEntry& b) {
              if (a.lm.manifest.created != b.lm.manifest.created)
                return a.lm.manifest.created < b.lm.manifest.created;
              return a.name < b.name;
            });
  return out;
}

std::string NewBackupName(const std::string& dir, int64_t now_us) {
  time_t t = static_cast<time_t>(now_us / 1000000);
  struct tm tm;
  gmtime_r(&t, &tm);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  std::string base = std::string("cdc-backup-") + stamp;
  std::string name = base;
  for (int i = 2; PathExists(JoinPath(dir, name)) ||
                  PathExists(JoinPath(dir, name + ".tar"));
       ++i)
    name = base + "-" + std::to_string(i);
  return name;
}

const CatalogEntry* NewestOf(const std::vector<CatalogEntry>& entries,
                             const std::string& log_id) {
  const CatalogEntry* best = nullptr;
  for (const auto& e : entries)
    if (e.ok && e.lm.manifest.log_id == log_id) best = &e;
  return best;
}

Result<std::vector<std::string>> Prune(const std::string& dir,
                                       const std::string& log_id, size_t keep) {
  CDC_ASSIGN_OR_RETURN(auto entries, ListCatalog(dir));
  std::vector<const CatalogEntry*> mine;
  std::map<std::string, const CatalogEntry*> by_hash;
  for (const auto& e : entries) {
    if (!e.ok || e.lm.manifest.log_id != log_id) continue;
    mine.push_back(&e);
    by_hash[e.lm.sha256] = &e;
  }
  // Kept: the newest `keep`, and every backup their files are in.
  std::set<const CatalogEntry*> kept;
  for (size_t i = mine.size() > keep ? mine.size() - keep : 0; i < mine.size();
       ++i) {
    const CatalogEntry* e = mine[i];
    kept.insert(e);
    for (const auto& f : e->lm.manifest.files) {
      if (f.holder.empty()) continue;
      auto it = by_hash.find(f.holder);
      if (it != by_hash.end()) kept.insert(it->second);
    }
    // The chain links too, even where no file is needed from a base.
    const CatalogEntry* c = e;
    while (c && c->lm.manifest.base) {
      auto it = by_hash.find(c->lm.manifest.base->manifest_sha256);
      c = it == by_hash.end() ? nullptr : it->second;
      if (c) kept.insert(c);
    }
  }
  std::vector<std::string> removed;
  for (const CatalogEntry* e : mine) {
    if (kept.count(e)) continue;
    // Hidden first, so a removal cut short is never listed as a backup.
    const std::string hidden = TempSibling(e->path, "removing");
    if (::rename(e->path.c_str(), hidden.c_str()) != 0)
      return ErrnoStatus("rename", e->path, errno);
    CDC_RETURN_IF_ERROR(RemoveTree(hidden));
    removed.push_back(e->name);
  }
  if (!removed.empty()) CDC_RETURN_IF_ERROR(SyncDir(dir));
  return removed;
}

}  // namespace cdc::backup
