// cairn.hpp — the C++ API of Cairn: the same engine as cairn.h, with
// [[nodiscard]] Status results, typed regions and a session that finalizes
// when it goes out of scope. Header-only over the C API; no exception is
// thrown. Thread-safety and error rules: as cairn.h (one session per
// process; docs/api.md).
#ifndef CAIRN_CAIRN_HPP_
#define CAIRN_CAIRN_HPP_

#include <memory>
#include <string>
#include <vector>

#include "cairn/cairn.h"

namespace cairn {
// The inline namespace keeps these names apart, at link level, from the
// library's internal classes, also when libcairn is linked statically.
inline namespace v1 {

// The outcome of a call: code() is a cairn_status; message() names the cause.
// Built right after the C call it reports on, so that the message is that
// call's (cairn.h: error rules).
class [[nodiscard]] Status {
 public:
  Status() = default;
  explicit Status(int code) : code_(code < 0 ? code : CAIRN_SUCCESS) {
    if (code_ != CAIRN_SUCCESS) message_ = cairn_error_message(code_);
  }
  bool ok() const { return code_ == CAIRN_SUCCESS; }
  int code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  int code_ = CAIRN_SUCCESS;
  std::string message_;
};

// This thread's last error (cairn_last_error, CAIRN_LAST_ERROR): ok if the
// last Cairn call succeeded. For calls whose result is not a Status, such as
// Session::RestartTest's -1.
inline Status LastError() { return Status(cairn_last_error()); }

// One Cairn instance for this process. Create with Session::Init; the
// destructor calls cairn_finalize (collective) if Finalize was not called.
class Session {
 public:
#ifndef CAIRN_NO_MPI
  // Collective over comm. config_path empty: $CAIRN_CONFIG or defaults.
  static std::unique_ptr<Session> Init(MPI_Comm comm, const std::string& config_path,
                                       Status* status) {
    *status = Status(cairn_init(comm, config_path.empty() ? nullptr : config_path.c_str()));
    return status->ok() ? std::unique_ptr<Session>(new Session()) : nullptr;
  }
#endif
  static std::unique_ptr<Session> InitSingle(const std::string& config_path, Status* status) {
    *status = Status(cairn_init_single(config_path.empty() ? nullptr : config_path.c_str()));
    return status->ok() ? std::unique_ptr<Session>(new Session()) : nullptr;
  }
  ~Session() {
    if (!finalized_) (void)Finalize();
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // REQUIRES: data outlives the registration and is not reallocated.
  template <typename T>
  Status Protect(int id, T* data, size_t count) {
    return Status(cairn_protect(id, data, count, sizeof(T)));
  }
  template <typename T>
  Status Protect(int id, std::vector<T>& data) {
    return Protect(id, data.data(), data.size());
  }
  Status Unprotect(int id) { return Status(cairn_unprotect(id)); }
  // durable: this version goes to the SSD tier whatever the placement
  // policy (CAIRN_CHECKPOINT_DURABLE).
  Status Checkpoint(const std::string& name, int version, bool durable = false) {
    return Status(cairn_checkpoint_flags(name.c_str(), version,
                                         durable ? CAIRN_CHECKPOINT_DURABLE : 0u));
  }
  // What the last successful Checkpoint did (skipped, tier, rule, time).
  // Sets info->size itself (cairn.h: ABI rules).
  Status LastCheckpoint(cairn_checkpoint_info* info) const {
    *info = CAIRN_CHECKPOINT_INFO_INIT;
    return Status(cairn_last_checkpoint(info));
  }
  // Waits for the background drains. A failed drain does not fail it:
  // LastWait says how many drains failed and why.
  Status Wait() { return Status(cairn_checkpoint_wait()); }
  // What the drains did up to the last Wait (done, failed, superseded, the
  // last failure). Sets info->size itself (cairn.h: ABI rules).
  Status LastWait(cairn_wait_info* info) const {
    *info = CAIRN_WAIT_INFO_INIT;
    return Status(cairn_last_wait(info));
  }
  // Collective: whether a checkpoint is due by [placement] interval.
  Status ShouldCheckpoint(bool* due) {
    int rc = cairn_should_checkpoint();
    if (rc >= 0) {
      *due = rc == 1;
      return Status();
    }
    return Status(rc);
  }
  // Newest version every rank can recover, or -1: then LastError() says
  // whether an error (and which) or plain absence was the reason.
  int RestartTest(const std::string& name, int max_version = -1) {
    return cairn_restart_test(name.c_str(), max_version);
  }
  // Restores `version` (or an older one if it cannot be recovered);
  // *restored receives the version actually used.
  Status Restart(const std::string& name, int version, int* restored) {
    int rc = cairn_restart(name.c_str(), version);
    if (rc >= 0) {
      *restored = rc;
      return Status();
    }
    return Status(rc);
  }
  // What the last successful Restart did (tier, rollback distance).
  // Sets info->size itself (cairn.h: ABI rules).
  Status LastRestart(cairn_restart_info* info) const {
    *info = CAIRN_RESTART_INFO_INIT;
    return Status(cairn_last_restart(info));
  }
  // Collective: removes every version of name from every tier (cairn_delete).
  Status Delete(const std::string& name) { return Status(cairn_delete(name.c_str())); }
  // Collective: removes one version of name from every tier (cairn_delete_version).
  Status DeleteVersion(const std::string& name, int version) {
    return Status(cairn_delete_version(name.c_str(), version));
  }
  Status RouteFile(const std::string& logical, std::string* path) {
    std::vector<char> buffer(4096);
    int rc = cairn_route_file(logical.c_str(), buffer.data(), buffer.size());
    if (rc == CAIRN_SUCCESS) *path = buffer.data();
    return Status(rc);
  }
  Status Finalize() {
    finalized_ = true;
    return Status(cairn_finalize());
  }

 private:
  Session() = default;
  bool finalized_ = false;
};

// A multi-version distributed array of T (cairn.h: "Multi-version
// distributed arrays"; docs/varray.md). Create is collective; the
// destructor destroys the array (collective) unless Destroy was called.
// Indexes and counts are in elements of T.
template <typename T>
class VersionedArray {
 public:
#ifndef CAIRN_NO_MPI
  static std::unique_ptr<VersionedArray> Create(MPI_Comm comm, const std::string& name,
                                                unsigned long long length,
                                                const cairn_varray_options& options,
                                                Status* status) {
    cairn_varray handle = nullptr;
    *status = Status(cairn_varray_create(comm, name.c_str(), length, sizeof(T), &options, &handle));
    return status->ok() ? std::unique_ptr<VersionedArray>(new VersionedArray(handle)) : nullptr;
  }
#endif
  static std::unique_ptr<VersionedArray> CreateSingle(const std::string& name,
                                                      unsigned long long length,
                                                      const cairn_varray_options& options,
                                                      Status* status) {
    cairn_varray handle = nullptr;
    *status = Status(
        cairn_varray_create_single(name.c_str(), length, sizeof(T), &options, &handle));
    return status->ok() ? std::unique_ptr<VersionedArray>(new VersionedArray(handle)) : nullptr;
  }
  ~VersionedArray() { (void)Destroy(); }
  VersionedArray(const VersionedArray&) = delete;
  VersionedArray& operator=(const VersionedArray&) = delete;

  Status Put(unsigned long long index, const T* data, unsigned long long count) {
    return Status(cairn_varray_put(handle_, index, count, data));
  }
  Status Put(unsigned long long index, const std::vector<T>& data) {
    return Put(index, data.data(), data.size());
  }
  // Non-blocking: out is filled at Wait.
  Status Get(unsigned long long index, T* out, unsigned long long count) {
    return Status(cairn_varray_get(handle_, index, count, out));
  }
  Status Wait() { return Status(cairn_varray_wait(handle_)); }
  // type: the cairn_varray_type whose size is sizeof(T).
  Status Acc(unsigned long long index, const T* values, unsigned long long count,
             cairn_varray_type type) {
    return Status(cairn_varray_acc(handle_, index, count, values, type));
  }
  Status GetVersion(long long version, unsigned long long index, T* out,
                    unsigned long long count) {
    return Status(cairn_varray_get_version(handle_, version, index, count, out));
  }
  Status VersionInc() { return Status(cairn_varray_version_inc(handle_)); }
  long long Version() const {
    long long v = -1;
    (void)cairn_varray_version(handle_, &v);
    return v;
  }
  Status Restore(long long version) { return Status(cairn_varray_restore(handle_, version)); }
  Status Protect(int id) { return Status(cairn_varray_protect(handle_, id)); }
  Status Reload() { return Status(cairn_varray_reload(handle_)); }
  Status DrainWait() { return Status(cairn_varray_drain_wait(handle_)); }
  // Sets info->size itself (cairn.h: ABI rules).
  Status Info(cairn_varray_info* info) const {
    *info = CAIRN_VARRAY_INFO_INIT;
    return Status(cairn_varray_info_get(handle_, info));
  }
  Status Destroy() { return Status(cairn_varray_destroy(&handle_)); }

 private:
  explicit VersionedArray(cairn_varray handle) : handle_(handle) {}
  cairn_varray handle_;
};

}  // namespace v1
}  // namespace cairn

#endif  // CAIRN_CAIRN_HPP_
