// The log-structured array over messages (paper §III-D2): each rank's log
// is plain memory that only its server thread and its own collective steps
// touch; a client sends each operation to the owner's server, which runs
// the same protocol (a LogClient over a one-rank window of its own log)
// and replies with the status and, for gets, the bytes.
#include <cstring>

#include "base/mutex.h"
#include "comm/request_channel.h"
#include "varray/log_owner.h"
#include "varray/varray.h"

namespace cairn {
namespace {

enum class Op : uint8_t { kPut = 1, kAcc = 2, kGet = 3, kGetFrozen = 4 };

// Request: op, element type (acc), version (get frozen), offset, length,
// then the bytes of a put or acc.
struct RequestHeader {
  Op op;
  uint8_t type;
  uint8_t pad[6];
  int64_t version;
  uint64_t offset;
  uint64_t length;
};
// Reply: status code, message length, then the message and a get's bytes.
struct ReplyHeader {
  int32_t code;
  uint32_t message_length;
};

std::vector<uint8_t> MakeRequest(Op op, uint8_t type, int64_t version, uint64_t offset,
                                 uint64_t length, std::span<const uint8_t> data) {
  RequestHeader h{op, type, {}, version, offset, length};
  std::vector<uint8_t> request(sizeof h + data.size());
  std::memcpy(request.data(), &h, sizeof h);
  if (!data.empty()) std::memcpy(request.data() + sizeof h, data.data(), data.size());
  return request;
}

// Moves a reply's status (and bytes) to the caller.
Status TakeReply(const std::vector<uint8_t>& reply, std::span<uint8_t> into, int rank) {
  ReplyHeader h{};
  if (reply.size() < sizeof h) return Error(Code::kComm, "short reply from rank {}", rank);
  std::memcpy(&h, reply.data(), sizeof h);
  if (h.code != 0) {
    return Status(static_cast<Code>(h.code),
                  std::string(reinterpret_cast<const char*>(reply.data() + sizeof h),
                              std::min<size_t>(h.message_length, reply.size() - sizeof h)));
  }
  if (reply.size() != sizeof h + into.size()) {
    return Error(Code::kComm, "reply of {} bytes from rank {}, {} expected", reply.size(), rank,
                 sizeof h + into.size());
  }
  if (!into.empty()) std::memcpy(into.data(), reply.data() + sizeof h, into.size());
  return Status::Ok();
}

class LogMessageArray final : public VersionedArray {
 public:
  LogMessageArray(std::unique_ptr<Comm> comm, Env* env, const VarrayOptions& options,
                  const Geometry& geometry, const LogLayout& layout)
      : VersionedArray(std::move(comm), env, options, geometry),
        log_(NewLocalRmaWindow(layout.capacity)),
        owner_(log_->local(), layout, local_bytes()),
        server_client_(log_.get(), layout, /*use_cas=*/true) {}
  ~LogMessageArray() override { (void)Close(); }

  Status Init() {
    CAIRN_ASSIGN_OR_RETURN(uint64_t lineage, NewLineage(comm()));
    {
      MutexLock lock(&mu_);
      owner_.Format(lineage);
    }
    CAIRN_ASSIGN_OR_RETURN(channel_, NewRequestChannel(comm(), env(), [this](auto request) {
                             return Serve(request);
                           }));
    return Start();
  }

  std::span<uint8_t> state() override { return log_->local(); }

