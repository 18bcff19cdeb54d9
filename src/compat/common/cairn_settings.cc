#include "compat/common/cairn_settings.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <toml++/toml.h>

#include "cairn/cairn.h"

namespace cairn_compat {

Status CairnError(int code, const std::string& call) {
  if (code >= 0) return Status();
  // The C API's message starts with its function's name ("cairn_restart:
  // ..."); `call` says it, with what the layer asked for, in its place.
  std::string message = cairn_error_message(code);
  const std::string function = call.substr(0, call.find(' ')) + ": ";
  if (message.rfind(function, 0) == 0) message.erase(0, function.size());
  return Status::Error(call + ": " + message);
}

void ReportError(const std::string& peer, const std::string& message) {
  std::fprintf(stderr, "%s (Cairn): error: %s\n", peer.c_str(), message.c_str());
  std::fflush(stderr);
}

void CairnSettings::SetNodeLocalPath(const std::string& base) {
  std::string abs = AbsolutePath(base);
  node_local_tier_ = abs.rfind("/dev/shm", 0) == 0 ? "memory" : "ssd";
  Set("tiers." + node_local_tier_ + ".path", abs + "/cairn/{node}");
  node_local_base_ = abs;
}

std::string CairnSettings::StateDir() const {
  auto dir = keys_.find("general.dir");
  if (dir != keys_.end()) return std::get<std::string>(dir->second) + "/cairn-compat";
  return (node_local_base_.empty() ? AbsolutePath(".") : node_local_base_) + "/cairn-compat";
}

void CairnSettings::RequestRedundancy(const std::string& scheme, int group_size, int parity,
                                      const std::string& where, bool by_default) {
  redundancy_request_ = RedundancyRequest{scheme, group_size, parity, where, by_default};
}

int CountNodes(MPI_Comm comm, int64_t ranks_per_node) {
  if (comm == MPI_COMM_NULL) return 1;
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (ranks_per_node > 0) return static_cast<int>((size + ranks_per_node - 1) / ranks_per_node);
  MPI_Comm host;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  int host_rank = 0, leaders = 0;
  MPI_Comm_rank(host, &host_rank);
  int leader = host_rank == 0 ? 1 : 0;
  MPI_Allreduce(&leader, &leaders, 1, MPI_INT, MPI_SUM, comm);
  MPI_Comm_free(&host);
  return leaders;
}

// Cairn's groups without redundancy.group_size: one rank from each of up
// to 8 nodes (docs/redundancy.md).
constexpr int kCairnDefaultGroupNodes = 8;

// Cairn refuses a scheme the nodes cannot hold (docs/redundancy.md); the
// peers run without their redundancy there (VeloC on one host, FTI and SCR
// with too few nodes refuse to start), so the layer starts without it and
// says so.
void CairnSettings::ResolveRedundancy(int nodes) {
  if (!redundancy_request_) return;
  const RedundancyRequest& r = *redundancy_request_;
  if (const char* scheme = std::getenv("CAIRN_REDUNDANCY_SCHEME")) {
    // Cairn's own variable wins inside cairn_init; the layer follows it.
    redundancy_ = std::string(scheme) == "none" ? "" : scheme;
    return;
  }
  int group = r.group_size;
  if (group > nodes) {
    Warn(r.where, "a group of " + std::to_string(group) + " nodes needs as many nodes, this job has " +
                      std::to_string(nodes) + ": groups of " + std::to_string(nodes));
    group = nodes;
  }
  const int members = group > 0 ? group : std::min(nodes, kCairnDefaultGroupNodes);
  // rs: `parity` < 0 asks for half the group (FTI's level 3 survives that).
  int parity = r.scheme != "rs" ? 1 : r.parity < 0 ? std::max(1, members / 2) : std::max(1, r.parity);
  if (r.scheme == "rs" && parity >= members) parity = members - 1;
  if (members < 2 || parity < 1) {
    if (r.by_default && nodes == 1) return;
    Warn(r.where, r.scheme + " redundancy needs ranks on at least 2 nodes, this job has " +
                      std::to_string(nodes) + ": checkpoints are not protected across nodes");
    return;
  }
  Set("redundancy.scheme", r.scheme);
  if (group > 0) Set("redundancy.group_size", int64_t{group});
  if (r.scheme == "rs") Set("redundancy.parity", int64_t{parity});
  redundancy_ = r.scheme;
}

void CairnSettings::Warn(const std::string& where, const std::string& what) {
  warnings_.push_back(where + ": " + what);
}

Result<std::string> CairnSettings::WriteToml() const {
  toml::table root;
  for (const auto& [key, value] : keys_) {
    // "tiers.ssd.path": tables for every part but the last.
    toml::table* table = &root;
    size_t start = 0;
    for (size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1) {
      auto [it, inserted] = table->emplace(key.substr(start, dot - start), toml::table{});
      table = it->second.as_table();
    }
    std::string leaf = key.substr(start);
    std::visit([&](const auto& v) { table->insert_or_assign(leaf, v); }, value);
  }
  std::error_code ec;
  std::string dir = std::filesystem::temp_directory_path(ec).string();
  if (ec) dir = "/tmp";
  std::string path = dir + "/cairn-compat-XXXXXX";
  int fd = mkstemp(path.data());  // private (0600) and unique per rank
  if (fd < 0) return Status::Error("cannot create a temporary configuration file in " + dir);
  close(fd);
  std::ofstream out(path, std::ios::trunc);
  out << root << "\n";
  out.close();
  if (!out) {
    std::filesystem::remove(path, ec);
    return Status::Error("cannot write the temporary configuration file " + path);
  }
  return path;
}

void CairnSettings::PrintWarnings(MPI_Comm comm) const {
  int rank = 0;
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &rank);
  if (rank != 0) return;
  for (const auto& w : warnings_) {
    std::fprintf(stderr, "%s (Cairn): warning: %s\n", peer_.c_str(), w.c_str());
  }
  std::fflush(stderr);
}

