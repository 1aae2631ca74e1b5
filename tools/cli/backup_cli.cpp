// cdc-backup: online, checksummed, incremental backups of a cdc log, and
// verified restores. See cdc-backup(1).
#include <unistd.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cdc/backup/catalog.h"
#include "cdc/backup/check.h"
#include "cdc/backup/create.h"
#include "cdc/base/fs.h"
#include "cdc/base/time.h"
#include "cdc/cli/cli.h"
#include "cdc/log/log_dir.h"
#include "common.h"
#include "runners.h"

namespace cdc::backup_tool {

namespace {

constexpr const char* kProg = "cdc-backup";
using Json = nlohmann::ordered_json;

// "\rcdc-backup: copied 120 of 400 MiB, 95.1 MiB/s, 3 s left" on a
// terminal, at most five times a second.
class ProgressLine {
 public:
  ProgressLine(const char* verb, bool enabled)
      : verb_(verb), enabled_(enabled && isatty(2)) {}
  ~ProgressLine() { End(); }
  // Ends the line, so that what is printed next (the summary, an error)
  // starts on a line of its own.
  void End() {
    if (shown_) fputs("\n", stderr);
    shown_ = false;
  }
  backup::ProgressFn fn() {
    if (!enabled_) return nullptr;
    return [this](uint64_t done, uint64_t total) { Show(done, total); };
  }

