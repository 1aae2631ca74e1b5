// The frame and segment reader, the verifier and the writer's recovery,
// on an arbitrary newest segment: whatever the bytes, they fail with a
// Status (never crash, never read outside what they hold, never loop).
#include <filesystem>

#include "cdc/log/log_dir.h"
#include "cdc/log/reader.h"
#include "cdc/log/verify.h"
#include "cdc/log/writer.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string dir = cdc::fuzz::ScratchDir() + "/log";
  std::filesystem::remove_all(dir);
  if (!cdc::log::CreateLog(dir, std::nullopt).ok()) abort();
  cdc::fuzz::WriteFile(dir + "/segments/00000000000000000001.seg", data, size);
  {
    auto r = cdc::log::LogReader::Open(dir);
    if (r.ok()) {
      cdc::log::Batch b;
      for (int i = 0; i < 100000; ++i) {
        auto got = (*r)->Next(&b);
        if (!got.ok() || !*got) break;
        uint64_t n = 0;
        b.ForEach(
            [&](uint64_t, std::string_view line, bool) { n += line.size(); });
        (void)n;
      }
    }
  }
  (void)cdc::log::VerifyLog(dir);
  {
    cdc::log::WriterOptions o;
    o.compress_threads = 1;
    auto w = cdc::log::LogWriter::Open(dir, o);
    if (w.ok()) {
      (void)(*w)->Append(R"({"lsn":"0/10","xid":1,"ts":"2026-01-01T00:00:00Z",)"
                         R"("op":"c","schema":"s","table":"t","key":null,)"
                         R"("before":null,"after":{"a":1}})");
      (void)(*w)->Commit(0xffffffff, 0, 1);
      (void)(*w)->Sync();
    }
  }
  return 0;
}