// Virtual nodes as Cairn will count them: the translated key, or Cairn's own
// environment override, which wins inside cairn_init.
int64_t CairnSettings::RanksPerNode() const {
  int64_t ranks_per_node = 0;
  if (auto it = keys_.find("topology.ranks_per_node"); it != keys_.end()) {
    ranks_per_node = std::get<int64_t>(it->second);
  }
  if (const char* env = std::getenv("CAIRN_TOPOLOGY_RANKS_PER_NODE")) ranks_per_node = std::atoll(env);
  return ranks_per_node;
}

Status CairnSettings::Init(MPI_Comm comm) {
  if (redundancy_request_) ResolveRedundancy(CountNodes(comm, RanksPerNode()));
  auto path = WriteToml();
  // Every rank must enter cairn_init even if its file failed, or the others
  // would wait in its collectives: a missing file makes it fail everywhere.
  std::string config = path.ok() ? *path : std::string("/nonexistent/cairn-compat.toml");
  int rc = comm == MPI_COMM_NULL ? cairn_init_single(config.c_str())
                                 : cairn_init(comm, config.c_str());
  std::error_code ec;
  if (path.ok()) std::filesystem::remove(*path, ec);
  if (!path.ok()) return path.status();
  PrintWarnings(comm);
  return CairnError(rc, "cairn_init");
}

std::string AbsolutePath(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  std::error_code ec;
  auto cwd = std::filesystem::current_path(ec);
  if (ec) return path;
  std::string abs = (cwd / path).lexically_normal().string();
  if (abs.size() > 1 && abs.back() == '/') abs.pop_back();  // "dir/." -> "dir"
  return abs;
}

std::string RoutedFileName(const std::string& path) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '.' || c == '-') {
      out += static_cast<char>(c);
    } else {
      out += '_';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (!out.empty() && out[0] == '.') out.replace(0, 1, "_2E");
  constexpr size_t kMaxName = 128;  // cairn_route_file's bound on a name
  if (out.size() <= kMaxName) return out;
  uint64_t hash = 14695981039346656037ull;  // FNV-1a: stable across runs and builds
  for (unsigned char c : path) hash = (hash ^ c) * 1099511628211ull;
  char prefix[20];
  std::snprintf(prefix, sizeof prefix, "h%016llx-", static_cast<unsigned long long>(hash));
  std::string tail = out.substr(out.size() - (kMaxName - 18));
  if (tail[0] == '.') tail[0] = '-';
  return prefix + tail;
}

}  // namespace cairn_compat
