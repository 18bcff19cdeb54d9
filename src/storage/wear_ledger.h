// WearLedger: how many bytes Cairn has written to one SSD, kept on that SSD
// across runs, and how fast it is being written — the PBW_used and B_SSD of
// the Checkpoint Location Controller (policy/clc.h, paper Eq. (1) and (2)).
//
// Layout. A device's ledger is a directory, by default
// <ssd tier root>/.wear/dev-<major>-<minor> (WearLedgerDir). Every process
// that writes to the device owns one *writer* in it, named by the caller
// (the engine uses the rank's index on its node: "r0", "r1", ...), stored as
// two slot files <writer>.0 and <writer>.1. The device's count is the sum
// over all writers found in the directory.
//
// Why one writer per process and not one shared file: the ranks of a node
// update the ledger concurrently, and Env has no file locks. With a shared
// file, two ranks that read the same total and each write back total + own
// bytes lose one rank's bytes (the last rename wins). With a file per
// writer nobody ever writes another's file, so concurrent updates cannot
// lose counts, and a reader always sees whole files (rename is atomic). A
// writer name is reused by the next run (the same local rank), which then
// continues that writer's count; so the directory holds as many writers as
// the largest number of ranks a node ever ran, not one per run. Two jobs
// running at once on one node with the same ledger directory must use
// different writer names (see the REQUIRES on WearLedgerOptions::writer).
//
// Why two slots: every update goes through Env::WriteFileAtomic (temporary
// file, fsync, rename, fsync of the directory), alternating between the
// slots, and never into the slot that holds the newest durable state. Each
// slot carries a sequence number and a CRC32C; a reader takes the newest
// valid slot. A SIGKILL at any point of an update leaves the other slot
// intact, and so does a power loss even where a rename over an existing
// file that was not yet made durable loses *both* names (the pessimistic
// model FaultEnv::DropUnsyncedData implements): at most that one update is
// lost, never the history. docs/clc.md shows the file format.
//
// Time series. Each writer keeps (wall time, cumulative bytes) samples, at
// most max_samples of them: when full, an interior sample is dropped where
// samples are densest relative to their age, so that recent history stays
// fine-grained (for B_SSD over a window) while old history thins out (for
// the `cairn status` plot). The first sample is never dropped, so a
// writer's count before its first sample is exactly zero.
//
// The kernel's view. Where the tier's block device is known (DeviceOf in
// env/device.h) and has a /sys entry, WearLedger::Read also reads the
// device's sectors-written counter (/sys/block/<disk>/stat, field 7) and
// computes the device's write rate from the readings this process made.
// It sees every write to the device (other programs, file system journal),
// but restarts at zero on every boot, so it cannot give lifetime totals:
// PBW_used always comes from the ledger; B_SSD is the larger of the two
// rates, and WearReading says which one it is. All /sys reads go through Env
// under a `sysfs_root` ("/sys" by default) so tests use a fake tree.
//
// Thread-safety: a WearLedger is thread-safe (the application thread and
// the flusher may both record SSD writes). The free functions are reentrant.
// Several processes may use one ledger directory at once, each with its own
// writer name.
#ifndef CAIRN_STORAGE_WEAR_LEDGER_H_
#define CAIRN_STORAGE_WEAR_LEDGER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "env/device.h"
#include "env/env.h"

namespace cairn {

// One point of a cumulative series: `bytes` written in total by `time`
// (wall-clock seconds since the Unix epoch: the series outlives processes
// and reboots, so a monotonic clock would not do).
struct WearSample {
  double time = 0;
  uint64_t bytes = 0;
  friend bool operator==(const WearSample&, const WearSample&) = default;
};

// What one writer's slot file holds.
struct WearWriterState {
  std::string writer;
  uint64_t seq = 0;       // updates made durable so far (0: never written)
  double created = 0;     // wall seconds when the writer first opened the ledger
  uint64_t bytes = 0;     // cumulative bytes this writer has recorded
  std::vector<WearSample> series;  // strictly increasing times; back().bytes == bytes

