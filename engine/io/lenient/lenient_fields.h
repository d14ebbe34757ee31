#pragma once
// Shared by the text and JSON readers (lenient_proto.h): one scalar, as either form spells it, stored into a field
// through protobuf's reflection, or refused (the caller keeps it as an extra field).
#include <google/protobuf/message.h>

#include <string>
#include <string_view>

#include "io/lenient/lenient_proto.h"

namespace kiln::lenient {

struct Scalar {
  enum class Kind { String, Number, Identifier } kind = Kind::String;
  std::string text;  // strings unescaped; numbers and identifiers as written (a leading '-' included)
};

// Stores `v` into `field` of `msg` (added when the field is repeated). False when it does not fit the field's type
// (the message is then unchanged).
bool setScalar(google::protobuf::Message& msg, const google::protobuf::FieldDescriptor& field, const Scalar& v,
               ParseReport& report);

// Records an extra field of `owner`.
void addExtra(ParseReport& report, const google::protobuf::Message& owner, std::string name, std::string_view text);

// `text` with runs of whitespace made single spaces, cut at kMaxExtraText.
std::string compactText(std::string_view text);

}  // namespace kiln::lenient
