#include "cdc/capture/mariadb_table.h"

#include "cdc/event/json_text.h"

namespace cdc::capture::maria {

Status Describe(Table* t, bool labels_utf8) {
  t->has_key = false;
  for (size_t i = 0; i < t->columns.size(); ++i) {
    mariadb::Column& c = t->columns[i];
    c.json_name.clear();
    if (!event::AppendJsonString(c.name, &c.json_name))
      return Status::BadInput("the name of column " + std::to_string(i + 1) +
                              " of " + t->db + "." + t->name +
                              " is not valid UTF-8");
    c.json_name.push_back(':');
    t->has_key = t->has_key || c.key;
  }
  t->names_json = ",\"schema\":";
  (void)event::AppendJsonString(t->db, &t->names_json);
  t->names_json += ",\"table\":";
  (void)event::AppendJsonString(t->name, &t->names_json);
  std::string& s = t->shape;
  s = ",\"key\":null,\"before\":null,\"after\":null,\"columns\":[";
  for (size_t i = 0; i < t->columns.size(); ++i) {
    const mariadb::Column& c = t->columns[i];
    if (i > 0) s.push_back(',');
    s += "{\"name\":";
    s += c.json_name;
    s.back() = ',';
    s += "\"type\":";
    (void)event::AppendJsonString(mariadb::TypeName(c), &s);
    if (c.labels != nullptr) {
      s += ",\"labels\":[";
      for (size_t k = 0; k < c.labels->size(); ++k) {
        if (k > 0) s.push_back(',');
        std::string utf8;
        if (c.charset != nullptr && !labels_utf8)
          CDC_RETURN_IF_ERROR(c.charset->ToUtf8((*c.labels)[k], &utf8));
        else
          utf8 = (*c.labels)[k];
        if (!event::AppendJsonString(utf8, &s))
          return Status::BadInput("a label of " + t->db + "." + t->name + "." +
                                  c.name + " is not valid text");
      }
      s.push_back(']');
    } else if (c.charset != nullptr) {
      s += ",\"charset\":";
      (void)event::AppendJsonString(c.charset->name(), &s);
    }
    s += c.key ? ",\"key\":true}" : ",\"key\":false}";
  }
  s += "]}";
  return Status::OK();
}

void AppendObject(const std::vector<mariadb::Column>& cols,
                  const std::vector<std::string>& values, bool keys_only,
                  std::string* out) {
  out->push_back('{');
  bool first = true;
  for (size_t i = 0; i < cols.size(); ++i) {
    if (keys_only && !cols[i].key) continue;
    if (values[i].empty()) continue;  // not in the image
    if (!first) out->push_back(',');
    first = false;
    out->append(cols[i].json_name);
    out->append(values[i]);
  }
  out->push_back('}');
}

}  // namespace cdc::capture::maria
