#include "cdc/event/json_scan.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <unordered_set>

#include "cdc/event/json_text.h"

namespace cdc::event {

namespace {

bool Ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  Status Run(std::vector<JsonMemberView>* out) {
    out->clear();
    if (!IsValidUtf8(s_)) return Status::BadInput("not valid UTF-8");
    // nlohmann's lexer skips a byte order mark at the start.
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") p_ = 3;
    SkipWs();
    if (p_ >= s_.size() || s_[p_] != '{') {
      JsonKind k;
      uint64_t u;
      const bool value = Value(&k, &u) && Rest();
      return Status::BadInput(value ? "not a JSON object" : Invalid());
    }
    ++p_;
    SkipWs();
    if (p_ < s_.size() && s_[p_] == '}') {
      ++p_;
      return Rest() ? Status::OK() : Status::BadInput(Invalid());
    }
    for (;;) {
      SkipWs();
      const size_t ks = p_;
      if (!String()) return Status::BadInput(Invalid());
      JsonMemberView& m = out->emplace_back();
      AppendDecodedJsonString(s_.substr(ks, p_ - ks), &m.key);
      SkipWs();
      if (p_ >= s_.size() || s_[p_] != ':') return Status::BadInput(Invalid());
      ++p_;
      SkipWs();
      const size_t vs = p_;
      if (!Value(&m.kind, &m.unsigned_value)) return Status::BadInput(why_);
      m.text = s_.substr(vs, p_ - vs);
      SkipWs();
      if (p_ < s_.size() && s_[p_] == ',') {
        ++p_;
        continue;
      }
      if (p_ < s_.size() && s_[p_] == '}') {
        ++p_;
        break;
      }
      return Status::BadInput(Invalid());
    }
    if (!Rest()) return Status::BadInput(Invalid());
    std::unordered_set<std::string_view> seen;
    seen.reserve(out->size());
    for (const JsonMemberView& m : *out)
      if (!seen.insert(m.key).second)
        return Status::BadInput("key \"" + Clip(m.key) + "\" appears twice");
    return Status::OK();
  }

 private:
  static std::string Clip(std::string_view s) {
    constexpr size_t kMax = 40;
    return s.size() <= kMax ? std::string(s)
                            : std::string(s.substr(0, kMax)) + "...";
  }
  std::string Invalid() {
    return "not valid JSON (at byte " + std::to_string(p_ + 1) + ")";
  }
  bool Fail(std::string why) {
    why_ = std::move(why);
    return false;
  }
  void SkipWs() {
    while (p_ < s_.size() && Ws(s_[p_])) ++p_;
  }
  // After the top-level value: white space, then the end of the line (or a
  // NUL byte, which nlohmann's lexer takes for the end of its input).
  bool Rest() {
    SkipWs();
    return p_ == s_.size() || s_[p_] == '\0';
  }

  // A string at s_[p_] (its opening quote); moves past its closing quote.
  bool String() {
    if (p_ >= s_.size() || s_[p_] != '"') return false;
    ++p_;
    bool pending_high = false;  // a \uD800-\uDBFF waiting for its pair
    const size_t n = s_.size();
    while (p_ < n) {
      const auto c = static_cast<unsigned char>(s_[p_]);
      if (c == '"') {
        if (pending_high) return false;
        ++p_;
        return true;
      }
      if (c < 0x20) return false;
      if (c != '\\') {
        if (pending_high) return false;
        ++p_;
        continue;
      }
      if (++p_ >= n) return false;
      const char e = s_[p_++];
      if (e == 'u') {
        if (p_ + 4 > n) return false;
        int v = 0;
        for (int k = 0; k < 4; ++k) {
          const int h = HexValue(s_[p_ + k]);
          if (h < 0) return false;
          v = v * 16 + h;
        }
        p_ += 4;
        const bool high = v >= 0xd800 && v <= 0xdbff;
        const bool low = v >= 0xdc00 && v <= 0xdfff;
        if (low != pending_high) return false;
        pending_high = high;
      } else if (pending_high || std::string_view("\"\\/bfnrt").find(e) ==
                                     std::string_view::npos) {
        return false;
      }
    }
    return false;
  }

  bool Literal() {
    for (std::string_view lit : {"true", "false", "null"}) {
      if (s_.substr(p_, lit.size()) == lit) {
        p_ += lit.size();
        return true;
      }
    }
    return false;
  }

