#include "compat/common/regions.h"

#include "cairn/cairn.h"

namespace cairn_compat {

Layout LayoutOf(const Regions& regions) {
  Layout layout;
  for (const auto& [id, r] : regions) layout[id] = r.shape;
  return layout;
}

Status CairnRegions::Sync(const Regions& wanted) {
  for (auto it = registered_.begin(); it != registered_.end();) {
    if (wanted.count(it->first)) {
      ++it;
      continue;
    }
    int rc = cairn_unprotect(it->first);
    if (rc < 0 && rc != CAIRN_E_NOT_FOUND) {
      return CairnError(rc, "cairn_unprotect of region " + std::to_string(it->first));
    }
    it = registered_.erase(it);
  }
  for (const auto& [id, r] : wanted) {
    auto have = registered_.find(id);
    if (have != registered_.end() && have->second.ptr == r.ptr && have->second.shape == r.shape) {
      continue;
    }
    int rc = cairn_protect(id, r.ptr, r.shape.count, r.shape.elem_size);
    if (rc < 0) return CairnError(rc, "cairn_protect of region " + std::to_string(id));
    registered_[id] = r;
  }
  return Status();
}

Status RestoreExactly(const std::string& name, int version) {
  int rc = cairn_restart(name.c_str(), version);
  if (rc < 0) {
    return CairnError(rc, "cairn_restart of '" + name + "' version " + std::to_string(version));
  }
  if (rc != version) {
    return Status::Error("version " + std::to_string(version) + " of '" + name +
                         "' is not recoverable; Cairn restored version " + std::to_string(rc) +
                         " instead");
  }
  return Status();
}

Status StagedVersion::Fetch(CairnRegions& cairn, const std::string& name, int version,
                            const Layout& layout, const Regions& afterwards) {
  Clear();
  Regions staging;
  for (const auto& [id, shape] : layout) {
    auto& buf = buffers_[id];
    buf.resize(shape.bytes());
    staging[id] = Region{buf.data(), shape};
  }
  Status st = cairn.Sync(staging);
  restore_error_ = CAIRN_SUCCESS;
  if (st.ok()) {
    st = RestoreExactly(name, version);
    restore_error_ = cairn_last_error();  // before the calls below clear it
  }
  // The application's regions go back to Cairn whatever happened, so that
  // the next checkpoint saves them and not our buffers.
  Status back = cairn.Sync(afterwards);
  if (st.ok()) st = back;
  if (!st.ok()) {
    Clear();
    return st;
  }
  layout_ = layout;
  return Status();
}

const std::vector<char>* StagedVersion::Find(int id) const {
  auto it = buffers_.find(id);
  return it == buffers_.end() ? nullptr : &it->second;
}

void StagedVersion::Clear() {
  buffers_.clear();
  layout_.clear();
}

}  // namespace cairn_compat
