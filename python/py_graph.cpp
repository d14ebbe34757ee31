// kiln.Model (a loaded file), kiln.Graph and its rows (Node, Value, Edge), kiln.Diff. A graph is read as the rows
// the history records for it (history/history_rows.h), whether it comes from a file, a compile or a history: one
// shape for every graph a script meets. Attributes and annotations are parsed into Python values on access.
#include <memory>

#include <pybind11/stl.h>

#include "history/history_reader.h"
#include "io/model_loader.h"
#include "py_support.h"
#include "py_types.h"

namespace kiln::py {
namespace {

// "1×3×224×224" / "batch×128" / "scalar" / "?" as a list of ints and symbol names (None: unknown rank).
pb::object dimsOf(const std::optional<std::string>& shape) {
  if (!shape) return pb::none();
  pb::list out;
  if (*shape == "scalar") return out;
  const std::string sep = "×";
  size_t start = 0;
  while (start <= shape->size()) {
    const size_t end = shape->find(sep, start);
    const std::string d = shape->substr(start, end == std::string::npos ? std::string::npos : end - start);
    bool digits = !d.empty();
    for (char c : d) digits = digits && c >= '0' && c <= '9';
    if (digits) out.append(pb::int_(std::stoll(d)));
    else out.append(pb::str(d));
    if (end == std::string::npos) break;
    start = end + sep.size();
  }
  return out;
}

std::string nodeRepr(const NodeRow& n) {
  return "<kiln.Node " + std::to_string(n.id) + " " + (n.domain.empty() ? "" : n.domain + ":") + n.opType + " '" +
         n.name + "'>";
}

}  // namespace

void bindGraph(pb::module_& m) {
  pb::class_<NodeRow>(m, "Node", "A node as recorded: its op, names, attributes and the annotations passes left.")
      .def_readonly("id", &NodeRow::id)
      .def_readonly("op_type", &NodeRow::opType)
      .def_readonly("domain", &NodeRow::domain)
      .def_readonly("name", &NodeRow::name)
      .def_readonly("graph_owner", &NodeRow::graphOwner, "0 in the main graph, else the node whose body holds it")
      .def_readonly("graph_attr", &NodeRow::graphAttr)
      .def_property_readonly("attrs", [](const NodeRow& n) { return parsedJson(n.attrsJson, pb::dict()); },
                             "attribute name -> value (tensors summarised as dtype, dims and a hash)")
      .def_property_readonly("annotations",
                             [](const NodeRow& n) { return parsedJson(n.annotationsJson, pb::dict()); },
                             "what passes recorded on the node: engine, stream, memory offsets, fusion, ...")
      .def("__repr__", &nodeRepr);

  pb::class_<ValueRow>(m, "Value", "A tensor of the graph: type, shape, layout format and who produces it.")
      .def_readonly("id", &ValueRow::id)
      .def_readonly("name", &ValueRow::name)
      .def_readonly("dtype", &ValueRow::dtype)
      .def_readonly("shape", &ValueRow::shape, "as printed: '1×3×224×224', 'batch×128', None when unknown")
      .def_property_readonly("dims", [](const ValueRow& v) { return dimsOf(v.shape); },
                             "the shape as a list of ints and symbol names (None when the rank is unknown)")
      .def_readonly("format", &ValueRow::format)
      .def_readonly("bytes", &ValueRow::bytes)
      .def_readonly("producer", &ValueRow::producerNode)
      .def_readonly("producer_output", &ValueRow::producerIndex)
      .def_readonly("is_input", &ValueRow::isInput)
      .def_readonly("is_output", &ValueRow::isOutput)
      .def_readonly("is_constant", &ValueRow::isConstant)
      .def_readonly("graph_owner", &ValueRow::graphOwner)
      .def("__repr__", [](const ValueRow& v) {
        return "<kiln.Value " + std::to_string(v.id) + " '" + v.name + "' " + v.dtype + " " + v.shape.value_or("?") +
               " " + v.format + ">";
      });

  pb::class_<EdgeRow>(m, "Edge", "Value `value` feeds input `index` of node `node`.")
      .def_readonly("value", &EdgeRow::valueId)
      .def_readonly("node", &EdgeRow::consumerNode)
      .def_readonly("index", &EdgeRow::consumerIndex);

  pb::class_<GraphSnapshot>(m, "Graph", "A graph as rows: nodes and values sorted by id, edges by consumer.")
      .def_readonly("nodes", &GraphSnapshot::nodes)
      .def_readonly("values", &GraphSnapshot::values)
      .def_readonly("edges", &GraphSnapshot::edges)
      .def_readonly("pass_seq", &GraphSnapshot::pass, "the pass it is the graph after (history graphs)")
      .def("node", [](const GraphSnapshot& g, int64_t id) { return g.node(id) ? pb::cast(*g.node(id)) : pb::none(); })
      .def("value",
           [](const GraphSnapshot& g, int64_t id) { return g.value(id) ? pb::cast(*g.value(id)) : pb::none(); })
      .def("node_named",
           [](const GraphSnapshot& g, const std::string& name) -> pb::object {
             for (const NodeRow& n : g.nodes)
               if (n.name == name) return pb::cast(n);
             return pb::none();
           })
      .def("value_named",
           [](const GraphSnapshot& g, const std::string& name) -> pb::object {
             for (const ValueRow& v : g.values)
               if (v.name == name) return pb::cast(v);
             return pb::none();
           })
      .def("inputs_of",
           [](const GraphSnapshot& g, int64_t node) {
             std::vector<ValueRow> out;
             for (const EdgeRow& e : g.edges)
               if (e.consumerNode == node)
                 if (const ValueRow* v = g.value(e.valueId)) out.push_back(*v);
             return out;
           })
      .def("outputs_of",
           [](const GraphSnapshot& g, int64_t node) {
             std::vector<ValueRow> out;
             for (const ValueRow& v : g.values)
               if (v.producerNode == node) out.push_back(v);
             return out;
           })
      .def("op_counts",
           [](const GraphSnapshot& g) {
             std::map<std::string, int64_t> out;
             for (const NodeRow& n : g.nodes) ++out[(n.domain.empty() ? "" : n.domain + ":") + n.opType];
             return out;
           })
      .def("__len__", [](const GraphSnapshot& g) { return g.nodes.size(); })
      .def("__repr__", [](const GraphSnapshot& g) {
        return "<kiln.Graph " + std::to_string(g.nodes.size()) + " nodes, " + std::to_string(g.values.size()) +
               " values>";
      });

  pb::class_<NodeChange>(m, "NodeChange", "A node present on both sides whose row or wiring differs.")
      .def_readonly("before", &NodeChange::before)
      .def_readonly("after", &NodeChange::after)
      .def_property_readonly("fields", &NodeChange::fields, "what differs: op_type, name, attr:KEY, inputs, ...");
  pb::class_<ValueChange>(m, "ValueChange")
      .def_readonly("before", &ValueChange::before)
      .def_readonly("after", &ValueChange::after)
      .def_property_readonly("fields", &ValueChange::fields);
  pb::class_<GraphDiff>(m, "Diff", "What changed between two passes of a run (from_pass -> to_pass).")
      .def_readonly("from_pass", &GraphDiff::fromPass)
      .def_readonly("to_pass", &GraphDiff::toPass)
      .def_readonly("added_nodes", &GraphDiff::addedNodes)
      .def_readonly("removed_nodes", &GraphDiff::removedNodes)
      .def_readonly("changed_nodes", &GraphDiff::changedNodes)
      .def_readonly("added_values", &GraphDiff::addedValues)
      .def_readonly("removed_values", &GraphDiff::removedValues)
      .def_readonly("changed_values", &GraphDiff::changedValues)
      .def_readonly("added_edges", &GraphDiff::addedEdges)
      .def_readonly("removed_edges", &GraphDiff::removedEdges)
      .def("empty", &GraphDiff::empty)
      .def("__repr__", [](const GraphDiff& d) {
        return "<kiln.Diff " + std::to_string(d.fromPass) + " -> " + std::to_string(d.toPass) + ": +" +
               std::to_string(d.addedNodes.size()) + " -" + std::to_string(d.removedNodes.size()) + " ~" +
               std::to_string(d.changedNodes.size()) + " nodes>";
      });

  pb::class_<PyModel, std::shared_ptr<PyModel>>(m, "Model", "A model file as loaded (ONNX, .om, a GE graph dump, an om JSON).")
      .def_readonly("path", &PyModel::path)
      .def_readonly("warnings", &PyModel::warnings, "import, checker and verifier findings")
      .def_property_readonly("graph", [](const PyModel& pm) { return snapshotOf(*pm.model->graph); })
      .def_property_readonly("inputs",
                             [](const PyModel& pm) {
                               std::vector<std::string> out;
                               for (const Value* v : pm.model->graph->inputs()) out.push_back(v->name());
                               return out;
                             })
      .def_property_readonly("outputs",
                             [](const PyModel& pm) {
                               std::vector<std::string> out;
                               for (const Value* v : pm.model->graph->outputs()) out.push_back(v->name());
                               return out;
                             })
      .def("__repr__", [](const PyModel& pm) {
        return "<kiln.Model '" + pm.path + "' " + std::to_string(pm.model->graph->numNodesRecursive()) + " nodes>";
      });

  m.def(
      "load",
      [](const pb::object& file, int64_t maxModelBytes) {
        auto out = std::make_shared<PyModel>();
        const std::string path = pathOf(file);
        out->path = path;
        {
          pb::gil_scoped_release unlocked;
          LoadLimits limits;
          if (maxModelBytes > 0) limits.maxModelBytes = static_cast<uint64_t>(maxModelBytes);
          LoadedModel loaded = loadModel(path, limits);
          out->model = std::shared_ptr<Model>(std::move(loaded.model));
          out->warnings = std::move(loaded.warnings);
        }
        return out;
      },
      pb::arg("path"), pb::arg("max_model_bytes") = 0,
      "Loads a model file, found by content: ONNX (binary or text), an Ascend .om (FILE.om or FILE.om#N for its N-th "
      "model), one GE graph dump (ge_proto_*.txt, ge_onnx_*.pbtxt) or an `atc --mode=1` JSON. A folder of GE dumps is "
      "a recorded compile: kiln.import_ge_dump puts it in a history. Raises kiln.Error naming the file and the "
      "problem for a file it cannot read.");
}

}  // namespace kiln::py
