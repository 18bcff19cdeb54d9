// Engine, the restart pipeline: agree on the newest version every rank can
// recover, check shapes, read each part from the fastest valid copy
// (engine.h).
#include <algorithm>
#include <limits>

#include "base/log.h"
#include "format/layout.h"
#include "runtime/catalog.h"
#include "runtime/engine.h"

namespace cairn {

std::set<int64_t, std::greater<>> Engine::LocalRecoverable(const std::string& name,
                                                           int64_t max_version) {
  std::set<int64_t, std::greater<>> out;
  for (int k = 0; k < kTierKinds; ++k) {
    if (!tiers_[k]) continue;
    std::lock_guard<std::mutex> lock(mu_);
    auto versions = tiers_[k]->Versions(name);
    if (!versions.ok()) continue;
    for (int64_t v : *versions) {
      if (max_version >= 0 && v > max_version) continue;
      if (out.count(v)) continue;
      if (CheckCopy(*tiers_[k], name, v, comm_->rank(), comm_->size()).ok()) out.insert(v);
    }
  }
  return out;
}

Result<int64_t> Engine::AgreeOnVersion(const std::string& name, int64_t max_version) {
  auto mine = LocalRecoverable(name, max_version);
  int64_t candidate = max_version >= 0 ? max_version : std::numeric_limits<int64_t>::max();
  for (;;) {
    auto it = mine.lower_bound(candidate);  // greatest <= candidate (set is descending)
    CAIRN_ASSIGN_OR_RETURN(int64_t agreed, comm_->Min(it == mine.end() ? kNone : *it));
    if (agreed == kNone) return kNone;
    CAIRN_ASSIGN_OR_RETURN(bool everyone, comm_->AllTrue(mine.count(agreed) > 0));
    if (everyone) return agreed;
    candidate = agreed - 1;
  }
}

Result<int64_t> Engine::RestartTest(const std::string& name, int64_t max_version) {
  CAIRN_RETURN_IF_ERROR(ValidateName("checkpoint name", name));
  return AgreeOnVersion(name, max_version);
}

Status Engine::CheckRestoreShape(const std::string& name, int64_t version) {
  std::vector<Region> regions = SortedRegions();
  Status last = Error(Code::kNotFound, "no copy of '{}' version {} on this rank", name, version);
  for (int k = 0; k < kTierKinds; ++k) {
    if (!tiers_[k]) continue;
    auto m = CheckCopy(*tiers_[k], name, version, comm_->rank(), comm_->size());
    if (!m.ok()) continue;
    auto header = ReadPartHeader(*tiers_[k], name, version, m->files.front());
    if (!header.ok()) {
      last = header.status();
      continue;
    }
    return CheckRegionsMatch(*header, regions);
  }
  return last;
}

Status Engine::RestoreLocal(const std::string& name, int64_t version, std::string* source,
                            uint64_t* bytes) {
  std::vector<Region> regions = SortedRegions();
  Status last = Error(Code::kNotFound, "no copy of '{}' version {} on this rank", name, version);
  for (int k = 0; k < kTierKinds; ++k) {
    Tier* t = tiers_[k].get();
    if (t == nullptr) continue;
    Status s = [&]() -> Status {
      bool part_size_wrong = false;
      CAIRN_ASSIGN_OR_RETURN(Manifest m, CheckCopyOrRepairable(*t, name, version, &part_size_wrong));
      if (m.files.empty() || m.files.front().kind != FileKind::kPart) {
        return Error(Code::kCorrupt, "manifest of '{}' version {} lists no part file", name, version);
      }
      const FileEntry& part = m.files.front();
      Status read = [&]() -> Status {
        if (part_size_wrong) return Error(Code::kCorrupt, "'{}' has the wrong size", part.name);
        CAIRN_ASSIGN_OR_RETURN(PartHeader header, ReadPartHeader(*t, name, version, part));
        CAIRN_RETURN_IF_ERROR(CheckRegionsMatch(header, regions));
        return ReadPartInto(*t, name, version, part, header, regions);
      }();
      const FileEntry* parity = FindParityEntry(m);
      if (!read.ok() && read.code() == Code::kCorrupt && parity != nullptr) {
        // Repair before giving up on the copy (software chipkill).
        read = RestoreRepairedPart(*t, name, version, part, *parity, regions, read);
      }
      CAIRN_RETURN_IF_ERROR(read);
      bool any_routed = false;
      for (size_t i = 1; i < m.files.size(); ++i) {
        if (m.files[i].kind != FileKind::kRouted) continue;
        if (!any_routed) CAIRN_RETURN_IF_ERROR(env_->CreateDirs(route_dir_));
        any_routed = true;
        CAIRN_RETURN_IF_ERROR(CopyOutVerified(*t, name, version, m.files[i], env_,
                                              JoinPath(route_dir_, m.files[i].logical)));
      }
      *bytes = m.DataBytes() - (parity != nullptr ? parity->size : 0);  // data, not parity
      return Status::Ok();
    }();
    if (s.ok()) {
      *source = t->name();
      return s;
    }
    if (s.code() == Code::kMismatch) return s;
    if (s.code() != Code::kNotFound) {
      Log(LogLevel::kWarn, "copy of '{}' version {} on tier '{}' is unusable: {}", name, version,
          t->name(), s.ToString());
    }
    last = s;
  }
  return last;
}

Result<RestartReport> Engine::Restart(const std::string& name, int64_t version) {
  CAIRN_RETURN_IF_ERROR(ValidateName("checkpoint name", name));
  if (version < 0) return Error(Code::kInvalidArgument, "version {} is negative", version);
  double start = clock_->MonotonicSeconds();
  RestartReport report;
  report.requested = version;
  CAIRN_ASSIGN_OR_RETURN(int64_t v, AgreeOnVersion(name, version));
  Status cause = Error(Code::kNotFound,
                       "no version <= {} of checkpoint '{}' is recoverable on every rank", version,
                       name);
  while (v != kNone) {
    // Shapes first, on every rank, so that a mismatch anywhere leaves
    // every rank's memory untouched.
    Status shape = CheckRestoreShape(name, v);
    std::vector<int64_t> mismatch{shape.code() == Code::kMismatch ? 1 : 0};
    CAIRN_RETURN_IF_ERROR(comm_->AllreduceMax(mismatch));
    if (mismatch[0]) {
      if (shape.code() == Code::kMismatch) return shape;
      return Error(Code::kMismatch,
                   "checkpoint '{}' version {}: another rank's regions do not match", name, v);
    }
    std::string source;
    uint64_t bytes = 0;
    Status local = RestoreLocal(name, v, &source, &bytes);
    bool unused = false;
    Status agreed = Agree(local, &unused);
    if (agreed.ok()) {
      report.version = v;
      report.tier = source;
      report.bytes = bytes;
      report.seconds = clock_->MonotonicSeconds() - start;
      Log(LogLevel::kInfo,
          "restart: '{}' version {} from tier {} ({} bytes, {:.3f} s, {} older version(s) tried)",
          name, v, source, bytes, report.seconds, report.versions_rolled_back);
      return report;
    }
    Log(LogLevel::kWarn, "'{}' version {} could not be restored ({}); trying an older version",
        name, v, agreed.ToString());
    cause = agreed;
    ++report.versions_rolled_back;
    CAIRN_ASSIGN_OR_RETURN(v, AgreeOnVersion(name, v - 1));
  }
  return Error(cause.code() == Code::kNotFound ? Code::kNotFound : Code::kCorrupt,
               "no recoverable version <= {} of checkpoint '{}' (last cause: {})", version, name,
               cause.ToString());
}

Status Engine::RestoreRepairedPart(const Tier& t, const std::string& name, int64_t version,
                                   const FileEntry& part, const FileEntry& parity,
                                   const std::vector<Region>& regions, const Status& cause) {
  CAIRN_ASSIGN_OR_RETURN(RepairedPart repaired,
                         RepairAndCount(t, name, version, part, parity, cause, "restart"));
  return ReadPartFromBuffer(repaired.bytes, name, version, part, regions,
                            t.FilePath(name, version, part.name));
}

}  // namespace cairn
