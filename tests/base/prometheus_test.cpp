// The one Prometheus text writer: families, samples, labels.
#include "cdc/base/prometheus.h"

#include <catch2/catch.hpp>

namespace cdc {

TEST_CASE("exposition: families, exact integers, common and own labels",
          "[base][prometheus]") {
  Exposition e;
  e.Metric("a_total", "counter", "As.", uint64_t{18446744073709551615u});
  e.SetCommonLabels("log=\"L\",slot=\"s\"");
  e.Family("b_seconds", "histogram", "Bs.");
  e.Sample("b_seconds_bucket", uint64_t{3}, "le=\"+Inf\"");
  e.Sample("b_seconds_sum", 0.25);
  CHECK(e.text() ==
        "# HELP a_total As.\n# TYPE a_total counter\n"
        "a_total 18446744073709551615\n"
        "# HELP b_seconds Bs.\n# TYPE b_seconds histogram\n"
        "b_seconds_bucket{log=\"L\",slot=\"s\",le=\"+Inf\"} 3\n"
        "b_seconds_sum{log=\"L\",slot=\"s\"} 0.25\n");
}

TEST_CASE("exposition: label values are escaped", "[base][prometheus]") {
  CHECK(PrometheusLabelValue("plain") == "plain");
  CHECK(PrometheusLabelValue("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
}

}  // namespace cdc
