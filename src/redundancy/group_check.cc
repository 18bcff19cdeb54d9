#include "redundancy/group_check.h"

#include <algorithm>
#include <cstring>

namespace cairn {
namespace {

RedundancyScheme SchemeOf(ParityScheme stored) {
  switch (stored) {
    case ParityScheme::kPartner: return RedundancyScheme::kPartner;
    case ParityScheme::kRs: return RedundancyScheme::kRs;
    case ParityScheme::kXor: break;
  }
  return RedundancyScheme::kXor;
}

bool PayloadIntact(const ParityHeader& h, int j, const GroupMemberData& m) {
  const ParityMember& info = h.members[static_cast<size_t>(j)];
  return m.payload && m.payload->size() == info.part_size &&
         FirstBadBlock(*m.payload, h.block_size, info.part_crcs) < 0;
}

bool ParityIntact(const ParityHeader& h, int j, const GroupMemberData& m) {
  if (m.parity == nullptr || m.parity->rows.size() < h.RowsBytes()) return false;
  const std::vector<uint32_t>& crcs = h.members[static_cast<size_t>(j)].parity_crcs;
  for (uint32_t p = 0; p < h.parity_rows; ++p) {
    const std::vector<uint32_t> row(crcs.begin() + static_cast<ptrdiff_t>(p * h.RowBlocks()),
                                    crcs.begin() + static_cast<ptrdiff_t>((p + 1) * h.RowBlocks()));
    if (FirstBadBlock(m.parity->Row(p), h.block_size, row) >= 0) return false;
  }
  return true;
}

}  // namespace

GroupCheck CheckGroupParity(const ParityHeader& h, const std::vector<GroupMemberData>& members) {
  const int n = static_cast<int>(members.size());
  const StripeLayout layout(SchemeOf(h.scheme), n, static_cast<int>(h.parity_rows));
  const int d = layout.data_pieces(), r = layout.parity_rows();
  const uint64_t chunk = h.chunk_size;
  GroupCheck out;
  std::vector<bool> lost_parts(n), lost_parity(n);
  for (int j = 0; j < n; ++j) {
    lost_parts[j] = !PayloadIntact(h, j, members[j]);
    lost_parity[j] = !ParityIntact(h, j, members[j]);
    if (lost_parts[j]) out.payload_lost.push_back(j);
    if (lost_parity[j]) out.parity_lost.push_back(j);
  }
  const Combiner combiner(d, r, ParityGenerator(d, r));
  AlignedBuffer rows(static_cast<uint64_t>(r) * chunk), scratch(chunk);
  std::vector<uint8_t*> row_ptrs;
  for (int p = 0; p < r; ++p) row_ptrs.push_back(rows.data() + static_cast<uint64_t>(p) * chunk);
  std::vector<bool> wrong(n, false);
  for (int t = 0; t < layout.stripes(); ++t) {
    bool data_whole = true;
    for (int q = 0; q < d; ++q) data_whole &= !lost_parts[layout.DataMember(t, q)];
    if (!data_whole) {
      out.rows_unchecked += r;
      continue;
    }
    for (int q = 0; q < d; ++q) {
      const GroupMemberData& m = members[layout.DataMember(t, q)];
      combiner.Add(q, PaddedPiece(*m.payload, q * chunk, chunk, scratch), row_ptrs.data(), chunk,
                   q == 0);
    }
    for (int p = 0; p < r; ++p) {
      const int holder = layout.ParityMember(t, p);
      if (lost_parity[holder]) {
        ++out.rows_unchecked;
        continue;
      }
      ++out.rows_checked;
      if (chunk > 0 && std::memcmp(row_ptrs[p], members[holder].parity->Row(p).data(), chunk)) {
        wrong[holder] = true;
      }
    }
  }
  for (int j = 0; j < n; ++j) {
    if (wrong[j]) out.parity_wrong.push_back(j);
    lost_parity[j] = lost_parity[j] || wrong[j];
  }
  out.can_rebuild = layout.CanRebuild(lost_parts, lost_parity);
  return out;
}

}  // namespace cairn
