#include "storage/flusher.h"

namespace cairn {

Flusher::Flusher() : thread_([this] { Run(); }) {}

Flusher::~Flusher() { Shutdown(); }

void Flusher::Add(Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  work_cv_.notify_one();
}

Status Flusher::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return jobs_.empty() && running_ == 0; });
  Status s = first_error_;
  first_error_ = Status::Ok();
  return s;
}

size_t Flusher::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return jobs_.size() + running_;
}

void Flusher::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  work_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Flusher::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping and drained
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    ++running_;
    lock.unlock();
    Status s = job();
    lock.lock();
    --running_;
    if (!s.ok() && first_error_.ok()) first_error_ = s;
    idle_cv_.notify_all();
  }
}

}  // namespace cairn
