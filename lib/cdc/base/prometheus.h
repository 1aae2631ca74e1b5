// Prometheus text exposition (version 0.0.4): the one writer behind every
// --metrics-file and `cdc-log stats --prometheus`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cdc {

class Exposition {
 public:
  // A metric family's HELP and TYPE lines; its samples follow (Sample).
  void Family(std::string_view name, std::string_view type,
              std::string_view help);
  // One sample: `labels` is the text inside the braces (k="v",...), empty
  // for none. Doubles are written with %.17g, integers exactly.
  void Sample(std::string_view name, double v, std::string_view labels = {});
  void Sample(std::string_view name, uint64_t v, std::string_view labels = {});
  // A family of one unlabelled sample.
  template <typename V>
  void Metric(std::string_view name, std::string_view type,
              std::string_view help, V v) {
    Family(name, type, help);
    Sample(name, v);
  }
  // Labels every sample written from now on carries first (k="v",...):
  // what tells one instance of a tool from another (log, consumer, slot),
  // so that several tools' files can share one textfile directory.
  void SetCommonLabels(std::string labels) { common_ = std::move(labels); }
  const std::string& text() const { return out_; }
  std::string& mutable_text() { return out_; }

 private:
  void Head(std::string_view name, std::string_view labels);
  std::string out_;
  std::string common_;
};

// `v` as a label value: backslash, double quote and newline escaped.
std::string PrometheusLabelValue(std::string_view v);

}  // namespace cdc
