// The Ascend profiler's output read as real releases write it: quoted shape lists with doubled quotes, trailing
// tabs after times, "Block Dim" or "Block Num", torch_npu's Step Id and static_op_mem.csv (TOTAL row, 4294967295
// for "to the end"); rows that cannot be read are skipped and counted; a header without what a task needs is an
// error naming the file; nanosecond-exact times from microsecond stamps beyond a double's precision. The shared
// samples (../shared/models/ascend/msprof) give the measured numbers the reference states; kiln inspect prints them.
// Calibration: a measured task costed as Kiln would cost that op; the fit per op type (setup and scale from several
// sizes, setup alone from one), touching no other op type; kiln calibrate writes a profile --soc reads back.
#include <cmath>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "emulator/timing/calibration.h"
#include "io/msprof/csv_table.h"
#include "io/msprof/msprof_profile.h"
#include "support/kiln_process.h"
#include "util/load_error.h"

using namespace kiln;
using namespace kiln::msprof;

namespace {

void write(const QString& path, const QByteArray& text) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(text);
}

const char* kHeader =
    "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),Task Duration(us),"
    "Task Wait Time(us),Block Num,Input Shapes,Input Data Types,Output Shapes,aicore_time(us),aic_mac_time(us),"
    "aic_mte2_time(us),aic_scalar_time(us),aiv_time(us),aiv_vec_time(us)\r\n";

MeasuredTask task(std::string type, std::string taskType, std::string inShapes, std::string inTypes,
                  std::string outShapes, double us, int64_t blockDim) {
  MeasuredTask t;
  t.name = "op_" + type;
  t.opType = std::move(type);
  t.taskType = std::move(taskType);
  t.inputShapes = std::move(inShapes);
  t.inputTypes = std::move(inTypes);
  t.outputShapes = std::move(outShapes);
  t.outputTypes = "FLOAT";
  t.durationUs = us;
  t.blockDim = blockDim;
  return t;
}

SocProfile testSoc() {
  return SocProfile::fromJsonText(R"({"name": "TestSoc", "ai_cores": 8, "vector_cores": 16, "clock_ghz": 1,
      "cube_fp32_macs_per_cycle": 1024, "vector_fp32_lanes_per_cycle": 64, "hbm_gbps": 1000, "kernel_task_us": 2})",
                                  "test");
}

}  // namespace

class MsprofTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  void csvFieldsAsTheProfilerQuotesThem() {
    const CsvTable t = CsvTable::parse(
        "\xEF\xBB\xBF" "a,Task Duration(us),Input Shapes\r\n1,2.5\t,\"\"\"32,1024;1024\"\"\"\r\n\r\n3,,x\n", "t.csv");
    QCOMPARE(t.rows(), size_t(2));
    QCOMPARE(*t.column({"task_duration"}), size_t(1));
    QCOMPARE(std::string(t.field(0, 2)), std::string("\"32,1024;1024\""));
    QCOMPARE(*t.number(0, 1), 2.5);
    QVERIFY(!t.number(1, 1));
    QCOMPARE(t.lineOf(1), size_t(4));
    try {
      CsvTable::parse("a,b\n1,\"never closed\n2,3\n", "bad.csv");
      QFAIL("an unterminated quote must be refused");
    } catch (const LoadError& e) {
      QCOMPARE(QString::fromStdString(e.describe()), QString("bad.csv: line 2: a quoted field is never closed"));
    }
    QVERIFY_THROWS_EXCEPTION(LoadError, CsvTable::parse("", "empty.csv"));
  }

  void timesKeepTheirNanoseconds() {
    QCOMPARE(*parseMicrosecondsToNs("1780295077844859.030\t"), int64_t(1780295077844859030));
    QCOMPARE(*parseMicrosecondsToNs("12"), int64_t(12000));
    QCOMPARE(*parseMicrosecondsToNs("0.0005"), int64_t(0));
    QVERIFY(!parseMicrosecondsToNs("-1"));
    QVERIFY(!parseMicrosecondsToNs("1e5"));
    QVERIFY(!parseMicrosecondsToNs("99999999999999999"));  // would overflow nanoseconds
  }

  // A torch_npu ASCEND_PROFILER_OUTPUT folder: rows sorted by start, relative times, the unreadable row skipped and
  // noted, the pipeline breakdown kept where it was sampled, static memory with its TOTAL.
  void torchNpuFolderReads() {
    const QString dir = tmp_.filePath("ASCEND_PROFILER_OUTPUT");
    QVERIFY(QDir().mkpath(dir));
    QByteArray csv = kHeader;
    csv += "0,4294967295,24,46,aclnnGelu_Gelu,Gelu,dynamic,AI_VECTOR_CORE,1000000000000010.500\t,2.7,1.5,32,"
           "\"\"\"32,1024\"\"\",FLOAT,\"\"\"32,1024\"\"\",0,0,0,0,1.265,0.193\r\n";
    csv += "0,4294967295,23,46,aclnnAddmm_MatMulV2,MatMulV2,dynamic,AI_CORE,1000000000000000.000\t,6.7,0,16,"
           "\"\"\"32,1024;1024,1024;1024\"\"\",FLOAT;FLOAT;FLOAT,\"\"\"32,1024\"\"\",5.512,1.537,1.652,2.664,0,0\r\n";
    csv += "0,4294967295,25,46,broken,Gelu,dynamic,AI_VECTOR_CORE,1000000000000020.000,N/A,0,32\r\n";
    write(dir + "/op_summary_20260101.csv", csv);
    write(dir + "/static_op_mem.csv",
          "Device_id,Op Name,Model Name,Graph ID,Node Index Start,Node Index End,Size(KB)\n"
          "0,conv1,net,1,0,4294967295,2.5\n0,TOTAL,,,,,10\n");
    const MeasuredProfile p = readMeasuredProfile(tmp_.path().toStdString());
    QCOMPARE(p.tasks.size(), size_t(2));
    QCOMPARE(p.skippedRows, size_t(1));
    QCOMPARE(p.tasks[0].opType, std::string("MatMulV2"));
    QCOMPARE(p.tasks[0].startNs, int64_t(0));
    QCOMPARE(p.tasks[1].startNs, int64_t(10500));
    QCOMPARE(*p.tasks[0].blockDim, int64_t(16));
    QCOMPARE(p.tasks[0].inputShapes, std::string("32,1024;1024,1024;1024"));
    QCOMPARE(*p.tasks[0].scalarUs, 2.664);
    QVERIFY(!p.tasks[0].aivUs);  // zero: not sampled on an AI Core task
    QCOMPARE(*p.tasks[1].vecUs, 0.193);
    QCOMPARE(p.staticMemory.size(), size_t(1));
    QCOMPARE(p.staticMemory[0].bytes, int64_t(2560));
    QCOMPARE(p.staticMemory[0].nodeEnd, int64_t(-1));
    QCOMPARE(*p.staticMemoryTotalBytes, int64_t(10240));
    QVERIFY(isMeasuredProfile(tmp_.path().toStdString()));
  }

  // msprof's Chrome trace, when a folder holds no task CSV: the Ascend Hardware process's events are the tasks (the
  // stream from Physic Stream Id, times as strings keeping their nanoseconds); a trace that is not a list of events,
  // or without the hardware process, is refused naming the file.
  void traceAloneGivesTheTasks() {
    const QString dir = tmp_.filePath("trace_only");
    QVERIFY(QDir().mkpath(dir));
    write(dir + "/msprof_1.json",
          R"([{"name":"process_name","pid":7,"ph":"M","args":{"name":"Ascend Hardware"}},
              {"name":"process_name","pid":8,"ph":"M","args":{"name":"CANN"}},
              {"name":"aclnnGelu_Gelu","pid":7,"tid":46,"ts":"1000000000000010.500","dur":2.7,"ph":"X",
               "args":{"Task Type":"AI_VECTOR_CORE","Physic Stream Id":46,"Task Id":24}},
              {"name":"aclnnMm_MatMulV2","pid":7,"tid":46,"ts":"1000000000000000.000","dur":6.7,"ph":"X",
               "args":{"Task Type":"AI_CORE","Physic Stream Id":46,"Task Id":23}},
              {"name":"host_api","pid":8,"tid":1,"ts":"1000000000000000.000","dur":50,"ph":"X"},
              {"name":"broken","pid":7,"tid":46,"ph":"X"}])");
    QVERIFY(isMeasuredProfile(dir.toStdString()));
    const MeasuredProfile p = readMeasuredProfile(dir.toStdString());
    QCOMPARE(p.tasks.size(), size_t(2));
    QCOMPARE(p.skippedRows, size_t(1));
    QCOMPARE(p.tasks[0].name, std::string("aclnnMm_MatMulV2"));
    QCOMPARE(p.tasks[1].startNs, int64_t(10500));
    QCOMPARE(p.tasks[1].stream, int64_t(46));
    QCOMPARE(p.tasks[1].taskType, std::string("AI_VECTOR_CORE"));
    QCOMPARE(*p.tasks[0].taskId, int64_t(23));
    const QString bad = tmp_.filePath("not_a_list");
    QVERIFY(QDir().mkpath(bad));
    write(bad + "/msprof_2.json", R"({"traceEvents": 5})");
    try {
      readMeasuredProfile(bad.toStdString());
      QFAIL("a trace that is not a list must be refused");
    } catch (const LoadError& e) {
      QVERIFY2(QString(e.what()).contains("a trace is a list of events"), e.what());
    }
    write(bad + "/msprof_2.json", R"([{"name":"x","pid":1,"ph":"X","ts":"1.0","dur":1}])");
    QVERIFY_THROWS_EXCEPTION(LoadError, readMeasuredProfile(bad.toStdString()));
    const QString shared = QStringLiteral(KILN_SHARED_DIR) + "/models/ascend/msprof/torch_npu_mlp";
    if (!QFileInfo::exists(shared)) QSKIP("../shared/models/ascend/msprof is absent");
    const QString only = tmp_.filePath("shared_trace_only");
    QVERIFY(QDir().mkpath(only));
    for (const QString& f : QDir(shared).entryList({"msprof_*.json"})) QVERIFY(QFile::copy(shared + "/" + f, only + "/" + f));
    const MeasuredProfile fromTrace = readMeasuredProfile(only.toStdString());
    const MeasuredProfile fromCsv = readMeasuredProfile(shared.toStdString());
    int matmuls = 0;
    for (const MeasuredTask& t : fromTrace.tasks) matmuls += t.name.find("MatMulV2") != std::string::npos;
    QCOMPARE(matmuls, 20);
    QVERIFY(fromTrace.tasks.size() >= fromCsv.tasks.size());
  }

  void headersWithoutTasksAreRefused() {
    const QString f = tmp_.filePath("op_summary_bad.csv");
    write(f, "Device_id,Op Name,Stream ID,Task Start Time(us)\n0,x,1,5\n");
    try {
      readMeasuredProfile(f.toStdString());
      QFAIL("no duration column must be refused");
    } catch (const LoadError& e) {
      QVERIFY2(QString(e.what()).contains("lacks Task Duration(us)"), e.what());
    }
    QVERIFY(!isMeasuredProfile(f.toStdString()));
    const QString empty = tmp_.filePath("nothing");
    QVERIFY(QDir().mkpath(empty));
    QVERIFY_THROWS_EXCEPTION(LoadError, readMeasuredProfile(empty.toStdString()));
  }


  // Every measured task becomes the op Kiln would cost: a MatMulV2 on the cube over its recorded shapes and cores,
  // a Gelu on the vector cores; what cannot be placed says why.
  void measuredTasksAreCostedAsKilnWould() {
    const SocProfile soc = testSoc();
    const auto mm = calibration::costMeasuredTask(
        task("MatMulV2", "AI_CORE", "\"32,1024;1024,1024;1024\"", "FLOAT;FLOAT;FLOAT", "\"32,1024\"", 6.7, 8), soc);
    QVERIFY2(mm.placed, mm.why.c_str());
    QCOMPARE(mm.cost.unit, SimUnit::Cube);
    QCOMPARE(mm.cost.cores, 8);
    QCOMPARE(mm.cost.fixedUs, 2.0);
    // 32x1024x1024 MACs over 8 cores at 1024 per cycle and 1 GHz: 4.096 us; bytes 4 x (32K + 1M + 1K + 32K)
    QVERIFY(std::fabs(mm.cost.computeUs - 4.096) < 1e-9);
    QVERIFY(std::fabs(mm.cost.bytes - 4.0 * (32 * 1024 + 1024 * 1024 + 1024 + 32 * 1024)) < 1);
    const auto gelu = calibration::costMeasuredTask(
        task("Gelu", "AI_VECTOR_CORE", "32,1024", "FLOAT", "32,1024", 2.7, 16), soc);
    QVERIFY2(gelu.placed, gelu.why.c_str());
    QCOMPARE(gelu.cost.unit, SimUnit::Vector);
    const auto custom = calibration::costMeasuredTask(task("_Z11mmad_custom", "AI_CORE", "N/A", "N/A", "N/A", 7.8, 2), soc);
    QVERIFY(!custom.placed);
    QVERIFY2(QString::fromStdString(custom.why).contains("no input shapes recorded"), custom.why.c_str());
    const auto hccl = calibration::costMeasuredTask(task("HcomAllReduce", "HCCL", "8", "FLOAT", "8", 30, 1), soc);
    QVERIFY(!hccl.placed);
    QVERIFY(QString::fromStdString(hccl.why).contains("HCCL task"));
    const auto dynamicShape = calibration::costMeasuredTask(task("Add", "AI_VECTOR_CORE", "-1,8;8", "FLOAT", "-1,8", 3, 1), soc);
    QVERIFY(!dynamicShape.placed);
  }

  // Several sizes: setup and scale by least squares recover what made the measurements; one size keeps the model's
  // throughput and fits the setup. Op types are fitted apart, the fitted profile costs exactly the "after" numbers,
  // and an op type without measurements keeps the base profile's cost.
  void calibrationFitsPerOpType() {
    const SocProfile soc = testSoc();
    MeasuredProfile p;
    p.source = "synthetic";
    const std::vector<int> ms = {32, 64, 128, 256};
    for (int m : ms) {
      MeasuredTask probe = task("MatMulV2", "AI_CORE", std::to_string(m) + ",1024;1024,1024", "FLOAT;FLOAT",
                                std::to_string(m) + ",1024", 1.0, 8);
      const double work = std::max(calibration::costMeasuredTask(probe, soc).cost.computeUs,
                                   calibration::costMeasuredTask(probe, soc).cost.memoryUs);
      probe.durationUs = 3.5 + 1.25 * work;  // what the "hardware" does
      p.tasks.push_back(probe);
    }
    for (int i = 0; i < 3; ++i) p.tasks.push_back(task("Gelu", "AI_VECTOR_CORE", "32,1024", "FLOAT", "32,1024", 2.5 + 0.1 * i, 16));
    p.tasks.push_back(task("_Z6custom", "AI_CORE", "N/A", "N/A", "N/A", 7.8, 2));
    const calibration::Result r = calibration::calibrate({p}, soc);
    QCOMPARE(r.tasksRead, int64_t(8));
    QCOMPARE(r.tasksUsed, int64_t(7));
    QCOMPARE(r.unplaced.size(), size_t(1));
    QCOMPARE(r.opTypes.size(), size_t(2));
    const calibration::OpTypeFit* mm = nullptr;
    const calibration::OpTypeFit* gelu = nullptr;
    for (const auto& f : r.opTypes) (f.opType == "MatMulV2" ? mm : gelu) = &f;
    QVERIFY(mm && gelu);
    QCOMPARE(mm->sizes, 4);
    QVERIFY2(std::fabs(mm->fitted.setupUs - 3.5) < 1e-6, std::to_string(mm->fitted.setupUs).c_str());
    QVERIFY(std::fabs(mm->fitted.workScale - 1.25) < 1e-6);
    QVERIFY(mm->medianAbsRelErrorAfter < 1e-6);
    QVERIFY(mm->medianAbsRelErrorBefore > 0.05);
    QCOMPARE(gelu->sizes, 1);
    QCOMPARE(gelu->fitted.workScale, 1.0);
    QCOMPARE(gelu->fitted.tasks, int64_t(3));
    QVERIFY(gelu->medianAbsRelErrorAfter < gelu->medianAbsRelErrorBefore);
    QVERIFY(QString::fromStdString(gelu->fitted.basis).contains("one size"));
    // The written profile reads back and costs what the report says.
    const SocProfile after = SocProfile::fromJsonText(r.after.toJsonText(), "after.json");
    QCOMPARE(after.opCalibration.size(), size_t(2));
    for (const MeasuredTask& t : p.tasks) {
      const auto c = calibration::costMeasuredTask(t, after);
      if (!c.placed) continue;
      QVERIFY(c.cost.calibrated);
      if (t.opType == "MatMulV2") QVERIFY(std::fabs(c.cost.durationUs - t.durationUs) < 1e-6);
    }
    const auto relu = calibration::costMeasuredTask(task("Relu", "AI_VECTOR_CORE", "32,1024", "FLOAT", "32,1024", 1, 16), after);
    const auto reluBefore = calibration::costMeasuredTask(task("Relu", "AI_VECTOR_CORE", "32,1024", "FLOAT", "32,1024", 1, 16), soc);
    QVERIFY(!relu.cost.calibrated);
    QCOMPARE(relu.cost.durationUs, reluBefore.cost.durationUs);
    // Bad calibration entries are refused naming the field.
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             SocProfile::fromJsonText(R"({"name":"x","op_calibration":{"Gelu":{"work_scale":0}}})", "bad.json"));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             SocProfile::fromJsonText(R"({"name":"x","op_calibration":[1]})", "bad.json"));
  }

  // The shared samples: torch_npu's MLP (20 MatMulV2 at 6.5-7.1 µs, 15 Gelu at 2.3-2.8 µs, launched one by one) and
  // a custom kernel; kiln inspect summarises them, --json with tasks and op_types.
  void sharedProfilesOpen() {
    const QString root = QStringLiteral(KILN_SHARED_DIR) + "/models/ascend/msprof/";
    if (!QFileInfo::exists(root + "torch_npu_mlp")) QSKIP("../shared/models/ascend/msprof is absent");
    const MeasuredProfile p = readMeasuredProfile((root + "torch_npu_mlp").toStdString());
    QCOMPARE(p.tasks.size(), size_t(35));
    int matmuls = 0;
    for (const MeasuredTask& t : p.tasks)
      if (t.opType == "MatMulV2") {
        ++matmuls;
        QVERIFY(t.durationUs >= 6.4 && t.durationUs <= 7.2);
        QCOMPARE(t.stream, int64_t(46));
      }
    QCOMPARE(matmuls, 20);
    KilnRun r = runKiln({"inspect", root + "torch_npu_mlp", "--json"});
    QCOMPARE(r.code, 0);
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["tasks"].toInt(), 35);
    QCOMPARE(j["op_types"].toArray().size(), 2);
    QVERIFY(j["idle_us"].toDouble() > j["device_busy_us"].toDouble());
    r = runKiln({"inspect", root + "matmul_kernel"});
    QVERIFY2(r.code == 0 && r.out.contains("Tasks       1"), qPrintable(r.err + r.out));
    r = runKiln({"compile", root + "torch_npu_mlp/op_summary_20260601142441.csv"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("the profile of a measured run, not a model"), qPrintable(r.err));

    // kiln calibrate on both: the custom kernel (no shapes) listed as not placed, the MLP's two op types fitted to
    // within 15% (the issue's goal), a profile written that kiln compile --soc takes.
    const QString out = tmp_.filePath("my_soc.json");
    r = runKiln({"calibrate", root + "torch_npu_mlp", root + "matmul_kernel", "--soc", "ascend910b1", "-o", out, "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject c = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(c["tasks"].toInt(), 36);
    QCOMPARE(c["tasks_used"].toInt(), 35);
    QCOMPARE(c["unplaced"].toArray().size(), 1);
    QCOMPARE(c["op_types"].toArray().size(), 2);
    QVERIFY(c["median_abs_rel_error_after"].toDouble() <= 0.15);
    QVERIFY(c["median_abs_rel_error_before"].toDouble() > c["median_abs_rel_error_after"].toDouble());
    for (const auto& v : c["op_types"].toArray()) {
      const QJsonObject o = v.toObject();
      QVERIFY(o["measured_us"].toDouble() > 0 && o["simulated_before_us"].toDouble() > 0);
      QVERIFY(std::fabs(o["simulated_after_us"].toDouble() / o["measured_us"].toDouble() - 1) < 0.15);
    }
    QVERIFY(QFileInfo::exists(out));
    r = runKiln({"calibrate", root + "matmul_kernel", "--soc", "ascend910b1"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("no measured task could be placed"), qPrintable(r.err));
  }
};

QTEST_GUILESS_MAIN(MsprofTest)
#include "test_msprof.moc"