 private:
  void Show(uint64_t done, uint64_t total) {
    const int64_t now = MonoMicros();
    if (start_ == 0) start_ = now;
    if (now < next_ && done < total) return;
    next_ = now + 200000;
    const double secs = static_cast<double>(now - start_) / 1e6;
    const double rate = secs > 0 ? static_cast<double>(done) / secs : 0;
    std::string left;
    if (rate > 0 && total > done)
      left = ", " +
             std::to_string(static_cast<long long>(
                 static_cast<double>(total - done) / rate + 0.5)) +
             " s left";
    fprintf(stderr, "\r%s: %s %llu of %llu MiB, %.1f MiB/s%s\033[K", kProg,
            verb_, static_cast<unsigned long long>(done >> 20),
            static_cast<unsigned long long>(total >> 20), rate / (1 << 20),
            left.c_str());
    shown_ = true;
  }
  const char* verb_;
  bool enabled_;
  bool shown_ = false;
  int64_t start_ = 0, next_ = 0;
};

Json ManifestSummary(const backup::Manifest& m, const std::string& sha) {
  Json j;
  j["manifest_sha256"] = sha;
  j["log_id"] = m.log_id;
  j["created"] = m.created;
  j["first_seq"] = m.first_seq;
  j["last_seq"] = m.end_seq - 1;
  j["first_lsn"] = FormatLsn(m.first_lsn);
  j["last_lsn"] = FormatLsn(m.last_lsn);
  j["base"] = m.base ? Json(m.base->name) : Json(nullptr);
  j["bytes"] = m.LocalBytes();
  j["log_bytes"] = m.TotalBytes();
  return j;
}

std::string Range(const backup::Manifest& m) {
  std::string r = m.end_seq > m.first_seq
                      ? "seq " + std::to_string(m.first_seq) + "-" +
                            std::to_string(m.end_seq - 1)
                      : "no events";
  return r + ", LSN " + FormatLsn(m.first_lsn) + "-" + FormatLsn(m.last_lsn);
}

struct CreateFlags {
  std::string log, out, out_dir, incremental;
  size_t keep = 0;
  bool json = false, quiet = false, no_sync = false;
};

Status Create(const CreateFlags& f) {
  if (f.log.empty()) return Status::Usage("--log DIR (or CDC_LOG) is required");
  if (f.out.empty() == f.out_dir.empty())
    return Status::Usage("give one of --out DEST and --out-dir DIR");
  if (f.keep && f.out_dir.empty())
    return Status::Usage("--keep is for --out-dir");
  backup::CreateOptions o;
  o.log = f.log;
  o.out = f.out;
  o.base = f.incremental;
  o.sync = !f.no_sync;
  if (!f.out_dir.empty()) {
    if (!PathExists(f.out_dir))
      return Status::NotFound("--out-dir " + f.out_dir + " does not exist");
    o.out = JoinPath(f.out_dir, backup::NewBackupName(f.out_dir, NowMicros()));
    if (f.incremental == "latest") {
      CDC_ASSIGN_OR_RETURN(auto entries, backup::ListCatalog(f.out_dir));
      CDC_ASSIGN_OR_RETURN(auto id, log::ReadIdentity(f.log));
      const auto* newest = backup::NewestOf(entries, id.log_id);
      o.base = newest ? newest->path : "";
    }
  } else if (f.incremental == "latest") {
    return Status::Usage("--incremental latest is for --out-dir");
  }
  ProgressLine progress("copied", !f.quiet);
  o.progress = progress.fn();
  auto created = backup::CreateBackup(o);
  progress.End();
  CDC_ASSIGN_OR_RETURN(backup::CreateResult r, std::move(created));
  std::vector<std::string> pruned;
  if (f.keep) {
    CDC_ASSIGN_OR_RETURN(pruned,
                         backup::Prune(f.out_dir, r.manifest.log_id, f.keep));
  }
  // With --out - stdout is the archive: the summary goes to stderr.
  FILE* out = o.out == "-" ? stderr : stdout;
  if (f.json) {
    Json j = ManifestSummary(r.manifest, r.manifest_sha256);
    j["path"] = o.out;
    j["pruned"] = pruned;
    if (!f.quiet) fprintf(out, "%s\n", j.dump().c_str());
  } else if (!f.quiet) {
    fprintf(out, "backup %s: %s, %llu bytes stored%s\n",
            o.out == "-" ? "to stdout" : o.out.c_str(),
            Range(r.manifest).c_str(),
            static_cast<unsigned long long>(r.bytes_stored),
            r.manifest.base
                ? (" (incremental on " + r.manifest.base->name + ")").c_str()
                : "");
    for (const auto& p : pruned) fprintf(out, "pruned %s\n", p.c_str());
  }
  return Status::OK();
}

// Prints all but the first problem; the first becomes the error line.
Status Problems(const std::vector<std::string>& problems) {
  for (size_t i = 1; i < problems.size(); ++i)
    fprintf(stderr, "%s: %s\n", kProg,
            cli::EscapeForTerminal(problems[i]).c_str());
  std::string first = problems.front();
  if (problems.size() > 1)
    first += " (and " + std::to_string(problems.size() - 1) +
             " more problems above)";
  return Status::CheckFailed(first);
}

Status Verify(const std::string& path, const std::string& base_dir, bool json,
              bool quiet) {
  ProgressLine progress("verified", !quiet && !json);
  backup::CheckOptions o{path, base_dir, progress.fn()};
  auto verified = backup::VerifyBackup(o);
  progress.End();
  CDC_ASSIGN_OR_RETURN(backup::CheckReport rep, std::move(verified));
  if (json) {
    Json j = ManifestSummary(rep.manifest, rep.manifest_sha256);
    j["ok"] = rep.ok();
    j["chain"] = rep.chain;
    j["problems"] = rep.problems;
    printf("%s\n", j.dump().c_str());
  } else if (rep.ok() && !quiet) {
    printf("ok %s: %s, %zu backup%s in its chain, %llu bytes checked\n",
           path == "-" ? "stdin" : path.c_str(), Range(rep.manifest).c_str(),
           rep.chain.size(), rep.chain.size() == 1 ? "" : "s",
           static_cast<unsigned long long>(rep.bytes));
  }
  if (!rep.ok()) return Problems(rep.problems);
  return Status::OK();
}

Status Restore(const std::string& path, const std::string& log,
               const std::string& base_dir, bool group, bool quiet) {
  if (log.empty()) return Status::Usage("--log NEWDIR is required");
  ProgressLine progress("restored", !quiet);
  backup::RestoreOptions o;
  o.check = backup::CheckOptions{path, base_dir, progress.fn()};
  o.log = log;
  if (group) {
    o.dir_mode = 0750;
    o.file_mode = 0640;
  }
  auto r = backup::RestoreBackup(o);
  progress.End();
  if (!r.ok()) return r.status().Annotate("nothing restored");
  const backup::CheckReport& rep = *r;
  if (!rep.ok()) return Problems(rep.problems).Annotate("nothing restored");
  if (!quiet)
    printf("restored %s into %s: %s\n", path == "-" ? "stdin" : path.c_str(),
           log.c_str(), Range(rep.manifest).c_str());
  return Status::OK();
}

Status List(const std::string& dir, bool json) {
  CDC_ASSIGN_OR_RETURN(auto entries, backup::ListCatalog(dir));
  std::map<std::string, std::string> names;  // manifest hash → name
  for (const auto& e : entries)
    if (e.ok) names[e.lm.sha256] = e.name;
  for (const auto& e : entries) {
    if (json) {
      Json j = e.ok ? ManifestSummary(e.lm.manifest, e.lm.sha256) : Json();
      j["name"] = e.name;
      j["ok"] = e.ok;
      if (!e.ok) j["error"] = e.error;
      printf("%s\n", j.dump().c_str());
      continue;
    }
    if (!e.ok) {
      printf("%s  unreadable: %s\n", e.name.c_str(),
             cli::EscapeForTerminal(e.error).c_str());
      continue;
    }
    const auto& m = e.lm.manifest;
    std::string kind = "full";
    if (m.base) {
      auto it = names.find(m.base->manifest_sha256);
      kind = "incremental on " +
             (it != names.end() ? it->second : m.base->name + " (missing)");
    }
    printf("%s  %s  log %s  %s  %llu bytes  %s\n", e.name.c_str(),
           m.created.c_str(), m.log_id.substr(0, 8).c_str(), Range(m).c_str(),
           static_cast<unsigned long long>(m.LocalBytes()), kind.c_str());
  }
  return Status::OK();
}

}  // namespace

int RunCli(int argc, char** argv) {
  cli::InstallStopHandlers();
  cli::InstallLogging(kProg);
  CLI::App app{
      "Back up a cdc log while it is written (checksummed, incremental), "
      "verify backups and restore them.",
      kProg};
  app.require_subcommand(1);
  CreateFlags cf;
  auto* create = app.add_subcommand(
      "create", "Back up the log: into a new directory, or as a tar on stdout");
  create->add_option("--log", cf.log, "Log directory")
      ->envname("CDC_LOG")
      ->type_name("DIR");
  create
      ->add_option("--out", cf.out,
                   "A new (or empty) directory, or - for one tar archive "
                   "on stdout")
      ->type_name("DEST");
  create
      ->add_option("--out-dir", cf.out_dir,
                   "Make a time-stamped backup inside DIR")
      ->type_name("DIR");
  create
      ->add_option("--incremental", cf.incremental,
                   "Store only what BASE (a backup of this log) lacks; "
                   "\"latest\" with --out-dir: the newest there")
      ->type_name("BASE");
  create
      ->add_option("--keep", cf.keep,
                   "With --out-dir: keep the newest N backups of this log "
                   "(and the bases they need), remove the rest")
      ->type_name("N")
      ->transform(tools::CountFlag(1, 1000000));
  create->add_flag("--json", cf.json, "Summary as one JSON object");
  create->add_flag("-q,--quiet", cf.quiet, "No progress, no summary");
  create->add_flag("--no-sync", cf.no_sync,
                   "Do not fsync the backup's files (faster; an OS crash "
                   "soon after can damage the backup)");

  std::string path, base_dir, restore_log;
  bool json = false, quiet = false, group = false;
  auto* verify = app.add_subcommand(
      "verify",
      "Recompute every checksum of a backup and its bases; exit 1 naming "
      "each file that differs");
  verify->add_option("PATH", path, "Backup directory, tar archive, or -")
      ->required();
  verify
      ->add_option("--base-dir", base_dir,
                   "Look for bases in DIR (default: beside PATH)")
      ->type_name("DIR");
  verify->add_flag("--json", json, "One JSON object");
  verify->add_flag("-q,--quiet", quiet, "Print problems only");
  auto* restore = app.add_subcommand(
      "restore", "Verify a backup and restore it into a new log directory");
  restore->add_option("PATH", path, "Backup directory, tar archive, or -")
      ->required();
  restore
      ->add_option("--log", restore_log,
                   "The new log directory (missing or empty)")
      ->type_name("NEWDIR");
  restore
      ->add_option("--base-dir", base_dir,
                   "Look for bases in DIR (default: beside PATH)")
      ->type_name("DIR");
  restore->add_flag("--group-access", group,
                    "Directories 0750 and files 0640 (default 0700, 0600)");
  restore->add_flag("-q,--quiet", quiet, "No progress, no summary");
  std::string list_dir;
  auto* list = app.add_subcommand(
      "list", "List the backups in a directory, oldest first");
  list->add_option("DIR", list_dir, "Directory of backups")->required();
  list->add_flag("--json", json, "One JSON object per backup");
  if (auto rc = tools::Parse(app, argc, argv)) return *rc;
  Status s;
  if (create->parsed())
    s = Create(cf);
  else if (verify->parsed())
    s = Verify(path, base_dir, json, quiet);
  else if (restore->parsed())
    s = Restore(path, restore_log, base_dir, group, quiet);
  else
    s = List(list_dir, json);
  return cli::Report(kProg, s);
}

}  // namespace cdc::backup_tool
