#include "redundancy/group_codec.h"

#include <algorithm>
#include <cstring>

#include "codec/crc32c.h"
#include "format/layout.h"

namespace cairn {
namespace {

ParityScheme StoredScheme(RedundancyScheme scheme) {
  switch (scheme) {
    case RedundancyScheme::kPartner: return ParityScheme::kPartner;
    case RedundancyScheme::kRs: return ParityScheme::kRs;
    default: return ParityScheme::kXor;
  }
}

// Where a group member's rank sits: the members' ranks and the layout.
struct GroupView {
  const RedundancyGroup& group;
  StripeLayout layout;
  int index;  // this rank's member index

  int Rank(int member) const { return group.members[static_cast<size_t>(member)]; }
};

GroupView ViewOf(const Comm& comm, const GroupPlan& plan, const RedundancySettings& s) {
  const RedundancyGroup& group = plan.GroupOf(comm.rank());
  return GroupView{group, StripeLayout(s.scheme, static_cast<int>(group.members.size()), s.parity),
                   plan.index_of_rank[static_cast<size_t>(comm.rank())]};
}

// Bytes per piece and parity row: the group's largest part cut into
// data_pieces(), rounded up so that every piece stays aligned.
uint64_t ChunkSize(uint64_t largest_part, int data_pieces) {
  const auto pieces = static_cast<uint64_t>(data_pieces);
  return AlignUp((largest_part + pieces - 1) / pieces, kCombineAlign);
}

// Pointers to `count` rows of `length` bytes side by side from base.
std::vector<uint8_t*> RowPointers(uint8_t* base, int count, uint64_t length) {
  std::vector<uint8_t*> out;
  for (int p = 0; p < count; ++p) out.push_back(base + static_cast<uint64_t>(p) * length);
  return out;
}

// Resizes b to exactly n bytes, keeping it (and its faulted pages) when it
// already has that size.
void Fit(AlignedBuffer& b, uint64_t n) {
  if (b.size() != n) b = AlignedBuffer(n);
}

// Every member's `mine`, by member index, passed around the ring in
// members - 1 steps. lengths[i]: member i's length.
Result<std::vector<std::vector<uint8_t>>> RingAllgather(Comm& comm, const GroupView& v,
                                                        std::vector<uint8_t> mine,
                                                        const std::vector<uint64_t>& lengths) {
  const int n = v.layout.members();
  std::vector<std::vector<uint8_t>> all(static_cast<size_t>(n));
  all[static_cast<size_t>(v.index)] = std::move(mine);
  const int right = v.Rank((v.index + 1) % n), left = v.Rank((v.index + n - 1) % n);
  for (int s = 1; s < n; ++s) {
    const auto forward = static_cast<size_t>((v.index - s + 1 + n) % n);
    const auto arriving = static_cast<size_t>((v.index - s + n) % n);
    all[arriving].resize(lengths[arriving]);
    CAIRN_RETURN_IF_ERROR(comm.SendRecv(right, all[forward], left, all[arriving]));
  }
  return all;
}

std::vector<uint8_t> CrcBytes(const std::vector<uint32_t>& crcs) {
  std::vector<uint8_t> bytes(crcs.size() * 4);
  if (!crcs.empty()) std::memcpy(bytes.data(), crcs.data(), bytes.size());
  return bytes;
}

std::vector<uint32_t> CrcsOf(const std::vector<uint8_t>& bytes) {
  std::vector<uint32_t> crcs(bytes.size() / 4);
  if (!crcs.empty()) std::memcpy(crcs.data(), bytes.data(), bytes.size());
  return crcs;
}

// ---- Rebuild.

// What every rank tells the others before a rebuild, gathered job-wide.
enum HeaderState : int64_t { kHeaderMissing = 0, kHeaderValid = 1, kHeaderOtherLayout = 2 };
struct RankState {
  int64_t header = kHeaderMissing;
  int64_t digest = 0;  // of the header's group table, when valid
  int64_t node = 0;
  int64_t has_part = 0;
  int64_t part_ok = 0;    // after the header check
  int64_t parity_ok = 0;  // rows match their CRC32Cs
};

// The header, checked against this version and this plan.
HeaderState CheckHeader(const GroupView& v, const RedundancySettings& s, int64_t version,
                        const GroupParity* parity) {
  if (parity == nullptr) return kHeaderMissing;
  const ParityHeader& h = parity->header;
  if (h.version != version) return kHeaderMissing;  // another version's: useless here
  bool same = h.scheme == StoredScheme(s.scheme) &&
              h.parity_rows == static_cast<uint32_t>(v.layout.parity_rows()) &&
              h.members.size() == v.group.members.size() &&
              h.index == static_cast<uint32_t>(v.index) &&
              h.group == static_cast<uint32_t>(v.group.id);
  for (size_t i = 0; same && i < h.members.size(); ++i) {
    same = h.members[i].rank == static_cast<uint32_t>(v.group.members[i]);
  }
  return same && parity->rows.size() == h.RowsBytes() ? kHeaderValid : kHeaderOtherLayout;
}

// The group table's CRC32C: the same in every member's header.
int64_t TableDigest(ParityHeader h) {
  h.index = 0;
  const std::string bytes = EncodeParityHeader(h);
  return Crc32c(bytes.data(), bytes.size());
}

bool RowsIntact(const GroupParity& parity) {
  const ParityHeader& h = parity.header;
  const auto& crcs = h.members[h.index].parity_crcs;
  const uint64_t per_row = h.RowBlocks();
  for (uint32_t p = 0; p < h.parity_rows; ++p) {
    std::vector<uint32_t> row(crcs.begin() + static_cast<std::ptrdiff_t>(p * per_row),
                              crcs.begin() + static_cast<std::ptrdiff_t>((p + 1) * per_row));
    if (FirstBadBlock(parity.Row(p), h.block_size, row) >= 0) return false;
  }
  return true;
}

// Every rank's `mine` words, handed to assign(states[r], words of rank r).
template <typename Assign>
Status GatherStates(Comm& comm, const std::vector<int64_t>& mine, std::vector<RankState>* states,
                    Assign assign) {
  CAIRN_ASSIGN_OR_RETURN(std::vector<int64_t> all, comm.AllgatherWords(mine));
  states->resize(all.size() / mine.size());
  for (size_t r = 0; r < states->size(); ++r) assign((*states)[r], all.data() + r * mine.size());
  return Status::Ok();
}

std::string Join(const std::vector<int64_t>& values) {
  std::string out;
  for (int64_t v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

// kMismatch when some rank's parity belongs to other groups or another
// scheme; kCorrupt when the members of a group hold different tables.
Status CheckHeadersAgree(const GroupPlan& plan, const std::vector<RankState>& states) {
  std::vector<int64_t> other;
  for (size_t r = 0; r < states.size(); ++r) {
    if (states[r].header == kHeaderOtherLayout) other.push_back(static_cast<int64_t>(r));
  }
  if (!other.empty()) {
    return Error(Code::kMismatch,
                 "the parity of rank{} {} was written by other redundancy groups or another "
                 "scheme than [redundancy] and the topology give now",
                 other.size() == 1 ? "" : "s", Join(other));
  }
  for (const RedundancyGroup& g : plan.groups) {
    std::vector<int64_t> valid;
    for (int r : g.members) {
      if (states[static_cast<size_t>(r)].header == kHeaderValid) valid.push_back(r);
    }
    for (int64_t r : valid) {
      if (states[static_cast<size_t>(r)].digest != states[static_cast<size_t>(valid[0])].digest) {
        return Error(Code::kCorrupt,
                     "redundancy group {}: the parity headers of ranks {} disagree (written by "
                     "different checkpoints)",
                     g.id, Join(valid));
      }
    }
  }
  return Status::Ok();
}

// The same verdict on every rank: each group either has nothing to
// rebuild or keeps enough to rebuild all it lost.
Status CheckSurvivable(const GroupPlan& plan, const RedundancySettings& settings,
                       const std::vector<RankState>& states) {
  for (const RedundancyGroup& g : plan.groups) {
    const StripeLayout layout(settings.scheme, static_cast<int>(g.members.size()), settings.parity);
    std::vector<bool> lost_parts, lost_parity;
    std::vector<int64_t> part_ranks, part_nodes, parity_ranks;
    bool any_header = false;
    for (int r : g.members) {
      const RankState& st = states[static_cast<size_t>(r)];
      any_header |= st.header == kHeaderValid;
      lost_parts.push_back(st.part_ok == 0);
      lost_parity.push_back(st.parity_ok == 0);
      if (st.part_ok == 0) {
        part_ranks.push_back(r);
        if (std::find(part_nodes.begin(), part_nodes.end(), st.node) == part_nodes.end()) {
          part_nodes.push_back(st.node);
        }
      }
      if (st.parity_ok == 0) parity_ranks.push_back(r);
    }
    if (part_ranks.empty() && parity_ranks.empty()) continue;
    if (!any_header && !part_ranks.empty()) {
      return Error(Code::kCorrupt,
                   "redundancy group {} lost the parts of ranks {} (nodes {}) and no member "
                   "holds a valid parity header to rebuild them",
                   g.id, Join(part_ranks), Join(part_nodes));
    }
    if (any_header && !layout.CanRebuild(lost_parts, lost_parity)) {
      return Error(Code::kCorrupt,
                   "redundancy group {} (ranks {}) cannot be rebuilt: parts lost on ranks [{}] "
                   "(nodes [{}]), parity lost or corrupt on ranks [{}]; {} survives {} lost "
                   "member{} per group{}",
                   g.id, Join({g.members.begin(), g.members.end()}), Join(part_ranks),
                   Join(part_nodes), Join(parity_ranks), RedundancySchemeName(settings.scheme),
                   layout.Survives(), layout.Survives() == 1 ? "" : "s",
                   settings.scheme == RedundancyScheme::kPartner ? " (or any that are not "
                                                                   "neighbours in the ring)"
                                                                 : "");
    }
  }
  return Status::Ok();
}

// Members without a valid header get the lowest valid member's, made
// theirs (index); nullopt when no member of the group has one.
Result<std::optional<ParityHeader>> ShareHeader(Comm& comm, const GroupView& v,
                                                const std::vector<RankState>& states,
                                                const GroupParity* parity) {
  const int n = v.layout.members();
  auto valid = [&](int i) { return states[static_cast<size_t>(v.Rank(i))].header == kHeaderValid; };
  int source = 0;
  while (source < n && !valid(source)) ++source;
  if (source == n) return std::optional<ParityHeader>();
  if (valid(v.index)) {
    if (v.index == source) {
      const std::string bytes = EncodeParityHeader(parity->header);
      const uint64_t length = bytes.size();
      const std::span<const uint8_t> data(reinterpret_cast<const uint8_t*>(bytes.data()),
                                          bytes.size());
      for (int i = 0; i < n; ++i) {
        if (valid(i)) continue;
        const std::span<const uint8_t> length_bytes(reinterpret_cast<const uint8_t*>(&length),
                                                    sizeof length);
        CAIRN_RETURN_IF_ERROR(comm.SendRecv(v.Rank(i), length_bytes, Comm::kNoPeer, {}));
        CAIRN_RETURN_IF_ERROR(comm.SendRecv(v.Rank(i), data, Comm::kNoPeer, {}));
      }
    }
    return std::optional<ParityHeader>(parity->header);
  }
  uint64_t length = 0;
  CAIRN_RETURN_IF_ERROR(comm.SendRecv(
      Comm::kNoPeer, {}, v.Rank(source),
      std::span<uint8_t>(reinterpret_cast<uint8_t*>(&length), sizeof length)));
  std::string bytes(length, '\0');
  CAIRN_RETURN_IF_ERROR(comm.SendRecv(
      Comm::kNoPeer, {}, v.Rank(source),
      std::span<uint8_t>(reinterpret_cast<uint8_t*>(bytes.data()), bytes.size())));
  uint64_t header_bytes = 0;
  CAIRN_ASSIGN_OR_RETURN(ParityHeader h,
                         DecodeParityHeader(bytes, fmt::format("rank {}'s header", v.Rank(source)),
                                            &header_bytes));
  h.index = static_cast<uint32_t>(v.index);
  return std::optional<ParityHeader>(std::move(h));
}

// Slice [offset, offset + length) of a chunk, in the slice-major layout of
// the encoder's partial parity: the rows of one slice side by side.
struct Slice {
  uint64_t offset;
  uint64_t length;

  std::span<uint8_t> In(AlignedBuffer& partial, int rows) const {
    return partial.span().subspan(static_cast<uint64_t>(rows) * offset,
                                  static_cast<uint64_t>(rows) * length);
  }
};

// This rank's buffers during a rebuild: what it contributes and where what
// it lost lands.
struct RebuildBuffers {
  std::span<const uint8_t> part;   // valid part, or empty
  const GroupParity* parity;        // valid parity, or null
  AlignedBuffer scratch;            // one padded slice of the part
  AlignedBuffer acc;                // the rebuilt symbols of one slice, side by side
  AlignedBuffer lost_part;          // data_pieces x chunk, when the part is lost
  AlignedBuffer lost_rows;          // parity_rows x chunk, when the parity is lost
};

// This rank's role in the rebuild of one stripe, fixed before data moves:
// the chain through the survivors' symbols `used` adds up the rebuild rows
// of the `erased` symbols, and the last link hands each to its owner.
struct StripeRole {
  int stripe = 0;
  std::vector<int> erased;
  std::vector<int> used;             // in chain order
  int link = -1;                     // this member's place in `used`, or -1
  int lost_here = -1;                // this member's symbol in `erased`, or -1
  std::optional<Combiner> combiner;  // when link >= 0
};

Result<StripeRole> RoleIn(const GroupView& v, int t, const std::vector<bool>& lost_parts,
                          const std::vector<bool>& lost_parity) {
  const StripeLayout& l = v.layout;
  StripeRole role;
  role.stripe = t;
  role.erased = l.ErasedSymbols(t, lost_parts, lost_parity);
  if (role.erased.empty()) return role;
  for (int s = 0; s < l.symbols() && static_cast<int>(role.used.size()) < l.data_pieces(); ++s) {
    if (std::find(role.erased.begin(), role.erased.end(), s) == role.erased.end()) {
      role.used.push_back(s);
    }
  }
  auto here = [&](int symbol) { return l.SymbolMember(t, symbol) == v.index; };
  for (size_t k = 0; k < role.erased.size(); ++k) {
    if (here(role.erased[k])) role.lost_here = static_cast<int>(k);
  }
  for (size_t i = 0; i < role.used.size(); ++i) {
    if (here(role.used[i])) role.link = static_cast<int>(i);
  }
  if (role.link >= 0) {
    CAIRN_ASSIGN_OR_RETURN(std::vector<uint8_t> coefs,
                           RebuildRows(l.data_pieces(), l.parity_rows(), role.used, role.erased));
    // Column `link` of the rebuild rows multiplies this member's symbol.
    role.combiner.emplace(l.data_pieces(), static_cast<int>(role.erased.size()), std::move(coefs));
  }
  return role;
}

// Where slice s of this member's symbol `symbol` lands when it lost it
// (the buffers of its lost part or rows), and where it lies when it holds
// it (its part, padded, or its parity rows).
uint8_t* LostSymbolAt(RebuildBuffers& b, int data_pieces, int symbol, uint64_t chunk,
                      const Slice& s) {
  return symbol < data_pieces
             ? b.lost_part.data() + static_cast<uint64_t>(symbol) * chunk + s.offset
             : b.lost_rows.data() + static_cast<uint64_t>(symbol - data_pieces) * chunk + s.offset;
}

const uint8_t* HeldSymbolAt(RebuildBuffers& b, int data_pieces, int symbol, uint64_t chunk,
                            const Slice& s) {
  return symbol < data_pieces
             ? PaddedPiece(b.part, static_cast<uint64_t>(symbol) * chunk + s.offset, s.length,
                           b.scratch)
             : b.parity->rows.data() + static_cast<uint64_t>(symbol - data_pieces) * chunk +
                   s.offset;
}

// One slice of one stripe: this member's link of the chain (receive the
// sum so far, add its symbol, pass it on or, last, hand each rebuilt
// symbol to its owner), or the receipt of its own lost symbol. Every
// member runs (slice, stripe) in the same order and each step pairs two
// members, so the blocking transfers cannot wait on each other in a cycle.
Status RebuildSlice(Comm& comm, const GroupView& v, const StripeRole& role, uint64_t chunk,
                    const Slice& s, RebuildBuffers& b) {
  const StripeLayout& l = v.layout;
  const int t = role.stripe, c = l.data_pieces();
  auto rank_of = [&](int symbol) { return v.Rank(l.SymbolMember(t, symbol)); };
  if (role.lost_here >= 0) {
    const int symbol = role.erased[static_cast<size_t>(role.lost_here)];
    return comm.SendRecv(Comm::kNoPeer, {}, rank_of(role.used.back()),
                         {LostSymbolAt(b, c, symbol, chunk, s), s.length});
  }
  if (role.link < 0) return Status::Ok();
  const auto e = role.erased.size();
  const auto link = static_cast<size_t>(role.link);
  const std::span<uint8_t> acc = b.acc.span().subspan(0, e * s.length);
  if (link > 0) {
    CAIRN_RETURN_IF_ERROR(comm.SendRecv(Comm::kNoPeer, {}, rank_of(role.used[link - 1]), acc));
  }
  std::vector<uint8_t*> row_ptrs = RowPointers(acc.data(), static_cast<int>(e), s.length);
  role.combiner->Add(role.link, HeldSymbolAt(b, c, role.used[link], chunk, s), row_ptrs.data(),
                     s.length, link == 0);
  if (link + 1 < role.used.size()) {
    return comm.SendRecv(rank_of(role.used[link + 1]), acc, Comm::kNoPeer, {});
  }
  for (size_t k = 0; k < e; ++k) {
    CAIRN_RETURN_IF_ERROR(comm.SendRecv(rank_of(role.erased[k]),
                                        acc.subspan(k * s.length, s.length), Comm::kNoPeer, {}));
  }
  return Status::Ok();
}

}  // namespace

// The pipelined ring: at step q every member adds its piece q to the
// partial parity of stripe StripeOfPiece(j, q) and passes it right; after
// the last piece the stripe's rows go to the members that store them. Each
// step runs slice by slice, so a slice is received, combined and (at the
// last step) delivered and checksummed while still in cache.
Status GroupEncoder::EncodeRing(std::span<const uint8_t> part, uint64_t chunk,
                                AlignedBuffer& out_rows, std::vector<uint32_t>* row_crcs) {
  const GroupView v = ViewOf(*comm_, *plan_, settings_);
  const StripeLayout& l = v.layout;
  const int rows = l.parity_rows(), n = l.members(), pieces = l.data_pieces();
  const Combiner combiner(pieces, rows, ParityGenerator(pieces, rows));
  for (AlignedBuffer& b : partial_) Fit(b, rows * chunk);
  for (AlignedBuffer& b : scratch_) Fit(b, std::min(chunk, kSliceBytes));
  const int right = v.Rank((v.index + 1) % n), left = v.Rank((v.index + n - 1) % n);
  // partner and xor: piece 0 leaves as it lies, no copy.
  const bool forward_piece0 = combiner.CopiesSource0();
  // What step q made of a slice: the partial parity, or piece 0 itself.
  auto made = [&](int q, const Slice& s) -> std::span<const uint8_t> {
    if (q == 0 && forward_piece0) {
      return {PaddedPiece(part, s.offset, s.length, scratch_[1]), s.length};
    }
    return s.In(partial_[q % 2], rows);
  };
  const int finished = l.StripeOfPiece(v.index, pieces - 1);
  std::vector<std::vector<uint32_t>> crcs(static_cast<size_t>(rows));
  for (int q = 0; q < pieces; ++q) {
    for (uint64_t offset = 0; offset < chunk; offset += kSliceBytes) {
      const Slice s{offset, std::min(kSliceBytes, chunk - offset)};
      const std::span<uint8_t> into = s.In(partial_[q % 2], rows);
      if (q > 0) CAIRN_RETURN_IF_ERROR(comm_->SendRecv(right, made(q - 1, s), left, into));
      if (q > 0 || !forward_piece0) {
        std::vector<uint8_t*> row_ptrs = RowPointers(into.data(), rows, s.length);
        combiner.Add(q, PaddedPiece(part, static_cast<uint64_t>(q) * chunk + s.offset, s.length,
                                    scratch_[0]),
                     row_ptrs.data(), s.length, q == 0);
      }
      if (q + 1 < pieces) continue;
      // The stripe is complete for this slice: its rows go to their holders.
      const std::span<const uint8_t> done = made(q, s);
      for (int p = 0; p < rows; ++p) {
        const int to = l.ParityMember(finished, p);
        const int from = l.DataMember(l.StripeOfRow(v.index, p), pieces - 1);
        const std::span<uint8_t> row_slice =
            out_rows.span().subspan(static_cast<uint64_t>(p) * chunk + s.offset, s.length);
        CAIRN_RETURN_IF_ERROR(comm_->SendRecv(v.Rank(to), done.subspan(p * s.length, s.length),
                                              v.Rank(from), row_slice));
        const std::vector<uint32_t> slice_crcs = BlockCrcs(row_slice, kBlockSize);
        crcs[p].insert(crcs[p].end(), slice_crcs.begin(), slice_crcs.end());
      }
    }
  }
  for (const std::vector<uint32_t>& c : crcs) row_crcs->insert(row_crcs->end(), c.begin(), c.end());
  return Status::Ok();
}

Status GroupEncoder::Encode(int64_t version, std::span<const uint8_t> part, GroupParity* out) {
  Comm& comm = *comm_;
  CAIRN_ASSIGN_OR_RETURN(std::vector<int64_t> words,
                         comm.AllgatherWords({static_cast<int64_t>(part.size()), comm.node()}));
  const GroupView v = ViewOf(comm, *plan_, settings_);
  const StripeLayout& l = v.layout;
  ParityHeader& h = out->header;
  h = ParityHeader{};
  h.scheme = StoredScheme(settings_.scheme);
  h.parity_rows = static_cast<uint32_t>(l.parity_rows());
  h.group = static_cast<uint32_t>(v.group.id);
  h.index = static_cast<uint32_t>(v.index);
  h.version = version;
  h.block_size = kBlockSize;
  uint64_t largest = 0;
  for (int rank : v.group.members) {
    ParityMember m;
    m.rank = static_cast<uint32_t>(rank);
    m.part_size = static_cast<uint64_t>(words[static_cast<size_t>(2 * rank)]);
    m.node = static_cast<uint32_t>(words[static_cast<size_t>(2 * rank + 1)]);
    largest = std::max(largest, m.part_size);
    h.members.push_back(std::move(m));
  }
  h.chunk_size = ChunkSize(largest, l.data_pieces());
  Fit(out->rows, h.RowsBytes());
  std::vector<uint32_t> parity_crcs;
  CAIRN_RETURN_IF_ERROR(EncodeRing(part, h.chunk_size, out->rows, &parity_crcs));

  // Every member's header carries every member's CRC32Cs: one ring
  // all-gather of this member's part CRC32Cs followed by its rows'.
  std::vector<uint32_t> mine = BlockCrcs(part, kBlockSize);
  mine.insert(mine.end(), parity_crcs.begin(), parity_crcs.end());
  std::vector<uint64_t> lengths;
  for (const ParityMember& m : h.members) {
    lengths.push_back(4 * (h.BlocksOf(m.part_size) + h.parity_rows * h.RowBlocks()));
  }
  CAIRN_ASSIGN_OR_RETURN(auto all, RingAllgather(comm, v, CrcBytes(mine), lengths));
  for (size_t i = 0; i < h.members.size(); ++i) {
    std::vector<uint32_t> crcs = CrcsOf(all[i]);
    const auto split =
        crcs.begin() + static_cast<std::ptrdiff_t>(h.BlocksOf(h.members[i].part_size));
    h.members[i].part_crcs.assign(crcs.begin(), split);
    h.members[i].parity_crcs.assign(split, crcs.end());
  }
  return Status::Ok();
}

Result<GroupParity> EncodeGroupParity(Comm& comm, const GroupPlan& plan,
                                      const RedundancySettings& settings, int64_t version,
                                      std::span<const uint8_t> part) {
  GroupEncoder encoder(&comm, &plan, settings);
  GroupParity out;
  CAIRN_RETURN_IF_ERROR(encoder.Encode(version, part, &out));
  return out;
}

namespace {

// This rank's own checks before anyone moves data.
RankState LocalState(const Comm& comm, const GroupView& v, const RedundancySettings& settings,
                     int64_t version, const LocalCopy& local) {
  RankState mine;
  mine.header = CheckHeader(v, settings, version, local.parity);
  if (mine.header == kHeaderValid) mine.digest = TableDigest(local.parity->header);
  mine.node = comm.node();
  mine.has_part = local.part.has_value();
  return mine;
}

// Whether the part still is what was encoded: the header's size and
// CRC32Cs for this member (or, with no header in the group, just present).
bool PartIntact(const LocalCopy& local, const std::optional<ParityHeader>& header) {
  if (!local.part) return false;
  if (!header) return true;
  const ParityMember& m = header->members[header->index];
  return local.part->size() == m.part_size &&
         FirstBadBlock(*local.part, header->block_size, m.part_crcs) < 0;
}

// Checks what this rank got back against the header's CRC32Cs and hands it
// over; kCorrupt naming the first bad block, never wrong bytes.
Status TakeRebuilt(const ParityHeader& header, RebuildBuffers& b, bool part_lost,
                   bool parity_lost, RebuildOutcome* out) {
  const ParityMember& m = header.members[header.index];
  if (part_lost) {
    const std::span<const uint8_t> part(b.lost_part.data(), m.part_size);
    const int64_t bad = FirstBadBlock(part, header.block_size, m.part_crcs);
    if (bad >= 0) {
      return Error(Code::kCorrupt,
                   "rank {}: the part rebuilt from redundancy group {} fails its CRC32C at block "
                   "{} (a survivor's data or parity is wrong)",
                   m.rank, header.group, bad);
    }
    out->part.emplace(part.begin(), part.end());
  }
  if (parity_lost) {
    GroupParity rebuilt{header, std::move(b.lost_rows)};
    if (!RowsIntact(rebuilt)) {
      return Error(Code::kCorrupt, "rank {}: the parity rebuilt for redundancy group {} fails "
                                   "its CRC32C", m.rank, header.group);
    }
    out->parity.emplace(std::move(rebuilt));
  }
  return Status::Ok();
}

// Runs this rank's part of its group's rebuild: every stripe, then the
// check of what it got back.
Status RebuildOwnGroup(Comm& comm, const GroupView& v, const ParityHeader& header,
                       const std::vector<RankState>& states, const LocalCopy& local,
                       const RankState& mine, RebuildOutcome* out);

}  // namespace

Result<RebuildOutcome> RebuildGroupParts(Comm& comm, const GroupPlan& plan,
                                         const RedundancySettings& settings, int64_t version,
                                         const LocalCopy& local) {
  const GroupView v = ViewOf(comm, plan, settings);
  RankState mine = LocalState(comm, v, settings, version, local);
  std::vector<RankState> states;
  CAIRN_RETURN_IF_ERROR(GatherStates(comm, {mine.header, mine.digest, mine.node, mine.has_part},
                                     &states, [](RankState& st, const int64_t* w) {
                                       st = RankState{w[0], w[1], w[2], w[3]};
                                     }));
  CAIRN_RETURN_IF_ERROR(CheckHeadersAgree(plan, states));
  CAIRN_ASSIGN_OR_RETURN(std::optional<ParityHeader> header,
                         ShareHeader(comm, v, states, local.parity));
  mine.part_ok = PartIntact(local, header);
  mine.parity_ok = mine.header == kHeaderValid && RowsIntact(*local.parity);
  CAIRN_RETURN_IF_ERROR(GatherStates(comm, {mine.part_ok, mine.parity_ok}, &states,
                                     [](RankState& st, const int64_t* w) {
                                       st.part_ok = w[0];
                                       st.parity_ok = w[1];
                                     }));
  CAIRN_RETURN_IF_ERROR(CheckSurvivable(plan, settings, states));

  RebuildOutcome out;
  for (const RedundancyGroup& g : plan.groups) {
    const bool has_header = std::any_of(g.members.begin(), g.members.end(), [&](int r) {
      return states[static_cast<size_t>(r)].header == kHeaderValid;
    });
    for (int r : g.members) {
      out.parts_rebuilt += has_header && states[static_cast<size_t>(r)].part_ok == 0;
      out.parities_rebuilt += has_header && states[static_cast<size_t>(r)].parity_ok == 0;
    }
  }
  Status status;
  // Without a header the group has nothing it can rebuild (and, past
  // CheckSurvivable, lost no part); its ranks still join the agreement.
  if (header) status = RebuildOwnGroup(comm, v, *header, states, local, mine, &out);
  CAIRN_RETURN_IF_ERROR(comm.Agree(status));
  return out;
}

namespace {

Status RebuildOwnGroup(Comm& comm, const GroupView& v, const ParityHeader& header,
                       const std::vector<RankState>& states, const LocalCopy& local,
                       const RankState& mine, RebuildOutcome* out) {
  std::vector<bool> lost_parts, lost_parity;
  for (int r : v.group.members) {
    lost_parts.push_back(states[static_cast<size_t>(r)].part_ok == 0);
    lost_parity.push_back(states[static_cast<size_t>(r)].parity_ok == 0);
  }
  std::vector<StripeRole> roles;
  size_t most_erased = 0;
  for (int t = 0; t < v.layout.stripes(); ++t) {
    CAIRN_ASSIGN_OR_RETURN(StripeRole role, RoleIn(v, t, lost_parts, lost_parity));
    most_erased = std::max(most_erased, role.erased.size());
    if (!role.erased.empty()) roles.push_back(std::move(role));
  }
  const uint64_t chunk = header.chunk_size;
  const uint64_t slice = std::min(chunk, kSliceBytes);
  const auto index = static_cast<size_t>(v.index);
  RebuildBuffers b{mine.part_ok ? *local.part : std::span<const uint8_t>(),
                   mine.parity_ok ? local.parity : nullptr, AlignedBuffer(slice),
                   AlignedBuffer(most_erased * slice),
                   AlignedBuffer(lost_parts[index] ? v.layout.data_pieces() * chunk : 0),
                   AlignedBuffer(lost_parity[index] ? header.RowsBytes() : 0)};
  // Slice by slice, every stripe: the stripes' chains run side by side and
  // each slice flows down its chain while the next one starts.
  for (uint64_t offset = 0; offset < chunk; offset += kSliceBytes) {
    const Slice s{offset, std::min(kSliceBytes, chunk - offset)};
    for (const StripeRole& role : roles) {
      CAIRN_RETURN_IF_ERROR(RebuildSlice(comm, v, role, chunk, s, b));
    }
  }
  return TakeRebuilt(header, b, lost_parts[index], lost_parity[index], out);
}

}  // namespace

}  // namespace cairn