  // Cumulative bytes at wall time t: the last sample at or before t (0
  // before the first sample).
  uint64_t BytesAt(double t) const;
};

inline constexpr size_t kDefaultWearSamples = 256;
// Decoding refuses slot files with more samples than this.
inline constexpr size_t kMaxWearSamples = 65536;

// A writer name: 1-64 characters of [A-Za-z0-9_-].
bool ValidWearWriterName(const std::string& name);

// The slot file's bytes (JSON, version 2, see docs/clc.md) and back. Decode
// also reads version-1 (text) slots, which older runs left behind; it checks
// the format, every field, the sample order and the CRC32C; kCorrupt names
// what is wrong. Exposed for tests and for `cairn status`.
std::string EncodeWearFile(const WearWriterState& state);
Result<WearWriterState> DecodeWearFile(const std::string& bytes);

// Adds a sample (time, cumulative bytes) to `series` and, when it then has
// more than max_samples (>= 3) samples, drops one interior sample (see the
// header comment). A time earlier than the last sample is treated as the
// last sample's time (clocks can step back); a sample at the last sample's
// time replaces it.
void AddWearSample(std::vector<WearSample>* series, WearSample sample, size_t max_samples);

// All writers of one ledger directory, read at one moment.
struct WearLedgerSnapshot {
  std::string dir;
  std::vector<WearWriterState> writers;  // sorted by name
  uint64_t bytes = 0;                    // sum over writers
  double created = 0;                    // earliest `created` of any writer; 0: none
  // Non-fatal trouble, one line each: slot files that failed to decode (a
  // writer with no valid slot contributes nothing, and is named here).
  std::vector<std::string> problems;

  // Sum over writers of WearWriterState::BytesAt(t).
  uint64_t BytesAt(double t) const;
  // The device's cumulative series: one sample at every time any writer has
  // one, valued BytesAt(that time). At most writers x max_samples points.
  std::vector<WearSample> Series() const;
  // Mean write rate (bytes/s) over the span (start, now], where start is the
  // latest of now - window (window <= 0: no limit), not_before and
  // `created` — so that a young ledger is not credited with time before it
  // existed. The span counts as at least 1 s. 0 when nothing was written in
  // it or there are no writers.
  double Bandwidth(double now, double window, double not_before) const;
  // The start of the span Bandwidth(now, window, not_before) uses.
  double SpanStart(double now, double window, double not_before) const;
};

// Reads every writer in dir (slot files <writer>.0 / <writer>.1; anything
// else, such as temporaries left by a killed update, is ignored). A missing
// directory is an empty ledger. Errors: kIo when dir cannot be listed.
Result<WearLedgerSnapshot> ReadWearLedger(Env* env, const std::string& dir);

// <tier_root>/.wear/dev-<major>-<minor>, or <tier_root>/.wear/dev-unknown
// when the device is not known. Tiers skip dot-directories, so the ledger is
// never mistaken for a checkpoint name.
std::string WearLedgerDir(const std::string& tier_root, const std::optional<DeviceNumber>& device);

// --- The kernel's counters (/sys), all read through Env under sysfs_root.

struct BlockDevice {
  std::string name;       // the whole disk ("sda", "nvme0n1", "vda")
  std::string partition;  // the partition holding the file system, or ""
  std::string stat_path;  // <sysfs_root>/block/<name>/stat
};

// The whole disk behind device numbers: reads
// <sysfs_root>/dev/block/<major>:<minor>/uevent (DEVNAME, DEVTYPE); for a
// partition, finds the disk <d> under <sysfs_root>/block that has a
// <d>/<partition> entry. The disk, not the partition, is what wears out.
// kNotFound for anonymous devices (tmpfs, overlayfs: major 0) and devices
// without a /sys entry; kCorrupt for a uevent file without DEVNAME.
Result<BlockDevice> ResolveBlockDevice(Env* env, const std::string& sysfs_root, DeviceNumber device);

// Bytes written to the disk since boot: field 7 (sectors written) of its
// stat file times 512 (the kernel counts 512-byte sectors whatever the
// device's sector size). kCorrupt if the file has fewer than 7 fields.
Result<uint64_t> ReadDeviceBytesWritten(Env* env, const BlockDevice& device);

// --- The ledger of one process.

struct WearLedgerOptions {
  std::string dir;     // WearLedgerDir(...)
  // REQUIRES: ValidWearWriterName, and unique among the processes that use
  // dir at the same time (two processes with one writer name would
  // overwrite each other's counts).
  std::string writer;
  size_t max_samples = kDefaultWearSamples;  // >= 3
  // fsync each update (the ledger must survive power loss; false only for
  // tests on an in-memory env, where it changes nothing).
  bool sync = true;
  // The device to read kernel counters for (none: ledger only).
  std::optional<DeviceNumber> device;
  std::string sysfs_root = "/sys";
  // Kernel readings kept in memory for the device's rate.
  size_t max_device_samples = 4096;
};

// Which counter B_SSD comes from.
enum class WearSource { kLedger = 0, kSysfs = 1 };
const char* WearSourceName(WearSource source);

// Everything the controller and `cairn status` need about one device, at
// one moment.
struct WearReading {
  double time = 0;                // wall seconds of the reading
  WearLedgerSnapshot ledger;      // all writers (this one's in-memory state included)
  uint64_t ledger_bytes = 0;      // == ledger.bytes: what PBW_used counts
  double span_start = 0;          // the window actually used for the ledger rate
  double ledger_bandwidth = 0;    // bytes/s over (span_start, time]

