#include "util/json_fields.h"

#include <cmath>
#include <stdexcept>

namespace kiln {

const Json::Object& jsonObject(const Json& j, const std::string& what) {
  if (!j.isObject()) throw std::invalid_argument(what + ": expected an object, got " + j.typeName());
  return j.asObject();
}

std::string jsonString(const Json& obj, const std::string& key, const std::string& fallback) {
  const Json* v = obj.find(key);
  if (!v) return fallback;
  if (!v->isString()) throw std::invalid_argument("'" + key + "': expected a string, got " + v->typeName());
  if (v->asString().size() > 65536) throw std::invalid_argument("'" + key + "': string longer than 64 KiB");
  return v->asString();
}

bool jsonBool(const Json& obj, const std::string& key, bool fallback) {
  const Json* v = obj.find(key);
  if (!v) return fallback;
  if (!v->isBool()) throw std::invalid_argument("'" + key + "': expected true or false, got " + v->typeName());
  return v->asBool();
}

double jsonNumber(const Json& obj, const std::string& key, double fallback, double lo, double hi) {
  const Json* v = obj.find(key);
  if (!v || v->isNull()) return fallback;
  if (!v->isNumber()) throw std::invalid_argument("'" + key + "': expected a number, got " + v->typeName());
  const double d = v->asDouble();
  if (!std::isfinite(d) || d < lo || d > hi)
    throw std::invalid_argument("'" + key + "': " + v->dump() + " is out of range");
  return d;
}

int64_t jsonCount(const Json& obj, const std::string& key, int64_t fallback) {
  const Json* v = obj.find(key);
  if (!v || v->isNull()) return fallback;
  if (!v->isInt() || v->asInt() < 0 || v->asInt() > (int64_t{1} << 62))
    throw std::invalid_argument("'" + key + "': expected a count (a non-negative integer), got " + v->dump());
  return v->asInt();
}

}  // namespace kiln
