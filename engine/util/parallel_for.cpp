#include "util/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "util/process_limits.h"

namespace kiln {
namespace {

size_t threadsWanted() {
  size_t n = std::max(1u, std::thread::hardware_concurrency());
  if (const char* env = std::getenv("KILN_THREADS")) {
    size_t cap = 0;
    const auto [end, ec] = std::from_chars(env, env + std::strlen(env), cap);
    if (ec == std::errc() && *end == '\0' && cap >= 1) n = std::min(n, cap);
  }
  if (addressSpaceLimited()) n = 1;
  return std::min<size_t>(n, 64);
}

// One loop at a time: its pieces are claimed by counter, by the caller and by every woken worker alike.
struct Loop {
  const std::function<void(size_t, size_t)>* body = nullptr;
  size_t n = 0, piece = 0, pieces = 0;
  std::atomic<size_t> next{0};
  std::atomic<size_t> unfinished{0};
  std::exception_ptr error;
  std::mutex errorMutex;

  // Runs pieces until none is left.
  void work() {
    for (size_t i; (i = next.fetch_add(1)) < pieces;) {
      const size_t begin = i * piece, end = std::min(n, begin + piece);
      try {
        (*body)(begin, end);
      } catch (...) {
        std::lock_guard lock(errorMutex);
        if (!error) error = std::current_exception();
      }
      unfinished.fetch_sub(1);
    }
  }
};

class Pool {
 public:
  explicit Pool(size_t workers) {
    for (size_t i = 0; i < workers; ++i) {
      try {
        threads_.emplace_back([this] { serve(); });
      } catch (const std::system_error&) {
        break;  // (no more threads to be had: the loops use those that started)
      }
    }
  }
  size_t threads() const { return threads_.size() + 1; }

  // False when another loop holds the pool (the caller then runs its loop alone).
  bool run(Loop& loop) {
    std::unique_lock busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard lock(mutex_);
      loop_ = &loop;
      ++generation_;
    }
    wake_.notify_all();
    loop.work();
    std::unique_lock lock(mutex_);
    loop_ = nullptr;  // a worker that wakes late finds nothing to join
    // Every piece done and no worker still inside work(): `loop` is the caller's and goes next.
    done_.wait(lock, [&] { return loop.unfinished.load() == 0 && inside_ == 0; });
    return true;
  }

 private:
  void serve() {
    uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      Loop* loop = loop_;
      if (!loop) continue;
      ++inside_;
      lock.unlock();
      loop->work();
      lock.lock();
      --inside_;
      done_.notify_all();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex busy_;  // held by the loop using the pool
  std::mutex mutex_;  // loop_, generation_, inside_
  std::condition_variable wake_, done_;
  Loop* loop_ = nullptr;
  uint64_t generation_ = 0;
  size_t inside_ = 0;
};

Pool* pool() {
  // Never destroyed: its threads wait for work until the process ends (exit does not wait for them).
  static Pool* p = [] { const size_t n = threadsWanted(); return n > 1 ? new Pool(n - 1) : nullptr; }();
  return p;
}

}  // namespace

size_t parallelThreads() {
  Pool* p = pool();
  return p ? p->threads() : 1;
}

void parallelFor(size_t n, size_t minPiece, size_t align, const std::function<void(size_t, size_t)>& body) {
  if (n == 0) return;
  align = std::max<size_t>(align, 1);
  minPiece = std::max(minPiece, align);
  const size_t threads = n >= 2 * minPiece ? parallelThreads() : 1;
  if (threads == 1) {
    body(0, n);
    return;
  }
  Loop loop;
  loop.body = &body;
  loop.n = n;
  // Four pieces a thread (each a multiple of align), claimed as threads come free: a worker that gets no core at
  // once (a recorded compile's history writer may hold it) leaves more of them to the caller instead of making the
  // caller wait for an even share.
  const size_t share = (n + 4 * threads - 1) / (4 * threads);
  loop.piece = std::max(minPiece, (share + align - 1) / align * align);
  loop.pieces = (n + loop.piece - 1) / loop.piece;
  loop.unfinished = loop.pieces;
  if (!pool()->run(loop)) {
    body(0, n);
    return;
  }
  if (loop.error) std::rethrow_exception(loop.error);
}

}  // namespace kiln
