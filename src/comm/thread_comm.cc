#include "comm/thread_comm.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <latch>

namespace cairn {

ThreadGroup::ThreadGroup(std::vector<int> node_of_rank)
    : node_of_rank_(std::move(node_of_rank)),
      barrier_(static_cast<std::ptrdiff_t>(node_of_rank_.size())),
      slots_(node_of_rank_.size()) {
  for (int n = 0; n < nodes(); ++n) {
    node_barriers_[n] = std::make_unique<std::barrier<>>(ranks_on_node(n));
  }
}

int ThreadGroup::nodes() const {
  int n = 0;
  for (int node : node_of_rank_) n = std::max(n, node + 1);
  return n;
}

int ThreadGroup::ranks_on_node(int node) const {
  return static_cast<int>(std::count(node_of_rank_.begin(), node_of_rank_.end(), node));
}

std::vector<std::vector<int64_t>> ThreadGroup::Exchange(int rank, std::vector<int64_t> words) {
  slots_[static_cast<size_t>(rank)] = std::move(words);
  barrier_.arrive_and_wait();
  std::vector<std::vector<int64_t>> all = slots_;
  barrier_.arrive_and_wait();  // nobody refills a slot before all have read
  return all;
}

void ThreadGroup::Post(int from, int to, std::vector<uint8_t> message) {
  MutexLock lock(&mailbox_mu_);
  mailboxes_[{from, to}].push_back(std::move(message));
  mail_arrived_.SignalAll();
}

std::vector<uint8_t> ThreadGroup::Take(int from, int to) {
  MutexLock lock(&mailbox_mu_);
  auto& box = mailboxes_[{from, to}];
  while (box.empty()) mail_arrived_.Wait();
  std::vector<uint8_t> message = std::move(box.front());
  box.pop_front();
  return message;
}

namespace {

template <typename Op>
void ReduceInto(std::vector<int64_t>& values, const std::vector<std::vector<int64_t>>& all,
                Op op) {
  for (size_t i = 0; i < values.size(); ++i) {
    for (const auto& words : all) values[i] = op(values[i], words[i]);
  }
}

}  // namespace

Status ThreadComm::Barrier() {
  group_->Barrier();
  return Status::Ok();
}

Status ThreadComm::NodeBarrier() {
  group_->NodeBarrier(node());
  return Status::Ok();
}

Status ThreadComm::AllreduceMin(std::vector<int64_t>& values) {
  ReduceInto(values, group_->Exchange(rank_, values),
             [](int64_t a, int64_t b) { return std::min(a, b); });
  return Status::Ok();
}

Status ThreadComm::AllreduceMax(std::vector<int64_t>& values) {
  ReduceInto(values, group_->Exchange(rank_, values),
             [](int64_t a, int64_t b) { return std::max(a, b); });
  return Status::Ok();
}

Status ThreadComm::AllreduceSum(std::vector<double>& values) {
  std::vector<int64_t> words;
  for (double d : values) words.push_back(std::bit_cast<int64_t>(d));
  auto all = group_->Exchange(rank_, words);
  // Summed in rank order on every rank, so that every rank gets the same bits.
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = 0;
    for (const auto& w : all) values[i] += std::bit_cast<double>(w[i]);
  }
  return Status::Ok();
}

Result<std::vector<int64_t>> ThreadComm::Allgather(int64_t value) {
  return AllgatherWords({value});
}

Result<std::vector<int64_t>> ThreadComm::AllgatherWords(const std::vector<int64_t>& values) {
  std::vector<int64_t> out;
  for (const auto& w : group_->Exchange(rank_, values)) out.insert(out.end(), w.begin(), w.end());
  return out;
}

Status ThreadComm::Broadcast(std::string* bytes, int root) {
  if (root < 0 || root >= size()) {
    return Error(Code::kInvalidArgument, "broadcast root {} is not a rank of {}", root, size());
  }
  // Word 0 is the length; the bytes follow, padded to whole words.
  std::vector<int64_t> words;
  if (rank_ == root) {
    words.assign(1 + (bytes->size() + 7) / 8, 0);
    words[0] = static_cast<int64_t>(bytes->size());
    std::memcpy(words.data() + 1, bytes->data(), bytes->size());
  }
  auto all = group_->Exchange(rank_, std::move(words));
  const auto& from = all[static_cast<size_t>(root)];
  bytes->assign(reinterpret_cast<const char*>(from.data() + 1), static_cast<size_t>(from[0]));
  return Status::Ok();
}

Status ThreadComm::SendRecv(int dest, std::span<const uint8_t> send, int source,
                            std::span<uint8_t> recv) {
  CAIRN_RETURN_IF_ERROR(CheckPeers(dest, source));
  if (dest != kNoPeer) group_->Post(rank_, dest, std::vector<uint8_t>(send.begin(), send.end()));
  if (source == kNoPeer) return Status::Ok();
  std::vector<uint8_t> message = group_->Take(source, rank_);
  if (message.size() != recv.size()) return LengthMismatch(source, message.size(), recv.size());
  std::copy(message.begin(), message.end(), recv.begin());
  return Status::Ok();
}

Status RunRanks(Env* env, const std::vector<int>& node_of_rank,
                const std::function<void(Comm&)>& body) {
  ThreadGroup group(node_of_rank);
  // A rank that ran while another never started would wait for it forever
  // in its first collective: all start together, or none does.
  std::latch started(1);
  bool run = false;  // written before started.count_down(), read after wait()
  std::vector<std::unique_ptr<Thread>> threads;
  Status refused;
  for (int r = 0; r < group.size() && refused.ok(); ++r) {
    auto thread = env->StartThread(ThreadOptions{.name = "cairn-rank"}, [&, r] {
      started.wait();
      if (!run) return;
      ThreadComm comm(&group, r);
      body(comm);
    });
    if (thread.ok()) {
      threads.push_back(std::move(thread).value());
    } else {
      refused = thread.status().Annotate(fmt::format("starting rank {}", r));
    }
  }
  run = refused.ok();
  started.count_down();
  for (auto& t : threads) t->Join();
  return refused;
}

}  // namespace cairn
