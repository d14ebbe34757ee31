// The malformed-input corpus: hand-made bad files for every format Kiln reads — ONNX models, Ascend .om, GE dump
// folders, option sets, memory traces, ONNX test tensors, .npz inputs and history databases — each generated here
// (with the generators test_onnx_io, test_om_reader and test_npz_reader use), then handed to the real `kiln` binary
// under a 2 GiB address-space limit and a 60 s timeout. Every case must end with exit code 2 and ONE line on stderr
// naming the file and the problem (the fragment listed with the case). One data row per case: format / defect.
#include <sqlite3.h>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <sys/stat.h>

#include <fstream>

#include "support/kiln_process.h"
#include "support/npz_files.h"
#include "support/om_sample.h"
#include "support/onnx_proto_sample.h"

using namespace kiln;

namespace {

struct Case {
  QString format, defect;
  QStringList args;   // the kiln command line
  QString named;      // what the message must name (the bad file or folder)
  QString fragment;   // the problem, as the message words it
};

// Protobuf wire helpers for bytes the generated classes cannot produce (wrong wire types, lying lengths).
std::string varint(uint64_t v) {
  std::string s;
  do {
    s += static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return s;
}
std::string key(int field, int wireType) { return varint(static_cast<uint64_t>(field) << 3 | unsigned(wireType)); }

onnx::TensorProto* addInitializer(onnx::ModelProto& m, const char* name, std::initializer_list<int64_t> dims) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(1);
  for (int64_t d : dims) t->add_dims(d);
  return t;
}

// An If whose then/else branch is `body` (else: an empty copy), the output of the model.
onnx::GraphProto* nestIf(onnx::GraphProto* outer, const std::string& out) {
  auto* n = outer->add_node();
  n->set_op_type("If");
  n->add_input("x");
  n->add_output(out);
  auto* a = n->add_attribute();
  a->set_name("then_branch");
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* b = n->add_attribute();
  b->set_name("else_branch");
  b->set_type(onnx::AttributeProto::GRAPH);
  b->mutable_g()->set_name("else");
  b->mutable_g()->add_output()->set_name("x");
  a->mutable_g()->set_name("then");
  return a->mutable_g();
}

onnx::TensorProto tensorProto(std::initializer_list<int64_t> dims, std::string raw) {
  onnx::TensorProto t;
  t.set_data_type(1);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::move(raw));
  return t;
}

void sqliteExec(const QString& path, const char* sql) {
  sqlite3* h = nullptr;
  sqlite3_open(path.toUtf8().constData(), &h);
  sqlite3_exec(h, sql, nullptr, nullptr, nullptr);
  sqlite3_close(h);
}

}  // namespace

class MalformedInputsTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::vector<Case> cases_;
  QString good_;  // a valid model for the commands that read a second file

  QString write(const QString& name, const std::string& bytes) {
    const QString path = tmp_.filePath(name);
    QDir().mkpath(QFileInfo(path).absolutePath());
    std::ofstream f(path.toStdString(), std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
  }
  void add(const char* format, const char* defect, const QStringList& args, const QString& named,
           const char* fragment) {
    cases_.push_back({format, defect, args, named, fragment});
  }
  // `kiln inspect FILE` on a model.
  void model(const char* format, const char* defect, const QString& name, const std::string& bytes,
             const char* fragment) {
    const QString path = write(name, bytes);
    add(format, defect, {"inspect", path}, path, fragment);
  }

  void onnxCases() {
    using kiln::test::baseProto;
    const std::string good = baseProto().SerializeAsString();
    good_ = write("good.onnx", good);
    model("onnx", "empty file", "empty.onnx", "", "file is empty");
    // A named pipe no one writes to: opening it would block for ever.
    const QString fifo = tmp_.filePath("pipe.onnx");
    QCOMPARE(::mkfifo(fifo.toUtf8().constData(), 0600), 0);
    add("onnx", "a named pipe", {"inspect", fifo}, fifo, "not a regular file");
    // Truncations at structure boundaries: inside the graph's length-delimited field, right after its key, and
    // inside the node list.
    const std::string graphBytes = baseProto().graph().SerializeAsString();
    const size_t graphAt = good.size() - graphBytes.size();
    model("onnx", "truncated inside the graph", "trunc_graph.onnx", good.substr(0, graphAt + graphBytes.size() / 2),
          "not a valid ONNX model");
    model("onnx", "truncated after a field key", "trunc_key.onnx", good.substr(0, graphAt - 1),
          "not a valid ONNX model");
    // Lying length: the graph field claims a gigabyte.
    model("onnx", "graph length past the end", "lying_length.onnx",
          key(7, 2) + varint(1u << 30) + graphBytes, "not a valid ONNX model");
    model("onnx", "length varint of 11 bytes", "long_varint.onnx", key(7, 2) + std::string(11, '\xff') + "\x01",
          "not a valid ONNX model");
    // Wrong wire type: graph (field 7) sent as a varint; ir_version (field 1) as a length-delimited blob.
    model("onnx", "graph with varint wire type", "wire_graph.onnx", good + key(7, 0) + varint(5),
          "wrong wire type");
    model("onnx", "ir_version as a length-delimited blob", "wire_irversion.onnx", key(1, 2) + varint(2) + "ab" + good,
          "wrong wire type");
    {
      // The same deeper down, where nodes and value infos are checked through the generated accessors and handed
      // to the reflection walk only when they hold something unknown: a node's op_type (field 4) as a varint, an
      // attribute's i (field 3) as bytes, an input's dim_value (field 1) as bytes.
      auto field = [](int number, const std::string& body) { return key(number, 2) + varint(body.size()) + body; };
      onnx::ModelProto noGraph = baseProto();
      noGraph.clear_graph();
      const onnx::GraphProto graph = baseProto().graph();
      auto withNode = [&](const std::string& nodeBytes) {
        onnx::GraphProto g = graph;
        g.clear_node();
        return noGraph.SerializeAsString() + field(7, g.SerializeAsString() + field(1, nodeBytes));
      };
      const std::string relu = graph.node(0).SerializeAsString();
      model("onnx", "node op_type with varint wire type", "wire_node.onnx", withNode(relu + key(4, 0) + varint(5)),
            "graph.node[0].op_type (field 4");
      onnx::AttributeProto alpha;
      alpha.set_name("alpha");
      alpha.set_type(onnx::AttributeProto::INT);
      const std::string attr = alpha.SerializeAsString() + key(3, 2) + varint(2) + "ab";
      model("onnx", "attribute i as a length-delimited blob", "wire_attr.onnx", withNode(relu + field(5, attr)),
            "node[0].attribute[0].i (field 3");
      const std::string shape = field(1, key(1, 2) + varint(1) + "a");  // dim { dim_value: "a" }
      const std::string type = field(1, key(1, 0) + varint(1) + field(2, shape));
      onnx::GraphProto g = graph;
      g.clear_input();
      model("onnx", "dim_value as a length-delimited blob", "wire_dim.onnx",
            noGraph.SerializeAsString() + field(7, g.SerializeAsString() + field(11, field(1, "x") + field(2, type))),
            "input[0].type.tensor_type.shape.dim[0].dim_value (field 1");
    }
    model("onnx", "unknown field, truncated payload", "unknown_field.onnx", good + key(999, 2) + varint(1000) + "ab",
          "not a valid ONNX model");
    model("onnx", "unterminated group", "group.onnx", good + key(1000, 3) + key(1, 0) + varint(1),
          "not a valid ONNX model");
    {
      onnx::ModelProto m = baseProto();
      auto* t = addInitializer(m, "huge", {int64_t(1) << 40, int64_t(1) << 40});
      (void)t;
      model("onnx", "initializer dims overflow int64", "dims_overflow.onnx", m.SerializeAsString(), "overflow");
    }
    {
      onnx::ModelProto m = baseProto();
      auto* shape = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
      shape->add_dim()->set_dim_value(int64_t(1) << 62);
      shape->add_dim()->set_dim_value(int64_t(1) << 62);
      model("onnx", "input type dims overflow int64", "type_overflow.onnx", m.SerializeAsString(), "overflow");
    }
    {
      onnx::ModelProto m = baseProto();
      addInitializer(m, "w", {int64_t(1) << 62});  // 2^62 elements fit int64, their 2^64 bytes do not
      model("onnx", "byte size overflows int64", "bytes_overflow.onnx", m.SerializeAsString(), "overflow");
    }
    {
      onnx::ModelProto m = baseProto();
      addInitializer(m, "w", {1000000000});  // a billion floats declared, none present
      model("onnx", "billion elements, no data", "huge_count.onnx", m.SerializeAsString(), "holds 0");
    }
    {
      onnx::ModelProto m = baseProto();
      addInitializer(m, "w", {1000})->set_raw_data(std::string(16, '\0'));
      model("onnx", "raw_data shorter than dims", "raw_short.onnx", m.SerializeAsString(), "needs 4000");
    }
    {
      onnx::ModelProto m = baseProto();
      addInitializer(m, "w", {-4});
      model("onnx", "negative initializer dim", "neg_init.onnx", m.SerializeAsString(), "negative");
    }
    {
      onnx::ModelProto m = baseProto();
      m.mutable_graph()->mutable_node(0)->set_input(0, "z");
      auto* n = m.mutable_graph()->add_node();
      n->set_op_type("Neg");
      n->add_input("y");
      n->add_output("z");
      model("onnx", "graph cycle", "cycle.onnx", m.SerializeAsString(), "cycle");
    }
    {
      onnx::ModelProto m = baseProto();
      m.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
      model("onnx", "undefined input", "undefined.onnx", m.SerializeAsString(), "'nowhere', which is not defined");
    }
    {
      onnx::ModelProto m = baseProto();
      m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(77);
      model("onnx", "unknown element type", "dtype.onnx", m.SerializeAsString(), "unknown element type");
    }
    {
      // A model-local function that calls itself: expanding it would never end.
      onnx::ModelProto m = baseProto();
      m.mutable_graph()->mutable_node(0)->set_op_type("Selfish");
      m.mutable_graph()->mutable_node(0)->set_domain("local");
      auto* op = m.add_opset_import();
      op->set_domain("local");
      op->set_version(1);
      auto* f = m.add_functions();
      f->set_name("Selfish");
      f->set_domain("local");
      f->add_input("a");
      f->add_output("b");
      f->add_opset_import()->set_domain("local");
      f->mutable_opset_import(0)->set_version(1);
      auto* call = f->add_node();
      call->set_op_type("Selfish");
      call->set_domain("local");
      call->add_input("a");
      call->add_output("b");
      model("onnx", "self-recursive local function", "recursive_function.onnx", m.SerializeAsString(), "recursi");
    }
    {
      // Pooling with a stride of 0 (found by the fuzzer: libonnx's shape inference divides by it), and a
      // convolution with dilation 0 inside a local function's body.
      onnx::ModelProto m = baseProto();
      auto* in = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
      in->clear_dim();
      for (int d : {1, 1, 8, 8}) in->add_dim()->set_dim_value(d);
      auto* n = m.mutable_graph()->mutable_node(0);
      n->set_op_type("MaxPool");
      n->set_name("pool");
      auto* k = n->add_attribute();
      k->set_name("kernel_shape");
      k->set_type(onnx::AttributeProto::INTS);
      k->add_ints(2);
      k->add_ints(2);
      auto* st = n->add_attribute();
      st->set_name("strides");
      st->set_type(onnx::AttributeProto::INTS);
      st->add_ints(0);
      st->add_ints(1);
      model("onnx", "pooling stride 0", "stride0.onnx", m.SerializeAsString(), "'strides' holds 0");
      n->mutable_attribute()->RemoveLast();
      n->set_op_type("Body");
      n->set_domain("local");
      auto* op = m.add_opset_import();
      op->set_domain("local");
      op->set_version(1);
      auto* f = m.add_functions();
      f->set_name("Body");
      f->set_domain("local");
      f->add_input("a");
      f->add_output("b");
      f->add_opset_import()->set_version(17);
      auto* conv = f->add_node();
      conv->set_op_type("MaxPool");
      conv->add_input("a");
      conv->add_output("b");
      auto* dil = conv->add_attribute();
      dil->set_name("dilations");
      dil->set_type(onnx::AttributeProto::INTS);
      dil->add_ints(1);
      dil->add_ints(0);
      model("onnx", "dilation 0 in a function body", "dilation0_function.onnx", m.SerializeAsString(),
            "function 'Body'");
    }
    {
      // If inside If inside If... 70 deep (the cap is 64), then 200 deep (past protobuf's recursion limit).
      onnx::ModelProto m = baseProto();
      m.mutable_graph()->clear_node();
      m.mutable_graph()->mutable_output(0)->set_name("y");
      onnx::GraphProto* g = m.mutable_graph();
      for (int depth = 0; depth < 200; ++depth) {
        g = nestIf(g, "y");
        g->add_output()->set_name("y");
        if (depth == 70)
          model("onnx", "subgraphs nested 70 deep", "deep_subgraphs.onnx", m.SerializeAsString(),
                "nested more than 64 deep");
      }
      model("onnx", "subgraphs nested 200 deep", "deeper_subgraphs.onnx", m.SerializeAsString(), "nested deeper than");
    }
    {
      // A subgraph whose output is computed from itself (a cycle inside a branch).
      onnx::ModelProto m = baseProto();
      m.mutable_graph()->clear_node();
      onnx::GraphProto* body = nestIf(m.mutable_graph(), "y");
      auto* n = body->add_node();
      n->set_op_type("Neg");
      n->add_input("t");
      n->add_output("t");
      body->add_output()->set_name("t");
      model("onnx", "subgraph node reads its own output", "self_subgraph.onnx", m.SerializeAsString(), "cycle");
    }
    // External data: escaping paths.
    write("outside.bin", std::string(64, 'x'));
    write("ext/inside.bin", std::string(64, 'x'));
    QFile::link(tmp_.filePath("outside.bin"), tmp_.filePath("ext/link.bin"));
    auto external = [&](const char* defect, const char* name, const std::string& location, int64_t offset,
                        const char* fragment) {
      model("onnx", defect, QString("ext/") + name, kiln::test::withExternalData(location, offset).SerializeAsString(),
            fragment);
    };
    external("external data path with ..", "dotdot.onnx", "../outside.bin", 0, "leaves the model's directory");
    external("external data absolute path", "absolute.onnx", "/etc/hostname", 0, "absolute");
    external("external data symlink out of the folder", "symlink.onnx", "link.bin", 0, "outside the model's directory");
    external("external data past the end of its file", "pastend.onnx", "inside.bin", 60, "runs past the end");
    external("external data offset in the exabytes", "bigoffset.onnx", "inside.bin", int64_t(1) << 62,
             "runs past the end");
    external("external data file missing", "missing.onnx", "missing.bin", 0, "not found");
    {
      QDir().mkpath(tmp_.filePath("a_directory.onnx"));
      add("onnx", "a directory, not a file", {"inspect", tmp_.filePath("a_directory.onnx")},
          tmp_.filePath("a_directory.onnx"), "is a directory");
    }
  }

  void omCases() {
    using namespace kiln::om;
    using namespace kiln::om::test;
    const std::string good = fileOf(sample());
    std::string b = good;
    b[0] = 'X';
    model("om", "wrong magic", "magic.om", b, "magic");
    model("om", "truncated header", "trunc_header.om", good.substr(0, 100), "truncated .om header");
    model("om", "truncated partition table", "trunc_table.om", good.substr(0, 256 + 12), "truncated or not a valid .om file");
    b = good;
    put64(b, 256 + 8 + 24 * 1 + 16, 1u << 20);
    model("om", "partition past the end of the file", "partition_past_eof.om", b, "lies past the end of the file");
    b = good;
    put32(b, 256, 3000000000u);
    model("om", "partition count in the billions", "partition_count.om", b, "declares 3000000000 partitions");
    b = good;
    put32(b, 156, 4000000000u);
    model("om", "model count in the billions", "model_count.om", b, "declares 4000000000 models");
    b = good;
    put64(b, 256 + 8 + 24 * 2 + 8, UINT64_MAX - 4);
    model("om", "partition offset wraps around", "offset_wraps.om", b, "lies past the end of the file");
    OmHeader h = header();
    h.isEncrypt = 1;
    model("om", "encrypted", "encrypted.om", writeOmContainer(h, {partitions(sample())}), "encrypted");
    auto parts = partitions(sample());
    parts[0].bytes = std::string("\xff\xff\xff\xff\x0f garbage", 13);
    model("om", "protobuf garbage in MODEL_DEF", "garbage_modeldef.om", writeOmContainer(header(), {parts}),
          "not a valid ge.proto.ModelDef");
    Sample s = sample();
    s.op("conv")->mutable_output_desc(0)->mutable_shape()->set_dim(2, -5);
    model("om", "negative dims", "negative_dims.om", fileOf(s), "invalid dimension -5");
    s = sample();
    (*s.op("w")->mutable_attr())["value"].mutable_t()->mutable_desc()->set_data_offset(12);
    model("om", "constant past the weights", "const_offset.om", fileOf(s), "past the end of WEIGHTS_DATA");
    s = sample();
    s.op("conv")->mutable_output_desc(0)->mutable_shape()->set_dim(0, int64_t(1) << 40);
    s.op("conv")->mutable_output_desc(0)->mutable_shape()->set_dim(1, int64_t(1) << 40);
    model("om", "dims overflow int64", "dims_overflow.om", fileOf(s), "overflow");
    s = sample();
    s.op("conv")->set_input(0, "conv:0");
    model("om", "op reads its own output", "self_input.om", fileOf(s), "cycle that no NextIteration closes");
  }

  void geDumpCases() {
    const QString db = tmp_.filePath("dump_history.db");
    auto dump = [&](const char* defect, const char* dir, const std::vector<std::pair<QString, std::string>>& files,
                    const char* fragment) {
      const QString path = tmp_.filePath(dir);
      QDir().mkpath(path);
      for (const auto& [name, text] : files) write(QString(dir) + "/" + name, text);
      add("ge_dump", defect, {"history", "import", db, path}, path, fragment);
    };
    dump("no dump files", "dump_empty", {}, "no GE graph dump");
    dump("not protobuf text", "dump_garbage", {{"ge_proto_00000001_graph_1_Build.txt", "graph { op { name: \"x\" "}},
         "ge_proto_00000001_graph_1_Build.txt");
    dump("op reads a missing op", "dump_dangling",
         {{"ge_proto_00000001_graph_1_Build.txt",
           "graph { name: \"g\" op { name: \"a\" type: \"Relu\" input: \"ghost:0\" } }"}},
         "ghost");
  }

  // Single GE and ATC files, read as models or reports by `kiln inspect`.
  void geFileCases() {
    const std::string op = "op { name: \"r\" type: \"Relu\" input: \"x:0\" }";
    model("ge_dump", "field value cut off", "ge_proto_00001_Build.txt", "graph { name: \"g\" op { name: ", "line 1");
    model("ge_dump", "string not closed", "ge_proto_00002_Build.txt", "graph { name: \"g\n op { }", "string is not closed");
    std::string deep;
    for (int i = 0; i < 100000; ++i) deep += "x { ";
    model("ge_dump", "nested 100000 deep", "ge_proto_00003_Build.txt", deep, "deeper than");
    model("ge_dump", "no graph", "ge_proto_00004_Build.txt", "name: \"m\" version: 1", "holds no graph");
    model("ge_dump", "reads an op that is not there", "ge_proto_00005_Build.txt", "graph { name: \"g\" " + op + " }",
          "'x', which is not an op of the graph");
    model("ge_dump", "two ops of one name", "ge_proto_00006_Build.txt",
          "graph { name: \"g\" op { name: \"a\" type: \"Data\" } op { name: \"a\" type: \"Relu\" } }", "two ops named 'a'");
    model("ge_dump", "negative dimension", "ge_proto_00007_Build.txt",
          "graph { name: \"g\" op { name: \"a\" type: \"Data\" output_desc { shape { dim: -9 } } } }", "invalid dimension -9");
    model("ge_onnx", "truncated", "ge_onnx_00001_graph_1_Build.pbtxt", "ir_version: 6\nproducer_name: \"GE\"\ngraph { node {",
          "the text ends inside a message");
    model("ge_onnx", "no nodes", "ge_onnx_00002_graph_1_Build.pbtxt", "ir_version: 6\nproducer_name: \"GE\"\n", "holds no graph nodes");
    model("om_json", "truncated", "om_trunc.json", "{\"graph\": [{\"op\": [", "not valid JSON");
    model("om_json", "graph not a list", "om_graph.json", "{\"graph\": 3}", "no \"graph\" list");
    model("om_json", "op not an object", "om_op.json", "{\"graph\": [{\"name\": \"g\", \"op\": [7]}]}", "holds no op");
    model("om_json", "a JSON array", "trace.json", "[{\"name\": \"x\", \"ts\": \"1\"}]", "is JSON but no model");
    model("fusion_result", "counts of a list", "fusion_list.json", "[{\"graph_fusion\": 3, \"session_and_graph_id\": [1]}", "not ATC's fusion_result.json");
    model("fusion_result", "scalar document", "fusion_scalar.json", "{\"ub_fusion\": {}}\n7", "is integer, not an object");
    model("onnx_text", "garbage", "model.pbtxt", "ir_version: 8\ngraph { node { op_type: ", "line 2");
  }

  void optionCases() {
    auto opts = [&](const char* defect, const char* name, const std::string& text, const char* fragment) {
      const QString path = write(name, text);
      add("options", defect, {"compile", good_, "--options", path}, path, fragment);
    };
    opts("not JSON", "opts_not_json.json", "precision_mode = force_fp32", "not valid JSON");
    opts("truncated JSON", "opts_truncated.json", "{\"precision_mode\": \"force_fp", "unterminated string");
    opts("unknown key", "opts_unknown.json", "{\"no_such_option\": 1}", "no_such_option");
    opts("wrong value type", "opts_type.json", "{\"topo_sorting_mode\": \"fast\"}", "topo_sorting_mode");
    opts("integer out of range", "opts_range.json", "{\"constant_folding_max_bytes\": -1}", "constant_folding_max_bytes");
    opts("nested 100000 deep", "opts_deep.json", std::string(100000, '['), "nesting deeper than 32");
    opts("larger than 1 MiB", "opts_big.json", "{\"x\": \"" + std::string(2 << 20, 'a') + "\"}", "1 MiB");
  }

  // Other JSON Kiln reads: a SoC profile (`kiln run --soc FILE`) and a batch baseline (`kiln batch --baseline`).
  void otherJsonCases() {
    const QString soc = write("soc_truncated.json", "{\"name\": 3");
    add("soc_profile", "truncated JSON", {"run", good_, "--random", "1", "--soc", soc}, soc, "not valid JSON");
    const QString socType = write("soc_type.json", "{\"name\": 3}");
    add("soc_profile", "field of the wrong type", {"run", good_, "--random", "1", "--soc", socType}, socType,
        "'name' must be a string");
    const QString defaults = write("batch_default.json", "{}");
    const QString baseline = write("baseline/summary.json", "{\"kiln_batch\": 1, \"cases\": [{\"model\": 7}]}");
    add("batch_baseline", "case without an id",
        {"batch", "--models", good_, "--options", defaults, "--out", tmp_.filePath("batch_out"), "--baseline", baseline},
        baseline, "cases[0]: 'id'");
  }

  void traceCases() {
    auto trace = [&](const char* defect, const char* name, const std::string& text, const char* fragment) {
      const QString path = write(name, text);
      add("trace_csv", defect, {"plan", path}, path, fragment);
    };
    trace("empty file", "trace_empty.csv", "", "holds no buffers");
    trace("duplicate id", "trace_dup.csv", "id,lower,upper,size\n1,0,4,64\n1,1,5,64\n", "line 3: id 1 already used on line 2");
    trace("upper before lower", "trace_backwards.csv", "id,lower,upper,size\n1,5,2,64\n", "line 2: upper 2 is not after lower 5");
    trace("negative size", "trace_negsize.csv", "id,lower,upper,size\n1,0,4,-64\n", "line 2: size -64 is outside");
    trace("size overflows int64", "trace_bigsize.csv", "id,lower,upper,size\n1,0,4,99999999999999999999999\n", "does not fit in 64 bits");
    trace("not a number", "trace_nan.csv", "id,lower,upper,size\n1,zero,4,64\n", "lower 'zero' is not an integer");
    trace("binary garbage", "trace_binary.csv", std::string("id,lower,upper,size\n\0\xff\xfe", 23), "expected 4");
    trace("one line of 10 MB", "trace_longline.csv", "id,lower,upper,size\n" + std::string(10 << 20, '1'), "line");
  }

  void tensorCases() {
    // ONNX test tensors: `kiln run --expected` and an input_0.pb in an --inputs folder.
    auto expected = [&](const char* defect, const char* name, const std::string& bytes, const char* fragment) {
      const QString path = write(name, bytes);
      add("tensor_pb", defect, {"run", good_, "--random", "1", "--expected", path}, path, fragment);
    };
    const std::string ok = tensorProto({2}, std::string(8, '\0')).SerializeAsString();
    expected("truncated TensorProto", "trunc_tensor.pb", ok.substr(0, ok.size() - 3), "not a valid ONNX TensorProto");
    expected("dims overflow int64", "overflow_tensor.pb",
             tensorProto({int64_t(1) << 40, int64_t(1) << 40}, "").SerializeAsString(), "overflow");
    expected("raw_data shorter than dims", "short_tensor.pb", tensorProto({1000}, "abcd").SerializeAsString(), "needs 4000");
    expected("negative dim", "negdim_tensor.pb", tensorProto({-2}, "").SerializeAsString(), "negative");
    const QString dir = tmp_.filePath("inputs_bad");
    QDir().mkpath(dir);
    const QString input = write("inputs_bad/input_0.pb", tensorProto({1000000000}, "").SerializeAsString());
    add("tensor_pb", "input with a billion elements and no data", {"run", good_, "--inputs", dir}, input, "needs 4000000000");
  }

  void npzCases() {
    using namespace kiln::test;
    auto npz = [&](const char* defect, const char* name, const std::string& bytes, const char* fragment) {
      const QString path = write(name, bytes);
      add("npz", defect, {"run", good_, "--inputs", path}, path, fragment);
    };
    const std::string good = zipOf({{"x.npy", npy("<f4", "(2,)", floats({1, 2}))}});
    npz("not a zip", "notzip.npz", std::string(100, 'x'), "no central directory");
    std::string lying = good;
    lying.replace(lying.size() - 6, 4, le(1u << 30, 4));
    npz("central directory offset past the end", "cd_offset.npz", lying, "central directory");
    npz("shape larger than the data", "npy_short.npz", zipOf({{"x.npy", npy("<f4", "(1000000, 1000000)", "")}}), "does not match the 0 data bytes");
    npz("shape overflows int64", "npy_overflow.npz",
        zipOf({{"x.npy", npy("<f4", "(4611686018427387904, 4611686018427387904)", "")}}), "does not match");
    npz("npy header cut", "npy_header.npz", zipOf({{"x.npy", std::string("\x93NUMPY\x01\x00\xff\xff{'descr'", 17)}}),
        "");
  }

  void historyCases() {
    auto history = [&](const char* defect, const QString& path, const char* fragment) {
      add("history", defect, {"history", "list", path}, path, fragment);
    };
    history("plain text, not SQLite", write("notes.db", "these are my notes, not a database\n"), "not an SQLite database");
    const QString foreign = tmp_.filePath("foreign.db");
    sqliteExec(foreign, "CREATE TABLE customers(id INTEGER, name TEXT); INSERT INTO customers VALUES (1, 'x');");
    history("SQLite, not Kiln's", foreign, "not a Kiln history");
    // A real Kiln history (made by kiln itself), then stamped with a newer schema version / truncated.
    const QString real = tmp_.filePath("real.db");
    const KilnRun made = runKilnLimited({"compile", good_, "--history", real});
    QVERIFY2(made.code == 0, qPrintable(made.err));
    QFile::copy(real, tmp_.filePath("newer.db"));
    sqliteExec(tmp_.filePath("newer.db"), "PRAGMA user_version = 99");
    history("newer schema", tmp_.filePath("newer.db"), "newer");
    QFile f(real);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray all = f.readAll();
    history("truncated to its first page", write("truncated.db", all.left(4096).toStdString()), "corrupt database");
    history("header only", write("header_only.db", std::string("SQLite format 3\0", 16)), "corrupt database");
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    // KILN_KEEP_MALFORMED=1 keeps the files (printed below) to replay a case by hand.
    if (qEnvironmentVariableIsSet("KILN_KEEP_MALFORMED")) tmp_.setAutoRemove(false);
    qInfo("files in %s", qPrintable(tmp_.path()));
    onnxCases();
    omCases();
    geDumpCases();
    geFileCases();
    optionCases();
    otherJsonCases();
    traceCases();
    tensorCases();
    npzCases();
    historyCases();
    qInfo("%zu malformed files", cases_.size());
    QVERIFY(cases_.size() >= 40);
  }

  void refusedWithOneClearLine_data() {
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < cases_.size(); ++i)
      QTest::newRow(qPrintable(cases_[i].format + ": " + cases_[i].defect)) << int(i);
  }

  void refusedWithOneClearLine() {
    QFETCH(int, index);
    const Case& c = cases_[size_t(index)];
    const KilnRun r = runKilnLimited(c.args);
    const QString err = r.err;
    qInfo("%s", qPrintable(err.trimmed()));
    QVERIFY2(r.code != -1, "kiln crashed");
    QVERIFY2(r.code != -2, "kiln did not finish within 60 s");
    QCOMPARE(r.code, 2);
    QVERIFY2(err.endsWith('\n') && err.count('\n') == 1, qPrintable("not one line: " + err));
    QVERIFY2(err.contains(c.named), qPrintable("does not name " + c.named + ": " + err));
    QVERIFY2(err.contains(c.fragment), qPrintable("expected '" + c.fragment + "' in: " + err));
  }
};

QTEST_GUILESS_MAIN(MalformedInputsTest)
#include "test_malformed_inputs.moc"
