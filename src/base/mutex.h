// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with
// the annotations clang's -Wthread-safety needs (libstdc++'s std::mutex has
// none), after LevelDB's port::Mutex. Members a Mutex guards say so with
// GUARDED_BY(mu_) (base/thread_annotations.h).
// Thread-safety: a Mutex and a CondVar are shared between threads by design;
// a MutexLock belongs to the thread that made it.
#ifndef CAIRN_BASE_MUTEX_H_
#define CAIRN_BASE_MUTEX_H_

#include <condition_variable>
#include <mutex>

#include "base/thread_annotations.h"

namespace cairn {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  // Tells the analysis the lock is held where it cannot see it (no check
  // at run time: std::mutex does not know its owner).
  void AssertHeld() ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for its scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable bound to one Mutex. Wait with the mutex held, in a
// loop over the condition (wake-ups may be spurious):
//   MutexLock lock(&mu_);
//   while (!ready_) cv_.Wait();
class CondVar {
 public:
  explicit CondVar(Mutex* mu) : mu_(mu) {}
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases the mutex while waiting; holds it again on return.
  // REQUIRES: the mutex is held.
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // the caller's lock again
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  Mutex* const mu_;
  std::condition_variable cv_;
};

}  // namespace cairn

#endif  // CAIRN_BASE_MUTEX_H_
