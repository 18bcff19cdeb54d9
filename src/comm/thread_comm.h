// ThreadComm: ranks as threads of one process, a real multi-rank Comm
// without MPI, so that collective code (Comm::Agree, the engine's steps, the
// I/O profiler's protocol) is unit-tested with several ranks that fail
// differently. Test-only: built into cairn_comm_testing, never into
// libcairn. Every collective is an exchange: each rank puts its words in its
// slot, and all read every slot between two barriers.
// Thread-safety: a ThreadGroup is shared by its ranks' threads; each
// ThreadComm belongs to its rank's thread. As with MPI, every rank must call
// the same collectives in the same order.
#ifndef CAIRN_COMM_THREAD_COMM_H_
#define CAIRN_COMM_THREAD_COMM_H_

#include <barrier>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "comm/comm.h"
#include "env/env.h"

namespace cairn {

class ThreadGroup {
 public:
  // node_of_rank[r] is rank r's node; the nodes are 0..N-1.
  explicit ThreadGroup(std::vector<int> node_of_rank);

  int size() const { return static_cast<int>(node_of_rank_.size()); }
  int node(int rank) const { return node_of_rank_[static_cast<size_t>(rank)]; }
  int nodes() const;
  int ranks_on_node(int node) const;
  void Barrier() { barrier_.arrive_and_wait(); }
  void NodeBarrier(int node) { node_barriers_.at(node)->arrive_and_wait(); }
  // Every rank's words, indexed by rank. REQUIRES: called by every rank.
  std::vector<std::vector<int64_t>> Exchange(int rank, std::vector<int64_t> words);
  // Point to point: Post never waits (the message is copied into the
  // receiver's mailbox); Take waits for the oldest message from `from`.
  void Post(int from, int to, std::vector<uint8_t> message);
  std::vector<uint8_t> Take(int from, int to);

 private:
  std::vector<int> node_of_rank_;
  std::barrier<> barrier_;
  std::map<int, std::unique_ptr<std::barrier<>>> node_barriers_;
  // Slot r is written by rank r only, and read by all only between the two
  // barriers of an Exchange: the barriers order every access.
  std::vector<std::vector<int64_t>> slots_;
  Mutex mailbox_mu_;
  CondVar mail_arrived_{&mailbox_mu_};
  // (from, to) -> messages not yet taken, oldest first.
  std::map<std::pair<int, int>, std::deque<std::vector<uint8_t>>> mailboxes_
      GUARDED_BY(mailbox_mu_);
};

class ThreadComm final : public Comm {
 public:
  // group must outlive the comm.
  ThreadComm(ThreadGroup* group, int rank) : group_(group), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return group_->size(); }
  int node() const override { return group_->node(rank_); }
  int nodes() const override { return group_->nodes(); }
  int ranks_on_node() const override { return group_->ranks_on_node(node()); }

  Status Barrier() override;
  Status NodeBarrier() override;
  Status AllreduceMin(std::vector<int64_t>& values) override;
  Status AllreduceMax(std::vector<int64_t>& values) override;
  Status AllreduceSum(std::vector<double>& values) override;
  Result<std::vector<int64_t>> Allgather(int64_t value) override;
  Result<std::vector<int64_t>> AllgatherWords(const std::vector<int64_t>& values) override;
  Status Broadcast(std::string* bytes, int root) override;
  Status SendRecv(int dest, std::span<const uint8_t> send, int source,
                  std::span<uint8_t> recv) override;

 private:
  ThreadGroup* group_;
  int rank_;
};

// Runs body(comm) once per rank, each on a thread of its own (started
// through env) with that rank's ThreadComm over node_of_rank, and returns
// when all have returned. The ranks start only once every thread exists: if
// env refuses one, no body runs and the refusal is returned.
Status RunRanks(Env* env, const std::vector<int>& node_of_rank,
                const std::function<void(Comm&)>& body);

}  // namespace cairn

#endif  // CAIRN_COMM_THREAD_COMM_H_
