// The renderers behind MakeRenderer (renderer.h), one file each.
#pragma once

#include <memory>
#include <string>

#include "cdc/event/renderer.h"

namespace cdc::event {

std::unique_ptr<Renderer> MakeNativeRenderer();
std::unique_ptr<Renderer> MakeDebeziumRenderer(const RenderOptions& options,
                                               const SourceInfo& source);
std::unique_ptr<Renderer> MakeCloudEventsRenderer(const SourceInfo& source);

// The CloudEvents "source" of every event of the log: cdc://postgresql/
// SYSTEM_ID/DATABASE/LOG_ID, or cdc://import/LOG_ID for a log without a
// source (segments percent-encoded).
std::string CloudEventsSource(const SourceInfo& source);

}  // namespace cdc::event