  // A number as nlohmann reads it: an integer that fits 64 bits is one
  // (kUnsigned, or kInteger when negative), anything else a double, which
  // must be finite.
  bool Number(JsonKind* kind, uint64_t* u) {
    const size_t b = p_;
    const size_t n = s_.size();
    auto digits = [&] {
      const size_t start = p_;
      while (p_ < n && IsDigit(s_[p_])) ++p_;
      return p_ > start;
    };
    if (p_ < n && s_[p_] == '-') ++p_;
    if (p_ < n && s_[p_] == '0') {
      ++p_;
    } else if (!digits()) {
      return false;
    }
    bool integer = true;
    if (p_ < n && s_[p_] == '.') {
      ++p_;
      integer = false;
      if (!digits()) return false;
    }
    if (p_ < n && (s_[p_] == 'e' || s_[p_] == 'E')) {
      ++p_;
      integer = false;
      if (p_ < n && (s_[p_] == '+' || s_[p_] == '-')) ++p_;
      if (!digits()) return false;
    }
    const char* first = s_.data() + b;
    const char* last = s_.data() + p_;
    if (integer && *first == '-') {
      int64_t v;
      auto r = std::from_chars(first, last, v);
      if (r.ec == std::errc() && r.ptr == last) {
        *kind = JsonKind::kInteger;
        return true;
      }
    } else if (integer) {
      auto r = std::from_chars(first, last, *u);
      if (r.ec == std::errc() && r.ptr == last) {
        *kind = JsonKind::kUnsigned;
        return true;
      }
    }
    const std::string text(first, last);
    if (!std::isfinite(std::strtod(text.c_str(), nullptr)))
      return Fail("number " + Clip(text) +
                  " is out of range (beyond a double's range)");
    *kind = JsonKind::kFloat;
    return true;
  }

  bool Scalar(JsonKind* kind, uint64_t* u) {
    if (p_ >= s_.size()) return false;
    switch (s_[p_]) {
      case '"':
        *kind = JsonKind::kString;
        return String();
      case 't':
      case 'f':
        *kind = JsonKind::kBool;
        return Literal();
      case 'n':
        *kind = JsonKind::kNull;
        return Literal();
      default:
        return Number(kind, u);
    }
  }

  // A value of a top-level member at s_[p_]; nesting is counted, not
  // recursed, so depth costs one byte a level. why_ says why not.
  bool Value(JsonKind* kind, uint64_t* u) {
    why_.clear();
    auto invalid = [&] { return why_.empty() ? Fail(Invalid()) : false; };
    if (p_ >= s_.size() || (s_[p_] != '{' && s_[p_] != '[')) {
      *u = 0;
      return Scalar(kind, u) || invalid();
    }
    *kind = s_[p_] == '{' ? JsonKind::kObject : JsonKind::kArray;
    open_.clear();
    bool want_key = false;
    for (;;) {
      SkipWs();
      if (want_key) {
        if (!String()) return invalid();
        SkipWs();
        if (p_ >= s_.size() || s_[p_] != ':') return invalid();
        ++p_;
        SkipWs();
        want_key = false;
      }
      if (p_ < s_.size() && (s_[p_] == '{' || s_[p_] == '[')) {
        // The top-level object is one level.
        if (open_.size() + 1 >= static_cast<size_t>(kMaxJsonDepth))
          return Fail("nested deeper than " + std::to_string(kMaxJsonDepth) +
                      " levels");
        const char c = s_[p_++];
        open_.push_back(c == '{' ? '}' : ']');
        SkipWs();
        if (p_ < s_.size() && s_[p_] == open_.back()) {
          ++p_;
          open_.pop_back();
        } else {
          want_key = c == '{';
          continue;
        }
      } else {
        JsonKind k;
        uint64_t ignored;
        if (!Scalar(&k, &ignored)) return invalid();
      }
      // After a value: close what ends here, or go on to the next one.
      for (;;) {
        if (open_.empty()) return true;
        SkipWs();
        if (p_ >= s_.size()) return invalid();
        if (s_[p_] == open_.back()) {
          ++p_;
          open_.pop_back();
          continue;
        }
        if (s_[p_] != ',') return invalid();
        ++p_;
        want_key = open_.back() == '}';
        break;
      }
    }
  }

  std::string_view s_;
  size_t p_ = 0;
  std::vector<char> open_;  // the closing bracket of each open value
  std::string why_;
};

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

}  // namespace

Status ScanJsonObject(std::string_view line, std::vector<JsonMemberView>* out) {
  return Scanner(line).Run(out);
}

void AppendDecodedJsonString(std::string_view token, std::string* out) {
  if (token.size() < 2) return;
  std::string_view s = token.substr(1, token.size() - 2);
  // Decoding only shortens: one allocation, not a doubling series that
  // would hold a long value one and a half times over while it grows.
  out->reserve(out->size() + s.size());
  auto hex4 = [&](size_t i) {
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k)
      v = v * 16 + static_cast<uint32_t>(HexValue(s[i + k]));
    return v;
  };
  size_t plain = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') continue;
    out->append(s.data() + plain, i - plain);
    const char e = s[i + 1];
    i += 1;
    switch (e) {
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'u': {
        uint32_t cp = hex4(i + 1);
        i += 4;
        if (cp >= 0xd800 && cp <= 0xdbff && i + 6 < s.size() &&
            s.substr(i + 1, 2) == "\\u") {
          const uint32_t low = hex4(i + 3);
          cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          i += 6;
        }
        AppendUtf8(cp, out);
        break;
      }
      default:  // " \ /
        out->push_back(e);
        break;
    }
    plain = i + 1;
  }
  out->append(s.data() + plain, s.size() - plain);
}

}  // namespace cdc::event
