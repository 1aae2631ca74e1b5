#include "cdc/event/json_object.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "cdc/event/json_text.h"

namespace cdc::event {

namespace {

using Json = nlohmann::json;

// Text quoted from the input in a message: short, so one bad line never
// makes a long one.
std::string Clip(std::string_view s) {
  constexpr size_t kMax = 40;
  return s.size() <= kMax ? std::string(s)
                          : std::string(s.substr(0, kMax)) + "...";
}

class Renderer {
 public:
  explicit Renderer(JsonObject* out) : out_(out) {}

  bool null() { return Scalar(JsonKind::kNull, "null"); }
  bool boolean(bool v) { return Scalar(JsonKind::kBool, v ? "true" : "false"); }
  bool number_integer(Json::number_integer_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return Scalar(JsonKind::kInteger,
                  std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    if (!Scalar(JsonKind::kUnsigned,
                std::string_view(buf, static_cast<size_t>(r.ptr - buf))))
      return false;
    if (depth_ == 1) out_->members.back().unsigned_value = v;
    return true;
  }
  // The lexer's text of the number, not the double: exact.
  bool number_float(Json::number_float_t, const Json::string_t& text) {
    return Scalar(JsonKind::kFloat, text);
  }
  bool string(Json::string_t& v) {
    if (!Value(JsonKind::kString)) return false;
    AppendJsonStringUnchecked(v, &out_->text);
    if (depth_ == 1) {
      out_->members.back().string_value = v;
      out_->members.back().end = out_->text.size();
    }
    return true;
  }
  bool binary(Json::binary_t&) { return Fail("binary values are not JSON"); }
  bool start_object(std::size_t) { return Open(JsonKind::kObject, '{'); }
  bool key(Json::string_t& k) {
    if (depth_ == 1) {
      out_->members.push_back(JsonMember{});
      out_->members.back().key = k;
      return true;
    }
    Comma();
    AppendJsonStringUnchecked(k, &out_->text);
    out_->text.push_back(':');
    first_.back() = true;  // the value follows the colon, no comma
    return true;
  }
  bool end_object() { return Close('}'); }
  bool start_array(std::size_t) { return Open(JsonKind::kArray, '['); }
  bool end_array() { return Close(']'); }
  bool parse_error(std::size_t, const std::string& token,
                   const nlohmann::detail::exception& e) {
    if (!error_.empty()) return false;  // we stopped the parse ourselves
    if (e.id == 406)
      return Fail("number " + Clip(token) +
                  " is out of range (beyond a double's range)");
    std::string what = e.what();
    size_t p = what.find("parse error");
    what = p == std::string::npos ? what : what.substr(p);
    constexpr size_t kMax = 200;
    if (what.size() > kMax) what = what.substr(0, kMax) + "...";
    return Fail("not valid JSON (" + what + ")");
  }

  const std::string& error() const { return error_; }
  bool done() const { return done_; }

 private:
  bool Fail(std::string msg) {
    if (error_.empty()) error_ = std::move(msg);
    return false;
  }
  void Comma() {
    if (!first_.back()) out_->text.push_back(',');
    first_.back() = false;
  }
  // Starts a value at the current depth.
  bool Value(JsonKind kind) {
    if (depth_ == 0) {
      if (kind != JsonKind::kObject) return Fail("not a JSON object");
      return true;
    }
    if (depth_ == 1) {
      out_->members.back().kind = kind;
      out_->members.back().begin = out_->text.size();
    } else {
      Comma();
    }
    return true;
  }
  bool Scalar(JsonKind kind, std::string_view text) {
    if (!Value(kind)) return false;
    out_->text.append(text);
    if (depth_ == 1) out_->members.back().end = out_->text.size();
    return true;
  }
  bool Open(JsonKind kind, char c) {
    if (!Value(kind)) return false;
    if (depth_ >= kMaxJsonDepth)
      return Fail("nested deeper than " + std::to_string(kMaxJsonDepth) +
                  " levels");
    ++depth_;
    if (depth_ > 1) {
      out_->text.push_back(c);
      first_.push_back(true);
    }
    return true;
  }
  bool Close(char c) {
    --depth_;
    if (depth_ == 0) {
      done_ = true;
      return true;
    }
    out_->text.push_back(c);
    first_.pop_back();
    if (depth_ == 1) out_->members.back().end = out_->text.size();
    return true;
  }

  JsonObject* out_;
  int depth_ = 0;            // 1 inside the top-level object
  std::vector<bool> first_;  // per open value below the top: no comma yet
  std::string error_;
  bool done_ = false;
};

}  // namespace

const JsonMember* JsonObject::find(std::string_view key) const {
  for (const auto& m : members)
    if (m.key == key) return &m;
  return nullptr;
}

Status ParseJsonObject(std::string_view line, JsonObject* out) {
  out->text.clear();
  out->members.clear();
  Renderer r(out);
  bool ok = Json::sax_parse(line, &r, Json::input_format_t::json,
                            /*strict=*/true, /*ignore_comments=*/false);
  if (!ok || !r.done())
    return Status::BadInput(r.error().empty() ? "not valid JSON" : r.error());
  std::unordered_map<std::string_view, size_t> seen;
  seen.reserve(out->members.size());
  for (size_t i = 0; i < out->members.size(); ++i)
    if (!seen.emplace(out->members[i].key, i).second)
      return Status::BadInput("key \"" + Clip(out->members[i].key) +
                              "\" appears twice");
  return Status::OK();
}

}  // namespace cdc::event
