#include "cdc/base/prometheus.h"

#include <cstdio>

namespace cdc {

void Exposition::Family(std::string_view name, std::string_view type,
                        std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  out_ += help;
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void Exposition::Head(std::string_view name, std::string_view labels) {
  out_ += name;
  if (!labels.empty() || !common_.empty()) {
    out_ += '{';
    out_ += common_;
    if (!labels.empty() && !common_.empty()) out_ += ',';
    out_ += labels;
    out_ += '}';
  }
  out_ += ' ';
}
void Exposition::Sample(std::string_view name, double v,
                        std::string_view labels) {
  Head(name, labels);
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g\n", v);
  out_ += buf;
}

void Exposition::Sample(std::string_view name, uint64_t v,
                        std::string_view labels) {
  Head(name, labels);
  out_ += std::to_string(v);
  out_ += '\n';
}

std::string PrometheusLabelValue(std::string_view v) {
  std::string o;
  o.reserve(v.size());
  for (char c : v) {
    if (c == '\\' || c == '"') {
      o += '\\';
      o += c;
    } else if (c == '\n') {
      o += "\\n";
    } else {
      o += c;
    }
  }
  return o;
}

}  // namespace cdc
