// Rendered event lines handed from a source's decoder to the log writer.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace cdc::event {

// The event lines a source renders for one message, in stored form (see
// cdc-log-format(5)). Kept from message to message so each line's
// buffer is reused: rendering allocates nothing in the steady state.
class EventLines {
 public:
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const std::string& operator[](size_t i) const { return lines_[i]; }
  // For taking a line's contents (see LogWriter::AppendTaking).
  std::string* mutable_line(size_t i) { return &lines_[i]; }
  const std::string* begin() const { return lines_.data(); }
  const std::string* end() const { return lines_.data() + n_; }
  void clear() { n_ = 0; }

  // A new empty line at the end. Valid until the next Add.
  std::string* Add();
  // Drops the lines from `n` on.
  void Truncate(size_t n) { n_ = std::min(n, n_); }
  // The last line added is a schema event (op s).
  void MarkSchema() { schema_[n_ - 1] = true; }
  bool is_schema(size_t i) const { return schema_[i]; }

 private:
  std::vector<std::string> lines_;
  std::vector<bool> schema_;
  size_t n_ = 0;
};

}  // namespace cdc::event
