#include "storage/flusher.h"

#include <algorithm>
#include <vector>

namespace cairn {

Result<std::unique_ptr<Flusher>> Flusher::Start(Env* env, const ThreadOptions& thread) {
  std::unique_ptr<Flusher> flusher(new Flusher());
  Flusher* self = flusher.get();
  CAIRN_ASSIGN_OR_RETURN(flusher->thread_, env->StartThread(thread, [self] { self->Run(); }));
  return flusher;
}

Flusher::~Flusher() { Shutdown(); }

void Flusher::Add(Job job) { AddSuperseding("", std::move(job), nullptr); }

void Flusher::AddSuperseding(const std::string& key, Job job, Dropped dropped,
                             size_t queued_limit) {
  std::vector<Dropped> superseded;
  {
    MutexLock lock(&mu_);
    jobs_.push_back({key, std::move(job), std::move(dropped), holding_});
    if (!key.empty()) {
      size_t same_key = 0;
      for (const Queued& q : jobs_) same_key += q.key == key;
      // The queue is in submission order: the oldest of the key go first.
      for (auto it = jobs_.begin(); same_key > std::max<size_t>(queued_limit, 1);) {
        if (it->key != key) {
          ++it;
          continue;
        }
        if (it->dropped) superseded.push_back(std::move(it->dropped));
        it = jobs_.erase(it);
        --same_key;
      }
    }
  }
  work_cv_.Signal();
  for (Dropped& d : superseded) d();  // unlocked: it may take the caller's locks
}

void Flusher::HoldNewJobs() {
  MutexLock lock(&mu_);
  holding_ = true;
}

void Flusher::ReleaseHeld() {
  {
    MutexLock lock(&mu_);
    ReleaseHeldLocked();
  }
  work_cv_.Signal();
}

void Flusher::ReleaseHeldLocked() {
  holding_ = false;
  for (Queued& q : jobs_) q.held = false;
}

Status Flusher::Wait() {
  MutexLock lock(&mu_);
  ReleaseHeldLocked();
  work_cv_.Signal();
  while (!jobs_.empty() || running_ != 0) idle_cv_.Wait();
  Status s = first_error_;
  first_error_ = Status::Ok();
  return s;
}

size_t Flusher::pending() const {
  MutexLock lock(&mu_);
  return jobs_.size() + running_;
}

void Flusher::Shutdown() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  work_cv_.SignalAll();
  if (thread_) {
    thread_->Join();
    thread_.reset();
  }
}

void Flusher::Run() {
  MutexLock lock(&mu_);
  for (;;) {
    // Jobs are held in submission order, so a held front holds them all.
    while (!stopping_ && (jobs_.empty() || jobs_.front().held)) work_cv_.Wait();
    if (jobs_.empty()) return;  // stopping and drained
    Job job = std::move(jobs_.front().job);
    jobs_.pop_front();
    ++running_;
    // The job runs unlocked: Add and Wait must not wait for it.
    mu_.Unlock();
    Status s = job();
    mu_.Lock();
    --running_;
    if (!s.ok() && first_error_.ok()) first_error_ = s;
    idle_cv_.SignalAll();
  }
}

}  // namespace cairn
