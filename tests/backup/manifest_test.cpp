#include "cdc/backup/manifest.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "cdc/backup/create.h"
#include "cdc/backup/source.h"
#include "cdc/backup/tar.h"
#include "cdc/base/fs.h"
#include "cdc/log/pin.h"
#include "cdc/log/retention.h"
#include "test_util.h"

namespace cdc::backup {

namespace {

const std::string kHashA(64, 'a');
const std::string kHashB(64, 'b');

Manifest Sample() {
  Manifest m;
  m.log_id = std::string(32, 'c');
  m.log_format_version = 1;
  m.created = "2026-12-01T07:00:00.000000Z";
  m.tool_version = "0.1.0";
  m.first_seq = 1;
  m.end_seq = 31;
  m.first_lsn = 0x100;
  m.last_lsn = 0x1F00;
  m.files.push_back({"log.json", 120, kHashA, "", 0, 0, false});
  m.files.push_back(
      {"segments/00000000000000000001.seg", 4096, kHashA, "", 1, 21, true});
  m.files.push_back({"segments/00000000000000000001.seg.sealed", 300, kHashB,
                     "", 0, 0, false});
  m.files.push_back(
      {"segments/00000000000000000021.seg", 1000, kHashB, "", 21, 31, false});
  return m;
}

}  // namespace

TEST_CASE("a manifest reads back what was written", "[backup]") {
  Manifest m = Sample();
  m.base = BaseRef{kHashA, "cdc-backup-20261201T000000Z"};
  m.files[1].holder = kHashA;
  auto back = ParseManifest(ManifestJson(m), "m");
  REQUIRE(back.ok());
  CHECK(back->log_id == m.log_id);
  CHECK(back->end_seq == 31);
  CHECK(back->last_lsn == 0x1F00);
  REQUIRE(back->base);
  CHECK(back->base->name == "cdc-backup-20261201T000000Z");
  REQUIRE(back->files.size() == 4);
  CHECK(back->files[1].holder == kHashA);
  CHECK(back->files[1].sealed);
  CHECK(back->files[3].first_seq == 21);
  CHECK(back->LocalBytes() == 120 + 300 + 1000);
  CHECK(back->TotalBytes() == 120 + 4096 + 300 + 1000);
  CHECK(ManifestJson(*back) == ManifestJson(m));
}

TEST_CASE("any changed byte of a manifest is found", "[backup][corruption]") {
  const std::string text = ManifestJson(Sample());
  int found = 0, total = 0;
  for (size_t i = 0; i < text.size(); i += 7) {
    std::string bad = text;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    ++total;
    auto r = ParseManifest(bad, "m");
    if (!r.ok()) ++found;
    // Only the version field may turn it into another version's manifest.
    if (!r.ok() && r.status().code() != Code::kCheckFailed)
      CHECK(r.status().code() == Code::kBadInput);
  }
  CHECK(found == total);
  auto r = ParseManifest(text.substr(0, text.size() / 2), "m");
  CHECK(r.status().code() == Code::kCheckFailed);
  CHECK(r.status().message().rfind("m: not a readable manifest", 0) == 0);
}

TEST_CASE("a manifest of another version is refused as such", "[backup]") {
  std::string text = ManifestJson(Sample());
  auto at = text.find("\"format_version\": 1");
  REQUIRE(at != std::string::npos);
  text.replace(at, 19, "\"format_version\": 7");
  auto r = ParseManifest(text, "m");
  CHECK(r.status().code() == Code::kBadInput);
  CHECK(r.status().message() ==
        "m: backup format version 7; this cdc-backup reads version 1");
}

TEST_CASE("a number JSON allows but a double cannot hold is refused",
          "[backup][fuzz]") {
  // Found by fuzz_manifest: nlohmann threw out_of_range, not parse_error,
  // and the exception ended cdc-backup verify.
  auto r = ParseManifest("{\"format_version\": 4e657}", "m");
  CHECK(r.status().code() == Code::kCheckFailed);
  CHECK_THAT(r.status().message(),
             Catch::StartsWith("m: not a readable manifest ("));
}

TEST_CASE("a manifest with holes or foreign paths is refused", "[backup]") {
  Manifest gap = Sample();
  gap.files[3].first_seq = 22;
  gap.files[3].path = "segments/00000000000000000022.seg";
  auto r = ParseManifest(ManifestJson(gap), "m");
  CHECK(r.status().message() ==
        "m: segments/00000000000000000022.seg starts at seq 22, expected 21 "
        "(a segment is missing)");
  Manifest end = Sample();
  end.end_seq = 40;
  CHECK(ParseManifest(ManifestJson(end), "m").status().message() ==
        "m: segments end at seq 31, the manifest says 40");
  for (const char* p :
       {"../x", "/etc/passwd", "segments/../../x.seg", "segments/1.seg", "LOCK",
        "durable", "snapshots/../log.json", "snapshots/a/b.json",
        "snapshots/.json", "snapshots/x.json.tmp", "snapshots/x y.json",
        "snapshots/"}) {
    Manifest bad = Sample();
    bad.files[0].path = p;
    CHECK(ParseManifest(ManifestJson(bad), "m").status().code() ==
          Code::kCheckFailed);
  }
  CHECK(IsBackupPath("segments/00000000000000000001.seg.sealed"));
  CHECK(IsBackupPath("snapshots/20261201T221500Z-3f2a91.json"));
  CHECK(IsBackupPath("manifest.json", true));
  CHECK_FALSE(IsBackupPath("manifest.json"));
}

TEST_CASE("tar entries read back; a cut archive is named truncated",
          "[backup][corruption]") {
  test::TempDir dir;
  const std::string path = dir.sub("a.tar");
  {
    auto f = OpenFile(path, O_WRONLY | O_CREAT, 0600);
    REQUIRE(f.ok());
    TarWriter w(f->fd(), path);
    REQUIRE(w.Begin("log.json", 5, 0).ok());
    REQUIRE(w.Write("hello").ok());
    REQUIRE(w.End().ok());
    REQUIRE(w.Begin("segments/00000000000000000001.seg", 1000, 0).ok());
    REQUIRE(w.Write(std::string(1000, 'x')).ok());
    REQUIRE(w.End().ok());
    REQUIRE(w.Finish().ok());
  }
  auto read_all = [&](const std::string& p) -> Status {
    auto f = OpenFile(p, O_RDONLY);
    if (!f.ok()) return f.status();
    TarReader r(f->fd(), p);
    char buf[300];
    for (;;) {
      auto e = r.Next();
      if (!e.ok()) return e.status();
      if (!*e) return Status::OK();
      for (;;) {
        auto n = r.Read(buf, sizeof buf);
        if (!n.ok()) return n.status();
        if (*n == 0) break;
      }
    }
  };
  CHECK(read_all(path).ok());
  auto whole = ReadFileToString(path, 1 << 20);
  REQUIRE(whole.ok());
  CHECK(whole->size() == 512 + 512 + 512 + 1024 + 1024);
  for (size_t cut : {size_t{0}, size_t{300}, size_t{1100}, size_t{2000},
                     whole->size() - 1024}) {
    const std::string p = dir.sub("cut" + std::to_string(cut));
    REQUIRE(WriteFileAtomic(p, whole->substr(0, cut)).ok());
    Status s = read_all(p);
    CHECK(s.code() == Code::kCheckFailed);
    CHECK(s.message().find("truncated archive") != std::string::npos);
  }
}

TEST_CASE("retention removes nothing while a backup pins the log",
          "[backup][log][retention]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  auto segs = test::WriteSmallSegments(log, 60, 4);
  REQUIRE(segs.ok());
  REQUIRE(segs->size() >= 4);
  log::RetentionPolicy keep1;
  keep1.max_segments = 1;
  {
    auto pin = log::RetentionPin::Acquire(log);
    REQUIRE(pin.ok());
    auto r = log::ApplyRetention(log, keep1, 0, false);
    REQUIRE(r.ok());
    CHECK(r->pinned);
    CHECK(r->removed.empty());
    CHECK(log::ListSegments(log)->size() == segs->size());
  }
  auto r = log::ApplyRetention(log, keep1, 0, false);
  REQUIRE(r.ok());
  CHECK_FALSE(r->pinned);
  CHECK(r->removed.size() == segs->size() - 1);
}

TEST_CASE("a backup directory's manifest hash names it", "[backup]") {
  test::TempDir dir;
  const std::string log = dir.sub("log");
  REQUIRE(test::WriteSmallSegments(log, 30, 3).ok());
  CreateOptions o;
  o.log = log;
  o.out = dir.sub("b");
  auto r = CreateBackup(o);
  REQUIRE(r.ok());
  auto lm = LoadManifest(dir.sub("b"));
  REQUIRE(lm.ok());
  CHECK(lm->sha256 == r->manifest_sha256);
  CHECK(lm->manifest.end_seq == 91);
  CHECK(
      FindBase(dir.sub("x"), BaseRef{r->manifest_sha256, "gone"}, "").value() ==
      dir.sub("b"));
}

}  // namespace cdc::backup
