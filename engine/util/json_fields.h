#pragma once
// Typed reads of fields from untrusted JSON objects (a baseline summary.json, a shard's report): a missing optional
// field keeps the caller's default, a present field of the wrong type or out of range throws std::invalid_argument
// naming it, so a bad file gives one clear line instead of a crash or a silently wrong number.
#include <cstdint>
#include <string>

#include "util/json.h"

namespace kiln {

// The object itself, or throws ("<what>: expected an object, got array").
const Json::Object& jsonObject(const Json& j, const std::string& what);
// Each returns `fallback` when the key is absent (or null for numbers); throws when present with another type.
std::string jsonString(const Json& obj, const std::string& key, const std::string& fallback = {});
bool jsonBool(const Json& obj, const std::string& key, bool fallback = false);
// Finite numbers in [lo, hi].
double jsonNumber(const Json& obj, const std::string& key, double fallback = 0, double lo = -1e300, double hi = 1e300);
int64_t jsonCount(const Json& obj, const std::string& key, int64_t fallback = 0);  // integers in [0, 2^62]

}  // namespace kiln