  bool device_known = false;      // the disk was resolved and its counter read
  BlockDevice device;
  uint64_t device_bytes = 0;      // written since boot, per the kernel
  bool device_bandwidth_known = false;  // two readings in the window
  double device_bandwidth = 0;    // bytes/s over this process's readings in the window

  double bandwidth = 0;           // B_SSD = max(ledger_bandwidth, device_bandwidth if known)
  WearSource bandwidth_source = WearSource::kLedger;
  std::vector<std::string> problems;  // ledger problems + why the device is not known
};

class WearLedger {
 public:
  // Creates dir if needed, loads this writer's newest valid slot (a fresh
  // writer starts at zero, created = now), removes temporaries an earlier
  // process of this writer left behind, and resolves options.device under
  // sysfs_root (failure to resolve is not an error: Read reports it).
  // Nothing is written until the first Record.
  // Errors: kInvalidArgument for bad options; kIo when dir cannot be made or
  // listed; kCorrupt when both slots of this writer exist and are corrupt
  // (its history is unknown: starting from zero would under-count wear).
  static Result<std::unique_ptr<WearLedger>> Open(Env* env, const WearLedgerOptions& options,
                                                  double now);

  // Adds `bytes` written to the device by this process, at wall time now,
  // and makes the new total durable before returning. On failure the bytes
  // stay counted in memory and are persisted by the next successful Record
  // (Record(0, now) retries); the slot holding the last durable state is
  // never touched, so a crash still loses at most this update.
  Status Record(uint64_t bytes, double now);

  // Reads all writers (this writer from memory, others from their files)
  // and, if a device is known, its kernel counter; computes both rates over
  // the span WearLedgerSnapshot::Bandwidth describes. Errors: kIo when the
  // directory cannot be listed; a failing /sys read is only a problem line.
  Result<WearReading> Read(double now, double window, double not_before);

  // This writer's state as last recorded (the durable one plus anything a
  // failed Record kept in memory).
  WearWriterState state() const;
  // The resolved disk, if any.
  std::optional<BlockDevice> device() const;
  const WearLedgerOptions& options() const { return options_; }

 private:
  WearLedger(Env* env, WearLedgerOptions options);
  // Writes state_ to the slot that does not hold the newest durable state.
  Status Persist() REQUIRES(mu_);

  Env* const env_;
  const WearLedgerOptions options_;

  mutable Mutex mu_;
  WearWriterState state_ GUARDED_BY(mu_);
  uint64_t durable_seq_ GUARDED_BY(mu_) = 0;  // seq of the newest durable slot
  std::optional<BlockDevice> device_ GUARDED_BY(mu_);
  std::string device_problem_ GUARDED_BY(mu_);  // why device_ is empty
  std::deque<WearSample> device_samples_ GUARDED_BY(mu_);  // kernel readings
};

}  // namespace cairn

#endif  // CAIRN_STORAGE_WEAR_LEDGER_H_
