#include "comm/request_channel.h"

#include <mpi.h>

#include <chrono>
#include <thread>

#include "base/log.h"
#include "base/mutex.h"
#include "comm/mpi_comm.h"
#include "comm/mpi_error.h"

namespace cairn {
namespace {

// One rank without MPI: the handler runs on the caller's thread.
class LocalChannel final : public RequestChannel {
 public:
  explicit LocalChannel(Handler handler) : handler_(std::move(handler)) {}
  Result<std::vector<uint8_t>> Call(int target, std::span<const uint8_t> request) override {
    if (target != 0) return Error(Code::kInvalidArgument, "request to rank {} of 1", target);
    return handler_(request);
  }
  Status Close() override { return Status::Ok(); }

 private:
  Handler handler_;
};

// Requests and replies travel on two duplicates of the communicator, so a
// server that takes any request never takes a reply meant for the client
// thread of its own rank.
class MpiChannel final : public RequestChannel {
 public:
  MpiChannel(MPI_Comm requests, MPI_Comm replies, Handler handler)
      : requests_(requests), replies_(replies), handler_(std::move(handler)) {}
  ~MpiChannel() override { (void)Close(); }

  Status Start(Env* env) {
    CAIRN_ASSIGN_OR_RETURN(server_, env->StartThread(ThreadOptions{.name = "cairn-requests"}, [this] { Serve(); }));
    return Status::Ok();
  }

  Result<std::vector<uint8_t>> Call(int target, std::span<const uint8_t> request) override {
    if (request.size() > kMaxMessage) {
      return Error(Code::kInvalidArgument, "request of {} bytes to rank {}: at most {}",
                   request.size(), target, kMaxMessage);
    }
    CAIRN_MPI(MPI_Send(request.data(), static_cast<int>(request.size()), MPI_BYTE, target,
                       kRequestTag, requests_),
              "MPI_Send (request)");
    // Polled, yielding between polls: a blocking probe spins inside MPI
    // and, with more threads than cores, starves the server threads that
    // must answer this very call.
    MPI_Message message;
    MPI_Status status;
    for (int flag = 0, idle = 0; !flag;) {
      CAIRN_MPI(MPI_Improbe(target, kReplyTag, replies_, &flag, &message, &status),
                "MPI_Improbe (reply)");
      if (!flag) Pause(++idle);
    }
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    std::vector<uint8_t> reply(static_cast<size_t>(count));
    CAIRN_MPI(MPI_Mrecv(reply.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE),
              "MPI_Mrecv (reply)");
    return reply;
  }

  Status Close() override {
    if (closed_) return Status::Ok();
    closed_ = true;
    // Every rank's calls have been answered once all ranks reach the
    // barrier; then each rank stops its own server.
    Status s;
    int rc = MPI_Barrier(requests_);
    if (rc != MPI_SUCCESS) s = MpiError(rc, "MPI_Barrier (channel close)");
    int rank = 0;
    MPI_Comm_rank(requests_, &rank);
    if (server_ != nullptr) {
      rc = MPI_Send(nullptr, 0, MPI_BYTE, rank, kStopTag, requests_);
      if (rc == MPI_SUCCESS) {
        server_->Join();
      } else if (s.ok()) {
        s = MpiError(rc, "MPI_Send (stop)");
      }
      server_.reset();
    }
    MPI_Comm_free(&requests_);
    MPI_Comm_free(&replies_);
    return s;
  }

 private:
  static constexpr int kRequestTag = 1;
  static constexpr int kReplyTag = 2;
  static constexpr int kStopTag = 3;
  static constexpr uint64_t kMaxMessage = uint64_t{1} << 30;

  // The server loop. A blocking probe would spin a core inside MPI for the
  // array's whole life; polling with a growing pause leaves the core to the
  // application when no request comes (the paper's server spins on
  // MPI_Testany on a core of its own, which this machine does not have).
  void Serve() {
    std::vector<uint8_t> request;
    int idle = 0;
    while (true) {
      int flag = 0;
      MPI_Message message;
      MPI_Status status;
      if (MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, requests_, &flag, &message, &status) !=
          MPI_SUCCESS) {
        Log(LogLevel::kError, "request channel: MPI_Improbe failed; the server stops");
        return;
      }
      if (!flag) {
        Pause(++idle);
        continue;
      }
      idle = 0;
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      request.resize(static_cast<size_t>(count));
      MPI_Mrecv(request.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE);
      if (status.MPI_TAG == kStopTag) return;
      std::vector<uint8_t> reply = handler_(request);
      MPI_Send(reply.data(), static_cast<int>(reply.size()), MPI_BYTE, status.MPI_SOURCE,
               kReplyTag, replies_);
    }
  }
  static void Pause(int idle) {
    if (idle < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(idle < 1024 ? 5 : 100));
    }
  }

  MPI_Comm requests_;
  MPI_Comm replies_;
  Handler handler_;
  std::unique_ptr<Thread> server_;
  bool closed_ = false;
};

}  // namespace

Result<std::unique_ptr<RequestChannel>> NewRequestChannel(Comm& comm, Env* env,
                                                          RequestChannel::Handler handler) {
  MPI_Comm mpi = MpiHandle(comm);
  if (mpi == MPI_COMM_NULL) {
    if (comm.size() == 1) return std::unique_ptr<RequestChannel>(new LocalChannel(handler));
    return Error(Code::kUnsupported, "a request channel over {} ranks needs MPI", comm.size());
  }
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  // The same level on every rank (MPI_Init_thread is collective).
  if (provided < MPI_THREAD_MULTIPLE) {
    return Error(Code::kUnsupported,
                 "the message protocol's server thread needs MPI_THREAD_MULTIPLE, but MPI was "
                 "initialized with level {} (call MPI_Init_thread with MPI_THREAD_MULTIPLE)",
                 provided);
  }
  MPI_Comm requests, replies;
  CAIRN_MPI(MPI_Comm_dup(mpi, &requests), "MPI_Comm_dup (requests)");
  CAIRN_MPI(MPI_Comm_dup(mpi, &replies), "MPI_Comm_dup (replies)");
  MPI_Comm_set_errhandler(requests, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(replies, MPI_ERRORS_RETURN);
  auto channel = std::make_unique<MpiChannel>(requests, replies, std::move(handler));
  // A rank whose thread did not start still joins Close's barrier when the
  // channel goes, so no rank waits there alone.
  CAIRN_RETURN_IF_ERROR(comm.Agree(channel->Start(env)));
  return std::unique_ptr<RequestChannel>(std::move(channel));
}

}  // namespace cairn
