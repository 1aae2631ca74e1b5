#include "cdc/event/lines.h"

namespace cdc::event {

std::string* EventLines::Add() {
  if (n_ == lines_.size()) {
    lines_.emplace_back();
    schema_.push_back(false);
  }
  schema_[n_] = false;
  std::string* line = &lines_[n_++];
  // Keep ordinary buffers; let go of one a huge row left behind.
  if (line->capacity() > (1u << 20)) std::string().swap(*line);
  line->clear();
  return line;
}

}  // namespace cdc::event
