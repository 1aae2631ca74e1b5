#include "cdc/base/time.h"

#include <time.h>

#include <cstdio>

namespace cdc {

int64_t NowMicros() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000000 + ts.tv_nsec / 1000;
}

int64_t MonoMicros() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000 + ts.tv_nsec / 1000;
}

namespace {

// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

int DaysInMonth(int y, int m) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

}  // namespace

bool ParseDigits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

std::string FormatTimestamp(int64_t us) {
  // Floor division by remainders: negating `us` would overflow at INT64_MIN
  // (a damaged seal record can hold any time).
  int64_t secs = us / 1000000, frac = us % 1000000;
  if (frac < 0) {
    frac += 1000000;
    --secs;
  }
  int64_t days = secs / 86400, sod = secs % 86400;
  if (sod < 0) {
    sod += 86400;
    --days;
  }
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  if (y < 0 || y > 9999) {
    char buf[96];
    snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02d.%06lldZ",
             static_cast<long long>(y), m, d, static_cast<int>(sod / 3600),
             static_cast<int>(sod / 60 % 60), static_cast<int>(sod % 60),
             static_cast<long long>(frac));
    return buf;
  }
  // The common case, once per transaction on capture's hot path: no printf.
  char buf[] = "0000-00-00T00:00:00.000000Z";
  auto put = [&buf](int at, int64_t v, int width) {
    for (int i = at + width - 1; i >= at; --i, v /= 10)
      buf[i] = static_cast<char>('0' + v % 10);
  };
  put(0, y, 4);
  put(5, m, 2);
  put(8, d, 2);
  put(11, sod / 3600, 2);
  put(14, sod / 60 % 60, 2);
  put(17, sod % 60, 2);
  put(20, frac, 6);
  return std::string(buf, sizeof buf - 1);
}

Result<int64_t> ParseTimestamp(std::string_view s) {
  auto bad = [&] {
    return Status::Usage("invalid timestamp \"" + std::string(s) +
                         "\" (expected e.g. 2026-11-29T07:41:02Z)");
  };
  int y, mo, d, h = 0, mi = 0, se = 0;
  if (!ParseDigits(s, 0, 4, &y) || s.size() < 10 || s[4] != '-' ||
      !ParseDigits(s, 5, 2, &mo) || s[7] != '-' || !ParseDigits(s, 8, 2, &d))
    return bad();
  if (mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, mo)) return bad();
  size_t p = 10;
  int64_t frac_us = 0;
  int64_t offset_s = 0;
  if (p < s.size()) {
    if (s[p] != 'T' && s[p] != 't' && s[p] != ' ') return bad();
    ++p;
    if (!ParseDigits(s, p, 2, &h) || p + 2 >= s.size() || s[p + 2] != ':' ||
        !ParseDigits(s, p + 3, 2, &mi))
      return bad();
    p += 5;
    if (p < s.size() && s[p] == ':') {
      if (!ParseDigits(s, p + 1, 2, &se)) return bad();
      p += 3;
    }
    if (h > 23 || mi > 59 || se > 60) return bad();
    if (p < s.size() && s[p] == '.') {
      ++p;
      int n = 0;
      while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
        if (n < 6) frac_us = frac_us * 10 + (s[p] - '0');
        ++n;
        ++p;
      }
      if (n == 0) return bad();
      for (int i = n; i < 6; ++i) frac_us *= 10;
    }
    if (p == s.size()) return bad();  // a time needs an explicit zone
    if (s[p] == 'Z' || s[p] == 'z') {
      ++p;
    } else if (s[p] == '+' || s[p] == '-') {
      int oh, om;
      if (!ParseDigits(s, p + 1, 2, &oh)) return bad();
      size_t q = p + 3;
      if (q < s.size() && s[q] == ':') ++q;
      // RFC 3339's time-numoffset: hours 00-23, minutes 00-59.
      if (!ParseDigits(s, q, 2, &om) || oh > 23 || om > 59) return bad();
      offset_s = (oh * 3600 + om * 60) * (s[p] == '-' ? -1 : 1);
      p = q + 2;
    } else {
      return bad();
    }
    if (p != s.size()) return bad();
  }
  int64_t secs =
      DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offset_s;
  return secs * 1000000 + frac_us;
}

void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

}  // namespace cdc
