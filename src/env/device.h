// The block device behind a path: the device numbers (major:minor) of the
// file system that holds it, as stat(2) reports them in st_dev. The SSD
// wear ledger uses them to find the device's counters under
// /sys/dev/block/MAJ:MIN (storage/wear_ledger.h).
//
// Why a free function and not an Env method: a device is a property of the
// real file system only (the in-memory env has none, and FaultEnv would only
// forward it), and no other caller needs it. It lives in env/ because env/ is
// the only layer that calls the file system. Callers on an in-memory env do
// not call it; they pass device numbers of their own (or none).
// Thread-safety: reentrant.
#ifndef CAIRN_ENV_DEVICE_H_
#define CAIRN_ENV_DEVICE_H_

#include <cstdint>
#include <string>

#include "base/status.h"

namespace cairn {

struct DeviceNumber {
  uint32_t major = 0;
  uint32_t minor = 0;

  // "8:1", the name of the device's directory under /sys/dev/block.
  std::string ToString() const;
  // Major 0 is the kernel's "unnamed" device class: tmpfs, overlayfs, NFS,
  // btrfs subvolumes... There is no block device (and no /sys counter)
  // behind such a file system.
  bool IsAnonymous() const { return major == 0; }
  friend bool operator==(const DeviceNumber&, const DeviceNumber&) = default;
};

// The device of the file system holding `path` (which must exist).
// kNotFound when it does not exist; kIo on any other stat(2) failure.
Result<DeviceNumber> DeviceOf(const std::string& path);

}  // namespace cairn

#endif  // CAIRN_ENV_DEVICE_H_
