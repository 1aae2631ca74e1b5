#include "cdc/base/status.h"

namespace cdc {

int ExitCodeFor(const Status& s) {
  switch (s.code()) {
    case Code::kOk:
      return 0;
    case Code::kCheckFailed:
      return 1;
    case Code::kUsage:
      return 64;
    case Code::kBadInput:
    case Code::kCorruption:
      return 65;
    case Code::kNotFound:
      return 66;
    case Code::kUnavailable:
      return 69;
    case Code::kInternal:
      return 70;
    case Code::kCannotCreate:
      return 73;
    case Code::kIOError:
      return 74;
    case Code::kBusy:
      return 75;
    case Code::kPermission:
      return 77;
    case Code::kConfig:
      return 78;
    case Code::kExpired:
      return 10;
    case Code::kGap:
      return 11;
  }
  return 70;
}

}  // namespace cdc
