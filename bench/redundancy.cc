// bench/redundancy: the cost of protecting node-local parts across nodes.
//
//   mpirun -np R redundancy [--mib S] [--reps N] [--ranks-per-node P] [--json]
//
// For each scheme (partner, xor, rs with --parity m), every rank encodes a
// part of S MiB within its group (redundancy/group_codec.h: ISA-L kernels,
// data over MPI), and in the same run the two baselines of the same bytes:
// the raw ISA-L encode of this rank's share without any transfer, and an
// MPI_Sendrecv around a ring of as many bytes as the encode moves per
// rank. Then the ranks of virtual node 0 drop their copies and the group
// rebuilds them. Times are the slowest rank's. Each repetition measures
// the encode and both baselines one after the other, so that all three see
// the same state of a shared machine, and each figure is the median over
// the repetitions, after one warm-up (the engine keeps its buffers from
// one version to the next, so their first page faults are not the
// encode's).
// One JSON object per scheme and line with --json (fields scheme, ranks,
// bytes_per_rank, encode_seconds, raw_encode_seconds, transfer_seconds,
// ratio = encode / (raw_encode + transfer), rebuild_seconds), a table
// otherwise. Ranks form virtual nodes of --ranks-per-node (default 1), since
// a single host is one real node.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "bench_support.h"
#include "comm/mpi_comm.h"
#include "redundancy/combiner.h"
#include "redundancy/group_codec.h"
#include "redundancy/groups.h"

