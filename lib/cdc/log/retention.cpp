#include "cdc/log/retention.h"

#include <unistd.h>

#include "cdc/log/pin.h"

namespace cdc::log {

Result<RetentionResult> ApplyRetention(const std::string& dir,
                                       const RetentionPolicy& policy,
                                       int64_t now_us, bool dry_run) {
  RetentionResult res;
  // Held until the removals are synced, so a backup that starts meanwhile
  // lists the segments only once they are gone.
  FileHandle pin;
  bool pinned = false;
  if (!dry_run) {
    CDC_ASSIGN_OR_RETURN(pin, TryExclusivePin(dir, &pinned));
  }
  CDC_ASSIGN_OR_RETURN(auto segs, ListSegments(dir));
  std::vector<uint64_t> sizes;
  uint64_t total = 0;
  for (const auto& s : segs) {
    CDC_ASSIGN_OR_RETURN(uint64_t n, FileSize(s.path));
    sizes.push_back(n);
    total += n;
  }
  size_t count = segs.size();
  size_t i = 0;
  // Only a prefix of sealed segments goes, so the log stays one dense range.
  for (; i + 1 < segs.size(); ++i) {
    const auto& s = segs[i];
    if (!s.seal) break;  // unsealed by a crash: the writer reseals it first
    bool too_big = policy.max_bytes && total > policy.max_bytes;
    bool too_many = policy.max_segments && count > policy.max_segments;
    // A seal record can hold any time: the age must not overflow. An age
    // beyond int64 is older than any limit.
    int64_t age = 0;
    const bool age_overflows =
        __builtin_sub_overflow(now_us, s.seal->last_time, &age);
    bool too_old =
        policy.max_age_us &&
        (age_overflows ? s.seal->last_time < now_us : age > policy.max_age_us);
    if (!too_big && !too_many && !too_old) break;
    if (pinned) {
      res.pinned = true;
      break;
    }
    if (!dry_run) {
      if (::unlink(s.path.c_str()) != 0 && errno != ENOENT)
        return ErrnoStatus("remove", s.path, errno);
      if (::unlink(SealRecordPath(s.path).c_str()) != 0 && errno != ENOENT)
        return ErrnoStatus("remove", SealRecordPath(s.path), errno);
    }
    res.removed.push_back(s);
    res.bytes_removed += sizes[i];
    total -= sizes[i];
    --count;
  }
  if (!dry_run && !res.removed.empty())
    CDC_RETURN_IF_ERROR(SyncDir(SegmentsDir(dir)));
  res.first_seq = segs.empty() ? 1 : segs[i].base_seq;
  return res;
}

}  // namespace cdc::log
