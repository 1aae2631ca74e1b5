// --format cloudevents: one CloudEvents 1.0 event per log event, in the
// structured content mode of the JSON event format, "data" being the
// native event. The id is the log id and the seq, so a replay of the same
// events yields the same ids (a consumer can drop duplicates by id).
#include <charconv>
#include <string>

#include "cdc/event/event.h"
#include "cdc/event/formats.h"
#include "cdc/event/json_text.h"
#include "cdc/event/stored.h"

namespace cdc::event {

namespace {

// RFC 3986 unreserved characters stay, everything else is %XX, so that a
// database name becomes one path segment of the source URI.
void AppendSegment(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
        c == '~') {
      out->push_back(ch);
    } else {
      out->push_back('%');
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    }
  }
}

const char* TypeWord(char op) {
  switch (op) {
    case 'c':
      return "insert";
    case 'u':
      return "update";
    case 'd':
      return "delete";
    case 't':
      return "truncate";
    case 'r':
      return "read";
    case 'm':
      return "message";
    case 's':
      return "schema";
  }
  return "unknown";
}

class CloudEventsRenderer : public Renderer {
 public:
  explicit CloudEventsRenderer(const SourceInfo& source) {
    const std::string uri = CloudEventsSource(source);
    head_ = "{\"specversion\":\"1.0\",\"id\":\"";
    AppendSegment(source.log_id, &head_);
    head_.push_back('-');
    source_ = ",\"source\":";
    AppendJsonStringUnchecked(uri, &source_);
    source_.append(",\"type\":\"io.cdc.postgresql.");
  }

  void Restart(bool) override {}
  Status Skip(uint64_t, std::string_view, bool) override {
    return Status::OK();
  }

  Status Append(uint64_t seq, std::string_view stored, bool last,
                std::string* out) override {
    CDC_RETURN_IF_ERROR(ScanStored(stored, &f_));
    const size_t mark = out->size();
    out->append(head_);
    char digits[32];
    auto [end, ec] = std::to_chars(digits, digits + sizeof digits, seq);
    (void)ec;
    out->append(digits, static_cast<size_t>(end - digits));
    out->push_back('"');
    out->append(source_);
    out->append(TypeWord(f_.op_code));
    out->push_back('"');
    if (!f_.schema.empty() && !f_.table.empty()) {
      out->append(",\"subject\":");
      if (!AppendQualifiedName(f_.schema, f_.table, out)) {
        out->resize(mark);
        return Status::Corruption("stored event has a bad schema or table");
      }
    }
    out->append(",\"time\":");
    out->append(f_.ts);
    out->append(",\"datacontenttype\":\"application/json\",\"data\":");
    char scratch[32];
    NativePieces p = SplitNative(seq, stored, last, scratch);
    out->append(p.head);
    out->append(p.body);
    out->append(p.tail.substr(0, p.tail.size() - 1));  // without its '\n'
    out->append("}\n");
    return Status::OK();
  }

 private:
  std::string head_;    // {"specversion":"1.0","id":"LOGID-
  std::string source_;  // ,"source":"..","type":"io.cdc.postgresql.
  StoredFields f_;
};

}  // namespace

std::string CloudEventsSource(const SourceInfo& source) {
  std::string uri = "cdc://";
  if (source.kind == "mariadb") {
    uri.append("mariadb/");
    AppendSegment(source.database, &uri);
    uri.push_back('/');
  } else if (source.system_id.empty() && source.database.empty()) {
    uri.append("import/");
  } else {
    uri.append("postgresql/");
    AppendSegment(source.system_id, &uri);
    uri.push_back('/');
    AppendSegment(source.database, &uri);
    uri.push_back('/');
  }
  AppendSegment(source.log_id, &uri);
  return uri;
}

std::unique_ptr<Renderer> MakeCloudEventsRenderer(const SourceInfo& source) {
  return std::make_unique<CloudEventsRenderer>(source);
}

}  // namespace cdc::event
