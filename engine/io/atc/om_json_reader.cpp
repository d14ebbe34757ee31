#include "io/atc/om_json_reader.h"

#include <google/protobuf/arena.h>

#include "io/lenient/lenient_proto.h"
#include "io/om/ge_ir.pb.h"
#include "io/om/ge_model_builder.h"
#include "ir/model_metadata.h"
#include "util/json.h"
#include "util/load_error.h"
#include "util/text_encoding.h"

namespace kiln::atc {

std::unique_ptr<Model> readOmJson(std::string_view text, const std::string& displayName,
                                  std::vector<std::string>& warnings) {
  Json doc;
  try {
    doc = JsonReader(text, 512).readDocument();
  } catch (const JsonError& e) {
    throw LoadError(displayName, std::string("not valid JSON: ") + e.what());
  }
  const Json* graphs = doc.isObject() ? doc.find("graph") : nullptr;
  if (!graphs || !graphs->isArray())
    throw LoadError(displayName, "a JSON file, but not an `atc --mode=1` model: it has no \"graph\" list");
  google::protobuf::Arena arena;
  auto& md = *google::protobuf::Arena::CreateMessage<ge::proto::ModelDef>(&arena);
  lenient::ParseReport report;
  lenient::parseJson(doc, md, displayName, report);
  if (md.graph_size() == 0) throw LoadError(displayName, "its \"graph\" list is empty: there is no graph to show");
  if (md.graph(0).op_size() == 0)
    throw LoadError(displayName, "its graph '" + displayableUtf8(md.graph(0).name()) + "' holds no op (\"op\" is missing or holds no "
                                 "objects)");
  auto m = om::buildGeTextModel(md, displayName, &report, warnings);
  const std::string atcVersion = metadataValue(*m, "om.atc_version");
  m->producerName = "ATC";
  m->producerVersion = atcVersion.empty() ? "om -> JSON" : atcVersion + " (om -> JSON)";
  return m;
}

}  // namespace kiln::atc
