#pragma once
// Kiln's layout-conversion ops: kiln:TransData (defined with the other Kiln ops) and kiln:TransDataCast, the
// TransData + Cast pair TransDataCastFusion makes one kernel of.
namespace kiln {

class Node;
class OpRegistry;
struct OpDef;

// Output type of a TransData-like node from its input and its src_format / dst_format / origin_shape attributes.
// Throws std::runtime_error for a conversion the layouts cannot express.
void inferTransData(Node& n);
// Registers kiln:TransDataCast, which has TransData's signature (`transData`). Called by registerKilnOps.
void registerNpuFormatOps(OpRegistry& registry, const OpDef& transData);

}  // namespace kiln
