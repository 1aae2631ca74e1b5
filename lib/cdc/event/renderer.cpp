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

Status ApplyDebeziumModes(const DebeziumModeNames& n, RenderOptions* ro) {
  if (n.any() && ro->format != Format::kDebezium)
    return Status::Usage(
        "--decimal-handling, --time-precision and --binary-handling need "
        "--format debezium");
  auto bad = [](const char* flag, const std::string& v, const char* modes) {
    return Status::Usage(std::string(flag) + " must be " + modes + ", not \"" +
                         v + "\"");
  };
  const std::string& d = n.decimal_handling;
  if (d == "precise" || d.empty()) {
    ro->decimal_handling = DecimalHandling::kPrecise;
  } else if (d == "double") {
    ro->decimal_handling = DecimalHandling::kDouble;
  } else if (d == "string") {
    ro->decimal_handling = DecimalHandling::kString;
  } else {
    return bad("--decimal-handling", d, "precise, double or string");
  }
  const std::string& t = n.time_precision;
  if (t == "adaptive" || t.empty()) {
    ro->time_precision = TimePrecision::kAdaptive;
  } else if (t == "adaptive_time_microseconds") {
    ro->time_precision = TimePrecision::kAdaptiveTimeMicroseconds;
  } else if (t == "connect") {
    ro->time_precision = TimePrecision::kConnect;
  } else {
    return bad("--time-precision", t,
               "adaptive, adaptive_time_microseconds or connect");
  }
  const std::string& b = n.binary_handling;
  if (b == "bytes" || b.empty()) {
    ro->binary_handling = BinaryHandling::kBytes;
  } else if (b == "base64") {
    ro->binary_handling = BinaryHandling::kBase64;
  } else if (b == "hex") {
    ro->binary_handling = BinaryHandling::kHex;
  } else {
    return bad("--binary-handling", b, "bytes, base64 or hex");
  }
  return Status::OK();
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
