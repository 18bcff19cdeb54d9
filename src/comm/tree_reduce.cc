#include "comm/tree_reduce.h"

#include <cstdint>
#include <span>
#include <vector>

namespace cairn {
namespace {

// A message is its length (8 bytes, little-endian), then the bytes; the
// first byte of the bytes says whether the sender's subtree succeeded (1)
// or failed (0, nothing follows), so that a failed rank still answers its
// parent and no rank waits forever.
Status SendBytes(Comm& comm, int dest, const std::string& bytes) {
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(uint64_t{bytes.size()} >> (8 * i));
  CAIRN_RETURN_IF_ERROR(comm.SendRecv(dest, std::span<const uint8_t>(length, 8), Comm::kNoPeer, {}));
  return comm.SendRecv(dest,
                       std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                bytes.size()),
                       Comm::kNoPeer, {});
}

Result<std::string> ReceiveBytes(Comm& comm, int source) {
  uint8_t length[8];
  CAIRN_RETURN_IF_ERROR(comm.SendRecv(Comm::kNoPeer, {}, source, std::span<uint8_t>(length, 8)));
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t{length[i]} << (8 * i);
  std::string bytes(n, '\0');
  CAIRN_RETURN_IF_ERROR(comm.SendRecv(
      Comm::kNoPeer, {}, source, std::span<uint8_t>(reinterpret_cast<uint8_t*>(bytes.data()), n)));
  return bytes;
}

constexpr char kOk = 1;
constexpr char kFailed = 0;

}  // namespace

Result<std::string> AllreduceTree(Comm& comm, TreeReduction& reduction) {
  const int rank = comm.rank();
  const int size = comm.size();
  Status mine = Status::Ok();     // this rank's own merge failure
  bool subtree_failed = false;    // some rank below failed: its Agree says why
  for (int step = 1; step < size; step *= 2) {
    if (rank % (2 * step) == step) {
      const bool failed = !mine.ok() || subtree_failed;
      CAIRN_RETURN_IF_ERROR(
          SendBytes(comm, rank - step, failed ? std::string(1, kFailed) : kOk + reduction.Encode()));
      break;
    }
    if (rank % (2 * step) != 0 || rank + step >= size) continue;
    Result<std::string> message = ReceiveBytes(comm, rank + step);
    if (!message.ok()) return message.status();
    const std::string_view received = *message;
    if (received.empty() || received[0] != kOk) subtree_failed = true;
    if (!mine.ok() || subtree_failed) continue;
    Status merged = reduction.Merge(received.substr(1));
    if (!merged.ok()) mine = merged.Annotate(fmt::format("merging rank {}'s part", rank + step));
  }
  const bool root_has_all = rank == 0 && mine.ok() && !subtree_failed;
  std::string result = root_has_all ? reduction.Finish() : std::string();
  CAIRN_RETURN_IF_ERROR(comm.Broadcast(&result, 0));
  CAIRN_RETURN_IF_ERROR(comm.Agree(mine));
  return result;
}

}  // namespace cairn
