// Flusher: runs background jobs (drains of committed versions to slower
// tiers) on one thread of its own, in submission order, with the lifecycle of
// LLNL/AXL: Add, Wait, and an orderly Shutdown. A job that fails does not
// stop later ones; Wait reports the first failure since the previous Wait.
// Thread-safety: all methods are thread-safe; jobs run on the flusher thread.
#ifndef CAIRN_STORAGE_FLUSHER_H_
#define CAIRN_STORAGE_FLUSHER_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "base/status.h"

namespace cairn {

class Flusher {
 public:
  using Job = std::function<Status()>;

  Flusher();
  ~Flusher();  // Shutdown()
  Flusher(const Flusher&) = delete;
  Flusher& operator=(const Flusher&) = delete;

  void Add(Job job);
  // Blocks until every job added so far has run; the first error among them.
  Status Wait();
  // Jobs queued or running.
  size_t pending() const;
  // Runs what is queued, then stops the thread. Idempotent.
  void Shutdown();

 private:
  void Run();

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // jobs added or stopping
  std::condition_variable idle_cv_;  // a job finished
  std::deque<Job> jobs_;             // GUARDED_BY(mu_)
  size_t running_ = 0;               // GUARDED_BY(mu_)
  bool stopping_ = false;            // GUARDED_BY(mu_)
  Status first_error_;               // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace cairn

#endif  // CAIRN_STORAGE_FLUSHER_H_