namespace {

using cairn::RedundancyScheme;

struct Options {
  double mib = 64;
  int reps = 5;
  int ranks_per_node = 1;
  int parity = 2;
  bool json = false;
};

struct Figures {
  double encode = 0, raw = 0, transfer = 0, rebuild = 0;
};

// The slowest rank's seconds for one run of body().
double Timed(const std::function<void()>& body) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  body();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

// What one rank computes in the group encode, without moving anything: its
// data pieces added into the parity rows (partner: a copy).
void RawEncode(const cairn::StripeLayout& layout, const cairn::AlignedBuffer& part, uint64_t chunk,
               cairn::AlignedBuffer& rows) {
  const cairn::Combiner combiner(layout.data_pieces(), layout.parity_rows(),
                                 cairn::ParityGenerator(layout.data_pieces(), layout.parity_rows()));
  std::vector<uint8_t*> row_pointers;
  for (int p = 0; p < layout.parity_rows(); ++p) row_pointers.push_back(rows.data() + p * chunk);
  for (int q = 0; q < layout.data_pieces(); ++q) {
    combiner.Add(q, part.data() + q * chunk, row_pointers.data(), chunk, q == 0);
  }
}

// As many bytes as the encode sends per rank, around the ring of all ranks.
void RingTransfer(const std::vector<uint8_t>& out, std::vector<uint8_t>& in) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  constexpr size_t kPiece = size_t{1} << 30;
  for (size_t off = 0; off < out.size(); off += kPiece) {
    const int n = static_cast<int>(std::min(kPiece, out.size() - off));
    MPI_Sendrecv(out.data() + off, n, MPI_BYTE, (rank + 1) % size, 1, in.data() + off, n,
                 MPI_BYTE, (rank + size - 1) % size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

cairn::Status RunScheme(cairn::Comm& comm, const Options& o, RedundancyScheme scheme,
                        const cairn::AlignedBuffer& part, Figures* f) {
  const cairn::RedundancySettings settings{.scheme = scheme, .group_size = 0, .parity = o.parity,
                                           .sync = false};
  CAIRN_ASSIGN_OR_RETURN(std::vector<int64_t> nodes, comm.Allgather(comm.node()));
  CAIRN_ASSIGN_OR_RETURN(cairn::GroupPlan plan,
                         cairn::FormGroups({nodes.begin(), nodes.end()}, settings));
  const auto& group = plan.GroupOf(comm.rank());
  const cairn::StripeLayout layout(scheme, static_cast<int>(group.members.size()), o.parity);

  // As the engine will: one encoder and one parity buffer for all versions.
  cairn::GroupEncoder encoder(&comm, &plan, settings);
  cairn::GroupParity parity;
  cairn::Status status;
  auto encode = [&] {
    cairn::Status s = encoder.Encode(1, part.span(), &parity);
    if (!s.ok()) status = s;
  };
  Timed(encode);  // warm-up: sizes the buffers, and tells the chunk size
  CAIRN_RETURN_IF_ERROR(comm.Agree(status));

  // The raw encode works on the same padded pieces as the group encode.
  const uint64_t chunk = parity.header.chunk_size;
  cairn::AlignedBuffer padded(layout.data_pieces() * chunk), rows(layout.parity_rows() * chunk);
  std::memcpy(padded.data(), part.data(), part.size());
  std::memset(padded.data() + part.size(), 0, padded.size() - part.size());
  std::vector<uint8_t> out(layout.data_pieces() * layout.parity_rows() * chunk, 1), in(out.size());
  auto raw = [&] { RawEncode(layout, padded, chunk, rows); };
  auto transfer = [&] { RingTransfer(out, in); };
  Timed(raw);
  Timed(transfer);

  std::vector<double> encodes, raws, transfers;
  for (int rep = 0; rep < o.reps; ++rep) {
    encodes.push_back(Timed(encode));
    raws.push_back(Timed(raw));
    transfers.push_back(Timed(transfer));
  }
  CAIRN_RETURN_IF_ERROR(comm.Agree(status));
  f->encode = cairn_bench::Median(encodes);
  f->raw = cairn_bench::Median(raws);
  f->transfer = cairn_bench::Median(transfers);

  // Virtual node 0 loses its copies; its groups rebuild them.
  cairn::LocalCopy local;
  if (comm.node() != 0) {
    local.part = part.span();
    local.parity = &parity;
  }
  f->rebuild = Timed([&] {
    auto rebuilt = cairn::RebuildGroupParts(comm, plan, settings, 1, local);
    if (!rebuilt.ok()) status = rebuilt.status();
  });
  return comm.Agree(status);
}

int Main(int argc, char** argv) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options o;
  CLI::App app("Cost of partner/XOR/Reed-Solomon protection across nodes (docs/redundancy.md)");
  app.add_option("--mib", o.mib, "MiB of part per rank")->check(cairn_bench::FiniteRange(0, 1 << 20));
  app.add_option("--reps", o.reps, "repetitions; the medians are reported")->check(CLI::Range(1, 1000));
  app.add_option("--ranks-per-node", o.ranks_per_node, "ranks per virtual node")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--parity", o.parity, "parities of the rs scheme")->check(CLI::Range(1, 254));
  app.add_flag("--json", o.json, "one JSON object per scheme and line instead of a table");
  if (auto exit = cairn_bench::ParseCommandLine(app, argc, argv, rank == 0)) return *exit;

  auto comm = cairn::NewMpiComm(MPI_COMM_WORLD, o.ranks_per_node);
  if (!comm.ok()) {
    std::fprintf(stderr, "redundancy: %s\n", comm.status().ToString().c_str());
    return 1;
  }
  const auto bytes = static_cast<uint64_t>(o.mib * 1024 * 1024);
  cairn::AlignedBuffer part(bytes);
  std::mt19937_64 rng(1000 + static_cast<uint64_t>(rank));
  for (uint64_t i = 0; i + 8 <= bytes; i += 8) {
    const uint64_t word = rng();
    std::memcpy(part.data() + i, &word, 8);
  }
  if (!o.json && rank == 0) {
    std::printf("%-8s %6s %12s %10s %10s %10s %7s %10s\n", "scheme", "ranks", "bytes/rank",
                "encode_s", "raw_s", "xfer_s", "ratio", "rebuild_s");
  }
  for (RedundancyScheme scheme :
       {RedundancyScheme::kPartner, RedundancyScheme::kXor, RedundancyScheme::kRs}) {
    Figures f;
    cairn::Status s = RunScheme(**comm, o, scheme, part, &f);
    if (!s.ok()) {
      if (rank == 0) std::fprintf(stderr, "redundancy: %s: %s\n", cairn::RedundancySchemeName(scheme),
                                  s.ToString().c_str());
      return 1;
    }
    if (rank != 0) continue;
    const double ratio = f.encode / (f.raw + f.transfer);
    if (o.json) {
      cairn_bench::Json j;
      j["scheme"] = cairn::RedundancySchemeName(scheme);
      j["ranks"] = size;
      j["ranks_per_node"] = o.ranks_per_node;
      j["parity"] = scheme == RedundancyScheme::kRs ? o.parity : 1;
      j["bytes_per_rank"] = bytes;
      j["encode_seconds"] = f.encode;
      j["raw_encode_seconds"] = f.raw;
      j["transfer_seconds"] = f.transfer;
      j["ratio"] = ratio;
      j["rebuild_seconds"] = f.rebuild;
      cairn_bench::PrintJsonLine(j);
    } else {
      std::printf("%-8s %6d %12llu %10.4f %10.4f %10.4f %7.2f %10.4f\n",
                  cairn::RedundancySchemeName(scheme), size, static_cast<unsigned long long>(bytes),
                  f.encode, f.raw, f.transfer, ratio, f.rebuild);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int status = Main(argc, argv);
  MPI_Finalize();
  return status;
}
