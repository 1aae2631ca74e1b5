// One line of `cdc-log import`'s NDJSON input: validated and rendered to
// the stored form, or refused with a Status.
#include "cdc/event/event.h"
#include "cdc/event/json_object.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  auto ev = cdc::event::ParseImportLine(line);
  if (ev.ok()) {
    // What import stores must read back as a stored event.
    cdc::event::EventHead head;
    if (!cdc::event::ParseHead(ev->stored, &head)) abort();
  }
  cdc::event::JsonObject obj;
  (void)cdc::event::ParseJsonObject(line, &obj);
  return 0;
}
