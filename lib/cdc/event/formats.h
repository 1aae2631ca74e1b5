// The renderers behind MakeRenderer (renderer.h), one file each.
#pragma once

#include <memory>

#include "cdc/event/renderer.h"

namespace cdc::event {

std::unique_ptr<Renderer> MakeNativeRenderer();
std::unique_ptr<Renderer> MakeDebeziumRenderer(const RenderOptions& options,
                                               const SourceInfo& source);
std::unique_ptr<Renderer> MakeCloudEventsRenderer(const SourceInfo& source);

}  // namespace cdc::event
