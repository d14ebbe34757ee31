#pragma once
// glibc's allocator tuned for compiles that allocate and free model-sized weight buffers several times over
// (fp32 -> fp16, re-layout, folding). By default glibc maps every block over 128 KiB fresh and unmaps it on free,
// and trims the heap's top on free, so each new weight buffer paid a page fault per 4 KiB: a third of ViT-B/16's
// pass time, and half of a resnet50 compile's time in a Python process. Tuned, blocks up to 32 MiB come from the heap
// and freed ones are reused (up to 512 MiB of free heap is kept); the peak is unchanged. The `kiln` executable calls
// it at start, the Python module when imported. Someone tuning the allocator with GLIBC_TUNABLES keeps their
// settings: nothing is changed then.
namespace kiln {

void tuneAllocatorForWeights();

}  // namespace kiln