 protected:
  Status WritePiece(int rank, uint64_t offset, std::span<const uint8_t> data,
                    std::optional<RmaElement> acc) override {
    const Op op = acc ? Op::kAcc : Op::kPut;
    const uint8_t type = acc ? static_cast<uint8_t>(*acc) : 0;
    return Call(rank, MakeRequest(op, type, 0, offset, data.size(), data), {});
  }
  // A get is answered in full by the reply: it is complete before Wait.
  Status StartReadPiece(int rank, uint64_t offset, std::span<uint8_t> into) override {
    return Call(rank, MakeRequest(Op::kGet, 0, 0, offset, into.size(), {}), into);
  }
  Status FinishReads() override { return Status::Ok(); }
  bool reads_pending() const override { return false; }
  Status ReadFrozenPiece(int rank, int64_t version, uint64_t offset,
                         std::span<uint8_t> into) override {
    return Call(rank, MakeRequest(Op::kGetFrozen, 0, version, offset, into.size(), {}), into);
  }
  // The server answers with whatever version its log holds: no client may
  // send a request until every rank's log moved on.
  bool VersionIncNeedsExclusive() const override { return true; }
  Status LocalVersionInc(bool) override {
    MutexLock lock(&mu_);
    return owner_.StartNextVersion(/*may_clean=*/true, [&](int64_t version) -> Status {
      mu_.AssertHeld();  // StartNextVersion calls back under the lock above
      if (!draining()) return Status::Ok();
      std::vector<uint8_t> bytes(local_bytes());
      owner_.Materialize(version, bytes);
      return Evict(version, std::move(bytes));
    });
  }
  Status LocalRestore(int64_t version) override {
    MutexLock lock(&mu_);
    return owner_.RestoreTo(version);
  }
  Status LocalReload() override {
    MutexLock lock(&mu_);
    return owner_.CheckFormat();
  }
  int64_t LocalVersion() const override {
    MutexLock lock(&mu_);
    return owner_.version();
  }
  int64_t LocalOldest() const override {
    MutexLock lock(&mu_);
    return owner_.oldest();
  }
  uint64_t lineage() const override {
    MutexLock lock(&mu_);
    return owner_.Read(LogLayout::kLineage);
  }
  uint64_t memory_bytes() const override {
    MutexLock lock(&mu_);
    return owner_.MemoryBytes();
  }
  uint64_t cleanings() const override {
    MutexLock lock(&mu_);
    return owner_.Read(LogLayout::kCleanings);
  }
  VarrayKind kind() const override { return VarrayKind::kLogMessage; }
  Status CloseImpl() override { return channel_ ? channel_->Close() : Status::Ok(); }

 private:
  Status Call(int rank, const std::vector<uint8_t>& request, std::span<uint8_t> into) {
    CAIRN_ASSIGN_OR_RETURN(std::vector<uint8_t> reply, channel_->Call(rank, request));
    return TakeReply(reply, into, rank);
  }

  // The server thread's handler: one operation on this rank's log.
  std::vector<uint8_t> Serve(std::span<const uint8_t> request) {
    std::vector<uint8_t> reply(sizeof(ReplyHeader));
    Status s = Perform(request, &reply);
    if (!s.ok()) {
      const std::string message = s.message();
      ReplyHeader h{static_cast<int32_t>(s.code()), static_cast<uint32_t>(message.size())};
      reply.resize(sizeof h + message.size());
      std::memcpy(reply.data(), &h, sizeof h);
      std::memcpy(reply.data() + sizeof h, message.data(), message.size());
    }
    return reply;
  }

  Status Perform(std::span<const uint8_t> request, std::vector<uint8_t>* reply) {
    RequestHeader h{};
    if (request.size() < sizeof h) return Error(Code::kComm, "short varray request");
    std::memcpy(&h, request.data(), sizeof h);
    const auto data = request.subspan(sizeof h);
    MutexLock lock(&mu_);
    // The server is the only client of its log: the version is read from
    // the log itself, and its cache stays right (entries carry versions).
    server_client_.SetVersion(owner_.version());
    switch (h.op) {
      case Op::kPut:
        return server_client_.Write(0, h.offset, data, std::nullopt);
      case Op::kAcc:
        return server_client_.Write(0, h.offset, data, static_cast<RmaElement>(h.type));
      case Op::kGet:
        reply->resize(sizeof(ReplyHeader) + h.length);
        CAIRN_RETURN_IF_ERROR(server_client_.StartRead(
            0, h.offset, {reply->data() + sizeof(ReplyHeader), h.length}));
        return server_client_.FinishReads();
      case Op::kGetFrozen:
        reply->resize(sizeof(ReplyHeader) + h.length);
        return server_client_.ReadFrozen(0, h.version, h.offset,
                                         {reply->data() + sizeof(ReplyHeader), h.length});
    }
    return Error(Code::kComm, "unknown varray request {}", static_cast<int>(h.op));
  }

  std::unique_ptr<RmaWindow> log_;
  // Guards the log: the server thread's operations and the application
  // thread's collective steps.
  mutable Mutex mu_;
  LogOwner owner_ GUARDED_BY(mu_);
  LogClient server_client_ GUARDED_BY(mu_);
  std::unique_ptr<RequestChannel> channel_;
};

}  // namespace

Result<std::unique_ptr<VersionedArray>> NewLogMessageArray(std::unique_ptr<Comm> comm, Env* env,
                                                           const VarrayOptions& options,
                                                           const Geometry& geometry) {
  const LogLayout layout = LogLayout::For(geometry, options.keep, options.log_capacity);
  auto array = std::make_unique<LogMessageArray>(std::move(comm), env, options, geometry, layout);
  CAIRN_RETURN_IF_ERROR(array->Init());
  return std::unique_ptr<VersionedArray>(std::move(array));
}

}  // namespace cairn
