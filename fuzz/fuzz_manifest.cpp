// A backup's manifest.json: parsed and checked, or refused.
#include "cdc/backup/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = cdc::backup::ParseManifest(text, "fuzz/manifest.json");
  if (m.ok()) {
    // What parses must write out and parse back the same.
    auto again =
        cdc::backup::ParseManifest(cdc::backup::ManifestJson(*m), "fuzz/again");
    if (!again.ok()) abort();
  }
  return 0;
}
