#pragma once
// Bulk loops over weights (fp32 -> fp16, re-layout, BatchNorm folding, constant fills) split across the machine's
// cores. Those loops write fresh memory, and a page fault costs more than the writing itself: two threads touch
// 100 MB of new memory in 24 ms where one takes 42 (this machine). Each piece writes only its own range, so the
// result is the same whatever the split.
//
// The pool starts on first use with one thread fewer than the machine has (KILN_THREADS=N caps the total, 1 turns it
// off), and none under an address-space limit (a thread reserves its stack and malloc arena up front). One loop
// uses the pool at a time: a loop started while another runs (a second compile thread, a nested loop) runs on its
// own thread only, as does a loop too small to be worth waking a thread for.
#include <cstddef>
#include <functional>

namespace kiln {

// Calls body(begin, end) over [0, n) in contiguous pieces of at least minPiece (the last may be shorter), each
// starting at a multiple of `align` (vector loops keep their lanes aligned to the element they would have in one
// piece). Pieces are claimed in order as threads come free. Returns once every piece is done; the first exception
// a piece threw is rethrown after the rest finished.
void parallelFor(size_t n, size_t minPiece, size_t align, const std::function<void(size_t, size_t)>& body);

// Threads a loop can run on, the caller's included (1: loops run on the caller alone).
size_t parallelThreads();

}  // namespace kiln
