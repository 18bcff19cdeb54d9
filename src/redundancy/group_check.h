// Offline check of a redundancy group's stored parity against its members'
// data, as `cairn verify` runs it over every node's directories: every
// parity row is encoded again from the data pieces (the kernels of the
// encode, without MPI) and compared with the stored one, and the group is
// judged as a rebuild would see it.
// Thread-safety: pure functions.
#ifndef CAIRN_REDUNDANCY_GROUP_CHECK_H_
#define CAIRN_REDUNDANCY_GROUP_CHECK_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "redundancy/group_codec.h"

namespace cairn {

// What the checker found of one member: its protected bytes (the payload
// its parity covers; nullopt when missing or damaged) and its parity file
// (null when missing or damaged).
struct GroupMemberData {
  std::optional<std::span<const uint8_t>> payload;
  const GroupParity* parity = nullptr;
};

struct GroupCheck {
  // Members (indices) whose stored rows differ from the re-encode: their
  // parity would rebuild wrong bytes, so a rebuild counts it as lost.
  std::vector<int> parity_wrong;
  // Members whose payload is missing, of the wrong size or fails the
  // header's CRC32Cs.
  std::vector<int> payload_lost;
  // Members whose parity is missing or fails its CRC32Cs.
  std::vector<int> parity_lost;
  // Rows compared, and rows that could not be (a data piece lost).
  int rows_checked = 0;
  int rows_unchecked = 0;
  // Whether a rebuild would bring back every lost payload.
  bool can_rebuild = true;
};

// Checks the group described by `header` (any member's: they agree).
// REQUIRES: members.size() == header.members.size(); header is the decoded
// header of a parity file (scheme, rows and members consistent).
GroupCheck CheckGroupParity(const ParityHeader& header,
                            const std::vector<GroupMemberData>& members);

}  // namespace cairn

#endif  // CAIRN_REDUNDANCY_GROUP_CHECK_H_
