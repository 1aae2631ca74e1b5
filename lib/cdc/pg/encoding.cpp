#include "cdc/pg/encoding.h"

#include <algorithm>
#include <cerrno>
#include <utility>

namespace cdc::pg {

namespace {

// PostgreSQL's server encodings (those a database can have) and iconv's
// names for them.
constexpr std::pair<std::string_view, const char*> kEncodings[] = {
    {"EUC_JP", "EUC-JP"},
    {"EUC_CN", "EUC-CN"},
    {"EUC_KR", "EUC-KR"},
    {"EUC_TW", "EUC-TW"},
    {"EUC_JIS_2004", "EUC-JISX0213"},
    {"LATIN1", "ISO-8859-1"},
    {"LATIN2", "ISO-8859-2"},
    {"LATIN3", "ISO-8859-3"},
    {"LATIN4", "ISO-8859-4"},
    {"LATIN5", "ISO-8859-9"},
    {"LATIN6", "ISO-8859-10"},
    {"LATIN7", "ISO-8859-13"},
    {"LATIN8", "ISO-8859-14"},
    {"LATIN9", "ISO-8859-15"},
    {"LATIN10", "ISO-8859-16"},
    {"ISO_8859_5", "ISO-8859-5"},
    {"ISO_8859_6", "ISO-8859-6"},
    {"ISO_8859_7", "ISO-8859-7"},
    {"ISO_8859_8", "ISO-8859-8"},
    {"WIN866", "CP866"},
    {"WIN874", "CP874"},
    {"WIN1250", "CP1250"},
    {"WIN1251", "CP1251"},
    {"WIN1252", "CP1252"},
    {"WIN1253", "CP1253"},
    {"WIN1254", "CP1254"},
    {"WIN1255", "CP1255"},
    {"WIN1256", "CP1256"},
    {"WIN1257", "CP1257"},
    {"WIN1258", "CP1258"},
    {"KOI8R", "KOI8-R"},
    {"KOI8U", "KOI8-U"},
};

}  // namespace

ServerText::~ServerText() {
  if (cd_ != kNone) iconv_close(cd_);
}

Status ServerText::SetEncoding(std::string_view encoding) {
  if (cd_ != kNone) iconv_close(cd_);
  cd_ = kNone;
  encoding_ = std::string(encoding);
  if (encoding == "UTF8" || encoding == "SQL_ASCII") return Status::OK();
  for (const auto& [pg, name] : kEncodings) {
    if (pg != encoding) continue;
    cd_ = iconv_open("UTF-8", name);
    if (cd_ != kNone) return Status::OK();
    break;
  }
  return Status::Config("cannot convert text from server encoding " +
                        encoding_ + " to UTF-8");
}

bool ServerText::ToUtf8(std::string_view text, std::string* out) {
  if (cd_ == kNone) {
    out->append(text);
    return true;
  }
  iconv(cd_, nullptr, nullptr, nullptr, nullptr);  // initial state
  const size_t mark = out->size();
  char* in = const_cast<char*>(text.data());  // iconv's API is not const
  size_t in_left = text.size();
  while (in_left > 0) {
    // In pieces: a large message is not given four times its size at once.
    const size_t at = out->size();
    const size_t room = std::min<size_t>(in_left * 2 + 16, 1 << 20);
    out->resize(at + room);
    char* dst = out->data() + at;
    size_t dst_left = room;
    const size_t r = iconv(cd_, &in, &in_left, &dst, &dst_left);
    out->resize(at + (room - dst_left));
    if (r == static_cast<size_t>(-1) && errno != E2BIG) {
      out->resize(mark);  // EILSEQ, EINVAL: not text in this encoding
      return false;
    }
  }
  return true;
}

}  // namespace cdc::pg
