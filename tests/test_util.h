// Helpers shared by the unit tests: temporary log directories, event lines,
// and running a tool's RunCli in-process with captured stdout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cdc/log/segment.h"
#include "cdc/log/writer.h"

namespace cdc::test {

// A fresh directory under $TMPDIR, removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A stored-form event line for transaction `txn`, row `i`, with `pad`
// bytes of payload.
std::string EventLine(uint64_t txn, uint64_t i, size_t pad = 16);

// Creates a log at `dir` (if needed) and appends `txns` transactions of
// `per_txn` events each; transaction t has commit LSN 0/(t*16) and xid t.
// Each transaction gets a frame of its own (see GroupedTxns for shared ones).
void WriteTxns(const std::string& dir, uint64_t first_txn, uint64_t txns,
               uint64_t per_txn, const log::WriterOptions& opts = {},
               size_t pad = 16);

// WriteTxns into 2 KiB segments, so even a few dozen transactions span
// several sealed segments; returns the log's segments.
Result<std::vector<log::SegmentInfo>> WriteSmallSegments(const std::string& dir,
                                                         uint64_t txns,
                                                         uint64_t per_txn);

struct ReadResult {
  std::vector<uint64_t> seqs;
  std::vector<std::string> lines;  // native form
  std::vector<bool> last;
};
// Reads every committed event from the earliest retained one.
ReadResult ReadAll(const std::string& dir);

// Runs argv through a tool runner with stdout captured to a string.
int RunTool(int (*run)(int, char**), const std::vector<std::string>& args,
            std::string* out = nullptr);

void FlipByte(const std::string& path, uint64_t offset);
void TruncateFile(const std::string& path, uint64_t size);
uint64_t SizeOf(const std::string& path);

}  // namespace cdc::test
