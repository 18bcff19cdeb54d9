// Comm: the collective operations Cairn needs, and the (virtual) node
// topology. The MPI implementation (mpi_comm.h) is the only code in Cairn
// that calls MPI; SingleComm serves processes without MPI and unit tests.
// Every collective must be called by all ranks in the same order.
// Thread-safety: a Comm is used from the application's thread only.
#ifndef CAIRN_COMM_COMM_H_
#define CAIRN_COMM_COMM_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn {

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Node this rank runs on (0..nodes()-1), real or virtual.
  virtual int node() const = 0;
  virtual int nodes() const = 0;
  // Ranks that share this rank's node.
  virtual int ranks_on_node() const = 0;

  virtual Status Barrier() = 0;
  // A barrier of this rank's (virtual) node only.
  virtual Status NodeBarrier() = 0;
  // Element-wise minimum / maximum / sum over ranks, in place.
  virtual Status AllreduceMin(std::vector<int64_t>& values) = 0;
  virtual Status AllreduceMax(std::vector<int64_t>& values) = 0;
  virtual Status AllreduceSum(std::vector<double>& values) = 0;
  // Every rank's value, indexed by rank.
  virtual Result<std::vector<int64_t>> Allgather(int64_t value) = 0;
  // Every rank's values, rank-major: rank r's values.size() words start at
  // r * values.size(). REQUIRES: the same values.size() on every rank.
  virtual Result<std::vector<int64_t>> AllgatherWords(const std::vector<int64_t>& values) = 0;
  // Replaces *bytes on every rank with root's. REQUIRES: 0 <= root < size().
  virtual Status Broadcast(std::string* bytes, int root) = 0;

  // Point to point, for the redundancy groups (redundancy/): sends `send` to
  // rank dest and receives exactly recv.size() bytes from rank source in one
  // step, so that ranks exchanging in a ring never wait on each other. dest
  // or source kNoPeer leaves that half out (a plain send or receive).
  // Messages between two ranks arrive in the order sent. Not collective:
  // only the two ends take part, and each must make the matching call.
  // kComm naming the peer when its message has another length (the message
  // is consumed, so later ones still match); kInvalidArgument for a peer
  // out of range. Buffers of any size (MPI moves them in pieces of 1 GiB).
  static constexpr int kNoPeer = -1;
  virtual Status SendRecv(int dest, std::span<const uint8_t> send, int source,
                          std::span<uint8_t> recv) = 0;

  // A communicator over the same ranks and (virtual) nodes whose messages
  // never mix with this one's, for use by another thread while this one is
  // in use (redundancy parity is encoded on Cairn's flusher thread).
  // Collective. kUnsupported when two threads cannot communicate at once:
  // MPI initialised below MPI_THREAD_MULTIPLE, and the in-process comms.
  virtual Result<std::unique_ptr<Comm>> DupForThread();

  // Convenience over AllreduceMin.
  Result<int64_t> Min(int64_t value);
  Result<int64_t> Max(int64_t value);
  Result<bool> AllTrue(bool value);

  // The one way a collective step agrees on its outcome. Every rank passes
  // its own status; every rank gets ok when all succeeded, else the same
  // error on every rank: the code and message of the lowest failing rank,
  // prefixed "rank R: " when there are several ranks (a failing rank whose
  // own cause differs gets it appended). Ranks
  // that went on alone after a local failure would wait forever in the
  // next collective, so every collective step that can fail locally ends
  // with this call. *detail, if given, says more about the failures.
  struct AgreeDetail {
    int failed_ranks = 0;       // how many ranks failed
    bool any_no_space = false;  // some rank failed with kNoSpace
  };
  Status Agree(const Status& local, AgreeDetail* detail = nullptr);

 protected:
  // The argument checks and the length error every SendRecv shares.
  Status CheckPeers(int dest, int source) const;
  Status LengthMismatch(int source, uint64_t sent, uint64_t expected) const;
};

std::unique_ptr<Comm> NewSingleComm();

}  // namespace cairn

#endif  // CAIRN_COMM_COMM_H_
