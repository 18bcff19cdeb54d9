// RequestChannel: request/reply messages answered by a server thread on
// every rank, the transport of varray's message protocol (GVR paper
// §III-D2): a client sends an operation to the rank that owns the data, the
// owner's server thread performs it on its own memory and replies.
// NewRequestChannel gives an MPI implementation (MPI_THREAD_MULTIPLE: the
// server thread and the application thread both communicate) and, for a
// one-rank Comm without MPI, a local one that runs the handler on the
// calling thread.
// Thread-safety: Call and Close from the application thread; the handler
// runs on the server thread only, one request at a time.
#ifndef CAIRN_COMM_REQUEST_CHANNEL_H_
#define CAIRN_COMM_REQUEST_CHANNEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "comm/comm.h"
#include "env/env.h"

namespace cairn {

class RequestChannel {
 public:
  // Answers one request (from any rank, this one included). Must not throw.
  using Handler = std::function<std::vector<uint8_t>(std::span<const uint8_t> request)>;

  virtual ~RequestChannel() = default;
  // Sends request to target's server and blocks until its reply arrives.
  virtual Result<std::vector<uint8_t>> Call(int target, std::span<const uint8_t> request) = 0;
  // Collective: once every rank has had its calls answered, stops the
  // servers. Idempotent; the destructor calls it (then without errors).
  virtual Status Close() = 0;
};

// Collective over comm. Starts this rank's server thread (env->StartThread).
// kUnsupported when MPI was initialized below MPI_THREAD_MULTIPLE (the
// message names the level) or the Comm has several ranks without MPI.
Result<std::unique_ptr<RequestChannel>> NewRequestChannel(Comm& comm, Env* env,
                                                          RequestChannel::Handler handler);

}  // namespace cairn

#endif  // CAIRN_COMM_REQUEST_CHANNEL_H_
