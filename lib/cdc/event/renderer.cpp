#include "cdc/event/renderer.h"

#include "cdc/event/event.h"
#include "cdc/event/formats.h"

namespace cdc::event {

namespace {

class NativeRenderer : public Renderer {
 public:
  void Restart(bool) override {}
  Status Append(uint64_t seq, std::string_view stored, bool last,
                std::string* out) override {
    AppendNative(seq, stored, last, out);
    return Status::OK();
  }
  Status Skip(uint64_t, std::string_view, bool) override {
    return Status::OK();
  }
};

}  // namespace

Result<Format> ParseFormat(std::string_view name) {
  if (name == "native") return Format::kNative;
  if (name == "debezium") return Format::kDebezium;
  if (name == "cloudevents") return Format::kCloudEvents;
  return Status::Usage("--format: unknown format \"" + std::string(name) +
                       "\" (use native, debezium or cloudevents)");
}

std::unique_ptr<Renderer> MakeNativeRenderer() {
  return std::make_unique<NativeRenderer>();
}

std::unique_ptr<Renderer> MakeRenderer(const RenderOptions& options,
                                       const SourceInfo& source) {
  switch (options.format) {
    case Format::kDebezium:
      return MakeDebeziumRenderer(options, source);
    case Format::kCloudEvents:
      return MakeCloudEventsRenderer(source);
    case Format::kNative:
      break;
  }
  return MakeNativeRenderer();
}

}  // namespace cdc::event
