// Flusher: runs background jobs (drains of committed versions to slower
// tiers) on one thread of its own, in submission order, with the lifecycle of
// LLNL/AXL: Add, Wait, and an orderly Shutdown. A job that fails does not
// stop later ones; Wait reports the first failure since the previous Wait.
// A job added with a key supersedes the queued jobs of the same key that
// have not started beyond the newest `queued_limit`: when checkpoints come
// faster than they drain, the flusher works on the newest versions (as many
// as the target tier keeps) instead of falling behind without bound.
// Thread-safety: all methods are thread-safe; jobs run on the flusher thread.
#ifndef CAIRN_STORAGE_FLUSHER_H_
#define CAIRN_STORAGE_FLUSHER_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "base/mutex.h"
#include "base/status.h"
#include "env/env.h"

namespace cairn {

class Flusher {
 public:
  using Job = std::function<Status()>;

  // Starts the flusher thread through env (which must outlive the
  // flusher), named and niced as `thread` says; env's error when it cannot
  // start a thread.
  static Result<std::unique_ptr<Flusher>> Start(Env* env, const ThreadOptions& thread);
  ~Flusher();  // Shutdown()
  Flusher(const Flusher&) = delete;
  Flusher& operator=(const Flusher&) = delete;

  // Runs when a queued job is superseded instead of run (e.g. to release
  // what the job would have read).
  using Dropped = std::function<void()>;

  void Add(Job job) EXCLUDES(mu_);
  // As Add; of the queued jobs of the same key (not yet started, this one
  // included), the oldest beyond the newest `queued_limit` (at least 1) are
  // dropped: their `dropped` runs, on the calling thread, before Add returns.
  void AddSuperseding(const std::string& key, Job job, Dropped dropped,
                      size_t queued_limit = 1) EXCLUDES(mu_);
  // Jobs added from now until ReleaseHeld() start no earlier than that
  // (or than a Wait), in their order; jobs added before run as usual, and
  // superseding applies to held jobs too. A checkpoint call holds the
  // background work it queues (the ECC encode, drains), so that this work
  // never takes a core from the rest of the call: on a node whose cores are
  // all busy, an encode started at the commit slowed the call by up to 40 %.
  // Not nested.
  void HoldNewJobs() EXCLUDES(mu_);
  void ReleaseHeld() EXCLUDES(mu_);
  // Releases the held jobs and blocks until every job added so far has run;
  // the first error among them.
  Status Wait() EXCLUDES(mu_);
  // Jobs queued or running.
  size_t pending() const EXCLUDES(mu_);
  // Runs what is queued, then stops the thread. Idempotent. REQUIRES: not
  // called from a job.
  void Shutdown() EXCLUDES(mu_);

 private:
  Flusher() = default;
  void Run() EXCLUDES(mu_);

  mutable Mutex mu_;
  CondVar work_cv_{&mu_};  // jobs added or stopping
  CondVar idle_cv_{&mu_};  // a job finished
  struct Queued {
    std::string key;  // "" for jobs that nothing supersedes
    Job job;
    Dropped dropped;
    bool held = false;  // added under HoldNewJobs: not to start yet
  };
  // Marks every queued job startable.
  void ReleaseHeldLocked() REQUIRES(mu_);

  std::deque<Queued> jobs_ GUARDED_BY(mu_);
  bool holding_ GUARDED_BY(mu_) = false;
  size_t running_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  Status first_error_ GUARDED_BY(mu_);
  // Set once by Start, joined and reset by the first Shutdown, which only
  // the owner calls.
  std::unique_ptr<Thread> thread_;
};

}  // namespace cairn

#endif  // CAIRN_STORAGE_FLUSHER_H_
