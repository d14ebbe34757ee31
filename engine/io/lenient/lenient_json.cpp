// JSON into a protobuf message, read generously (lenient_proto.h): keys by field name or JSON name, maps as objects
// or as GE's lists of {"key", "value"}, numbers as numbers or strings, enums by name or number, null as absent.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <cmath>
#include <cstdio>

#include "io/lenient/lenient_fields.h"
#include "io/lenient/lenient_proto.h"
#include "util/json.h"
#include "util/load_error.h"

namespace kiln::lenient {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

class JsonFiller {
 public:
  JsonFiller(const std::string& file, ParseReport& report) : file_(file), report_(report) {}

  void fill(const Json& obj, Message& msg, int depth, const std::string& where) {
    if (depth > kMaxDepth) throw LoadError(file_, where + ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
    if (!obj.isObject())
      throw LoadError(file_, where + ": expected an object for " + msg.GetDescriptor()->name() + ", got " + obj.typeName());
    const auto* desc = msg.GetDescriptor();
    for (const auto& [key, value] : obj.asObject()) {
      const FieldDescriptor* f = desc->FindFieldByName(key);
      for (int i = 0; !f && i < desc->field_count(); ++i)  // a JSON name (camelCase)
        if (desc->field(i)->json_name() == key) f = desc->field(i);
      if (!f) {
        addExtra(report_, msg, key, value.dump());
        continue;
      }
      if (value.isNull()) continue;
      const std::string at = where + "." + key;
      if (f->is_map()) {
        fillMap(value, msg, *f, depth, at);
      } else if (f->is_repeated()) {
        if (value.isArray())
          for (const Json& item : value.asArray()) one(item, msg, *f, depth, at);
        else
          one(value, msg, *f, depth, at);
      } else {
        one(value, msg, *f, depth, at);
      }
    }
  }

 private:
  void one(const Json& v, Message& msg, const FieldDescriptor& f, int depth, const std::string& at) {
    if (f.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!v.isObject()) {
        addExtra(report_, msg, f.name(), v.dump());
        return;
      }
      Message* child = f.is_repeated() ? msg.GetReflection()->AddMessage(&msg, &f) : msg.GetReflection()->MutableMessage(&msg, &f);
      fill(v, *child, depth + 1, at);
      return;
    }
    Scalar s;
    if (!toScalar(v, s) || !setScalar(msg, f, s, report_)) addExtra(report_, msg, f.name(), v.dump());
  }

  // {"k": v, ...} or [{"key": k, "value": v}, ...]
  void fillMap(const Json& v, Message& msg, const FieldDescriptor& f, int depth, const std::string& at) {
    const FieldDescriptor* keyField = f.message_type()->map_key();
    const FieldDescriptor* valueField = f.message_type()->map_value();
    auto entry = [&](const Json& key, const Json* value) {
      Message* e = msg.GetReflection()->AddMessage(&msg, &f);
      Scalar k;
      if (!toScalar(key, k) || !setScalar(*e, *keyField, k, report_)) {
        msg.GetReflection()->RemoveLast(&msg, &f);
        addExtra(report_, msg, f.name(), key.dump());
        return;
      }
      if (value && !value->isNull()) one(*value, *e, *valueField, depth + 1, at);
    };
    if (v.isObject()) {
      for (const auto& [k, val] : v.asObject()) entry(Json(k), &val);
    } else if (v.isArray()) {
      for (const Json& item : v.asArray()) {
        const Json* k = item.isObject() ? item.find("key") : nullptr;
        if (!k) {
          addExtra(report_, msg, f.name(), item.dump());
          continue;
        }
        entry(*k, item.find("value"));
        for (const auto& [name, extra] : item.asObject())
          if (name != "key" && name != "value") addExtra(report_, msg, f.name() + "." + name, extra.dump());
      }
    } else {
      addExtra(report_, msg, f.name(), v.dump());
    }
  }

  static bool toScalar(const Json& v, Scalar& s) {
    if (v.isString()) {
      s.kind = Scalar::Kind::String;
      s.text = v.asString();
    } else if (v.isBool()) {
      s.kind = Scalar::Kind::Identifier;
      s.text = v.asBool() ? "true" : "false";
    } else if (v.isInt()) {
      s.kind = Scalar::Kind::Number;
      s.text = std::to_string(v.asInt());
    } else if (v.isNumber()) {
      const double d = v.asDouble();
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", d);
      s.kind = Scalar::Kind::Number;
      s.text = std::isfinite(d) ? buf : d != d ? "nan" : d < 0 ? "-inf" : "inf";
    } else {
      return false;
    }
    return true;
  }

  const std::string& file_;
  ParseReport& report_;
};

}  // namespace

void parseJson(const Json& json, Message& msg, const std::string& displayName, ParseReport& report) {
  JsonFiller(displayName, report).fill(json, msg, 0, "the document");
}

}  // namespace kiln::lenient
