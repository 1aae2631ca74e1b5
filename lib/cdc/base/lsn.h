// PostgreSQL WAL positions (XLogRecPtr) in their "X/Y" text form.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cdc/base/status.h"

namespace cdc {

using Lsn = uint64_t;

// "16/B374D848": high and low 32 bits in upper-case hex, as PostgreSQL prints.
std::string FormatLsn(Lsn lsn);
Result<Lsn> ParseLsn(std::string_view text);

}  // namespace cdc
