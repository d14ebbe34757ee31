// The exact search's static inputs: sections (maximal cliques of the lifetimes), conflict lists and the preorders
// that break ties between buffers at the same offset.
#include <algorithm>
#include <numeric>
#include <tuple>

#include "memory/exact_search.h"

namespace kiln::memory::detail {

namespace {

// The three preorders MiniMalloc rotates through, by the keys they compare in turn (all larger first): lifetime
// width, area (size x width), and "total", the most bytes of the buffers being ordered live in any section the buffer
// spans. The search re-ranks each group left after a split by the bytes still unplaced there (as MiniMalloc re-sorts
// every sub-problem): on the tight minimalloc traces E, H and I, static totals found no packing in minutes and
// re-ranked ones find it in under a second. No one order wins
// on every instance, and the run time of a fixed order is heavy-tailed, so the search restarts through all three
// with growing node limits (planner_exact.cpp).
enum class Key { Width, Area, Total };
constexpr Key kPreorders[][3] = {
    {Key::Width, Key::Area, Key::Total},
    {Key::Total, Key::Area, Key::Width},
    {Key::Total, Key::Width, Key::Area},
};

}  // namespace

size_t preorders() { return std::size(kPreorders); }

void rankGroup(const std::vector<Buffer>& buffers, const ExactInstance& instance, size_t preorder,
               const std::vector<int32_t>& group, std::vector<int32_t>& rank) {
  // Bytes of the group live in each section its buffers span (as a difference array over that span).
  size_t first = instance.sections, last = 0;
  for (int32_t b : group) first = std::min(first, instance.lo[size_t(b)]), last = std::max(last, instance.hi[size_t(b)]);
  if (first >= last) return;
  std::vector<int64_t> total(last - first + 1, 0);
  for (int32_t b : group) {
    total[instance.lo[size_t(b)] - first] += buffers[size_t(b)].size;
    total[instance.hi[size_t(b)] - first] -= buffers[size_t(b)].size;
  }
  for (size_t s = 1; s < total.size(); ++s) total[s] += total[s - 1];
  // long double holds every int64 exactly and the area (which may not fit in int64) closely enough for a preference.
  auto key = [&](size_t i, Key k) -> long double {
    const long double width = static_cast<long double>(buffers[i].upper) - static_cast<long double>(buffers[i].lower);
    switch (k) {
      case Key::Width: return width;
      case Key::Area: return static_cast<long double>(buffers[i].size) * width;
      case Key::Total:
        return static_cast<long double>(*std::max_element(total.begin() + long(instance.lo[i] - first),
                                                          total.begin() + long(instance.hi[i] - first)));
    }
    return 0;
  };
  std::vector<int32_t> order = group;
  const auto& keys = kPreorders[preorder % preorders()];
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    for (Key k : keys) {
      const long double x = key(size_t(a), k), y = key(size_t(b), k);
      if (x != y) return x > y;
    }
    return a < b;
  });
  for (size_t r = 0; r < order.size(); ++r) rank[size_t(order[r])] = int32_t(r);
}

bool buildExactInstance(const std::vector<Buffer>& buffers, size_t maxPairs, ExactInstance& out) {
  const size_t n = buffers.size();
  // Sweep the endpoints, ends before starts at equal times ([lower, upper) intervals that touch do not share time).
  // A section closes at an end that follows at least one start since the last section closed: the live set just
  // before it is maximal.
  std::vector<std::tuple<int64_t, int, int32_t>> events;  // (time, 0 = end / 1 = start, buffer)
  events.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    events.emplace_back(buffers[i].lower, 1, int32_t(i));
    events.emplace_back(buffers[i].upper, 0, int32_t(i));
  }
  std::sort(events.begin(), events.end());
  out.lo.assign(n, 0);
  out.hi.assign(n, 0);
  size_t sections = 0;
  bool opened = false;
  for (const auto& [time, isStart, b] : events) {
    if (isStart) {
      out.lo[size_t(b)] = sections;  // the next section to close contains it
      opened = true;
    } else {
      if (opened) ++sections, opened = false;
      out.hi[size_t(b)] = sections;
    }
  }
  out.sections = sections;

  std::vector<int32_t> byStart(n);
  std::iota(byStart.begin(), byStart.end(), 0);
  std::sort(byStart.begin(), byStart.end(), [&](int32_t a, int32_t b) { return out.lo[size_t(a)] < out.lo[size_t(b)]; });
  out.conflicts.assign(n, {});
  size_t pairs = 0;
  for (size_t a = 0; a < n; ++a)
    for (size_t c = a + 1; c < n && out.lo[size_t(byStart[c])] < out.hi[size_t(byStart[a])]; ++c) {
      const size_t x = size_t(byStart[a]), y = size_t(byStart[c]);
      out.conflicts[x].push_back(int32_t(y));
      out.conflicts[y].push_back(int32_t(x));
      if (++pairs > maxPairs) return false;
    }

  out.twins.assign(n, {});
  std::vector<int32_t> byRun(n);
  std::iota(byRun.begin(), byRun.end(), 0);
  auto run = [&](int32_t b) { return std::pair(out.lo[size_t(b)], out.hi[size_t(b)]); };
  std::sort(byRun.begin(), byRun.end(), [&](int32_t a, int32_t b) { return run(a) < run(b); });
  for (size_t a = 0, z = 0; a < n; a = z) {
    for (z = a + 1; z < n && run(byRun[z]) == run(byRun[a]); ++z) {}
    for (size_t x = a; x < z; ++x)
      for (size_t y = a; y < z; ++y)
        if (x != y) out.twins[size_t(byRun[x])].push_back(byRun[y]);
  }

  std::vector<int32_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  out.ranks.assign(preorders(), std::vector<int32_t>(n, 0));
  for (size_t p = 0; p < preorders(); ++p) rankGroup(buffers, out, p, all, out.ranks[p]);
  return true;
}

}  // namespace kiln::memory::detail
