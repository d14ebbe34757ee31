#pragma once
// Which node of another pass view stands for a node of this one, for the compare view's synced selection. Two runs
// of the same model share node ids for every node both kept (ids are stable across passes and the same passes on
// the same file number nodes alike), so the id is tried first; otherwise — fused nodes, or two different models —
// the same name, then the same op type with the same first output shape as the only candidate.
#include <cstdint>

#include "layout/pass_view.h"

namespace kiln::layout {

// 0 when nothing matches. `sameModel` allows matching by id.
int64_t matchNode(const PassView& from, int64_t id, const PassView& to, bool sameModel);

}  // namespace kiln::layout
