// A consistent copy of a log's consumers.db while other processes ack.
#pragma once

#include <string>

#include "cdc/base/status.h"

namespace cdc::cursor {

// Copies LOG_DIR/consumers.db to DEST (a new file, mode 0600, fsynced)
// through SQLite's online backup API: the copy is the database as one
// transaction saw it, never a mixture of two acks. Writers are held up only
// for the moments each copy step takes. NotFound when the log has no
// consumers.db; CannotCreate when DEST exists.
Status SnapshotConsumers(const std::string& log_dir, const std::string& dest);

}  // namespace cdc::cursor
