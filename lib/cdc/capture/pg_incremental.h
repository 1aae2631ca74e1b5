// PostgreSQL's side of incremental snapshots (incremental.h): watermarks
// are transactional logical decoding messages with the prefix
// cdc.snapshot, a chunk is COPY (SELECT ... WHERE key > last ORDER BY key
// LIMIT n) under an ACCESS SHARE lock, and its rows are rendered by the
// stream's own event builder.
#pragma once

#include <memory>

#include "cdc/capture/incremental.h"
#include "cdc/capture/options.h"
#include "cdc/pg/event_builder.h"

namespace cdc::capture {

// `o` and `builder` (the stream's, used on the capture thread only) must
// outlive the source.
std::unique_ptr<ChunkSource> MakePgChunkSource(const Options& o,
                                               pg::EventBuilder* builder);

}  // namespace cdc::capture
