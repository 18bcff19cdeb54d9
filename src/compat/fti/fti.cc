// fti.cc — the FTI C API (include/compat/fti/fti.h): its exported calls and
// variables, each call over the process's one FtiClient (fti_client.h),
// errors reported as FTI reports them.
#include "fti.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "cairn/cairn.h"
#include "compat/fti/fti_client.h"

#define FTI_EXPORT_DATA __attribute__((visibility("default")))

extern "C" {
FTI_EXPORT_DATA MPI_Comm FTI_COMM_WORLD = MPI_COMM_NULL;
// Predefined type ids; their sizes are in FtiClient::type_sizes_.
FTI_EXPORT_DATA fti_id_t FTI_CHAR = 0, FTI_SHRT = 1, FTI_INTG = 2, FTI_LONG = 3, FTI_UCHR = 4,
                         FTI_USHT = 5, FTI_UINT = 6, FTI_ULNG = 7, FTI_SFLT = 8, FTI_DBLE = 9,
                         FTI_LDBE = 10;
}

namespace cairn_compat {
namespace {

std::unique_ptr<FtiClient> g_client;  // FTI's API is per process

int Report(const std::string& call, const Status& st, int ok_code = FTI_SCES) {
  if (st.ok()) return ok_code;
  ReportError(kFtiPeer, call + ": " + st.message());
  return FTI_NSCS;
}

FtiClient* Client(const char* call) {
  if (!g_client) Report(call, Status::Error("FTI is not initialized"));
  return g_client.get();
}

}  // namespace
}  // namespace cairn_compat

using cairn_compat::Client;
using cairn_compat::Report;

#define FTI_EXPORT extern "C" __attribute__((visibility("default")))

FTI_EXPORT int FTI_Init(const char* configFile, MPI_Comm globalComm) {
  // FTI_Init again without FTI_Finalize starts FTI over (FTI's "live
  // restart", corner case 4): the running instance ends as an interrupted
  // run would, keeping its checkpoints, so the new one finds them
  // (FTI_Status() == 1) and the program can FTI_Recover. Its protected
  // variables are forgotten, as FTI forgets them.
  if (cairn_compat::g_client) {
    cairn_compat::Status ended = cairn_compat::g_client->EndKeepingCheckpoints();
    cairn_compat::g_client.reset();
    if (!ended.ok()) {
      // Every rank goes on to the new instance's collective init, which
      // reports whatever the failure left behind.
      cairn_compat::ReportError(cairn_compat::kFtiPeer,
                                "FTI_Init: ending the running instance: " + ended.message());
    }
  }
  auto client = std::make_unique<cairn_compat::FtiClient>();
  auto st = client->Init(configFile, globalComm);
  if (st.ok()) cairn_compat::g_client = std::move(client);
  return Report("FTI_Init", st);
}

FTI_EXPORT int FTI_Status(void) {
  auto* c = Client("FTI_Status");
  return c ? c->status() : FTI_NSCS;
}

FTI_EXPORT int FTI_InitType(fti_id_t* type, int size) {
  auto* c = Client("FTI_InitType");
  if (!c) return FTI_NSCS;
  if (type == nullptr) return Report("FTI_InitType", cairn_compat::Status::Error("type is NULL"));
  auto id = c->InitType(size);
  if (!id.ok()) return Report("FTI_InitType", id.status());
  *type = *id;
  return FTI_SCES;
}

FTI_EXPORT int FTI_Protect(int id, void* ptr, int64_t count, fti_id_t tid) {
  auto* c = Client("FTI_Protect");
  return c ? Report("FTI_Protect", c->Protect(id, ptr, count, tid)) : FTI_NSCS;
}

FTI_EXPORT int FTI_Checkpoint(int id, int level) {
  auto* c = Client("FTI_Checkpoint");
  return c ? Report("FTI_Checkpoint", c->Checkpoint(id, level), FTI_DONE) : FTI_NSCS;
}

FTI_EXPORT int FTI_Recover(void) {
  auto* c = Client("FTI_Recover");
  if (!c) return FTI_NSCS;
  auto recovered = c->Recover();
  if (!recovered.ok()) {
    Report("FTI_Recover", recovered.status());
    return FTI_NREC;
  }
  return *recovered ? FTI_SCES : FTI_NREC;
}

FTI_EXPORT int FTI_Snapshot(void) {
  auto* c = Client("FTI_Snapshot");
  if (!c) return FTI_NSCS;
  auto taken = c->Snapshot();
  if (!taken.ok()) return Report("FTI_Snapshot", taken.status());
  return *taken ? FTI_DONE : FTI_SCES;
}

FTI_EXPORT int FTI_Finalize(void) {
  auto* c = Client("FTI_Finalize");
  if (!c) return FTI_NSCS;
  int rc = Report("FTI_Finalize", c->Finalize());
  cairn_compat::g_client.reset();
  return rc;
}

FTI_EXPORT int64_t FTI_GetStoredSize(int id) {
  auto* c = Client("FTI_GetStoredSize");
  if (!c) return 0;
  auto size = c->StoredSize(id);
  if (!size.ok()) {
    Report("FTI_GetStoredSize", size.status());
    return 0;  // FTI's "unknown"
  }
  return *size;
}

FTI_EXPORT void* FTI_Realloc(int id, void* ptr) {
  auto* c = Client("FTI_Realloc");
  if (!c) return ptr;
  auto grown = c->Realloc(id, ptr);
  if (!grown.ok()) {
    Report("FTI_Realloc", grown.status());
    return ptr;  // as FTI: the old buffer stays valid
  }
  return *grown;
}

FTI_EXPORT int FTI_RecoverVarInit(void) {
  auto* c = Client("FTI_RecoverVarInit");
  return c ? Report("FTI_RecoverVarInit", c->RecoverVarInit()) : FTI_NSCS;
}

FTI_EXPORT int FTI_RecoverVar(int id) {
  auto* c = Client("FTI_RecoverVar");
  return c ? Report("FTI_RecoverVar", c->RecoverVar(id)) : FTI_NSCS;
}

FTI_EXPORT int FTI_RecoverVarFinalize(void) {
  auto* c = Client("FTI_RecoverVarFinalize");
  return c ? Report("FTI_RecoverVarFinalize", c->RecoverVarFinalize()) : FTI_NSCS;
}

FTI_EXPORT int FTI_InitGroup(FTIT_H5Group* h5group, const char* name, FTIT_H5Group* parent) {
  auto* c = Client("FTI_InitGroup");
  return c ? Report("FTI_InitGroup", c->InitGroup(h5group, name, parent)) : FTI_NSCS;
}

FTI_EXPORT int FTI_RenameGroup(FTIT_H5Group* h5group, const char* name) {
  if (!Client("FTI_RenameGroup")) return FTI_NSCS;
  if (h5group == nullptr || name == nullptr || std::strlen(name) >= FTI_BUFS) {
    return Report("FTI_RenameGroup", cairn_compat::Status::Error("group or name is NULL or too long"));
  }
  std::snprintf(h5group->name, FTI_BUFS, "%s", name);
  return FTI_SCES;
}

FTI_EXPORT int FTI_DefineDataset(int id, int rank, int64_t* dimLength, const char* name,
                                 FTIT_H5Group* h5group) {
  auto* c = Client("FTI_DefineDataset");
  return c ? Report("FTI_DefineDataset", c->DefineDataset(id, rank, dimLength, name)) : FTI_NSCS;
}

FTI_EXPORT fti_id_t FTI_InitCompositeType(const char* name, size_t size, FTIT_H5Group* h5g) {
  auto* c = Client("FTI_InitCompositeType");
  if (!c) return FTI_NSCS;
  if (size > static_cast<size_t>(INT32_MAX)) {
    return Report("FTI_InitCompositeType", cairn_compat::Status::Error("size is too large"));
  }
  auto id = c->InitType(static_cast<int>(size));
  if (!id.ok()) return Report("FTI_InitCompositeType", id.status());
  c->WarnHdf5Once(/*hdf5_only_call=*/false);
  return *id;
}

FTI_EXPORT int FTI_AddScalarField(fti_id_t id, const char* name, fti_id_t fid, int64_t offset) {
  auto* c = Client("FTI_AddScalarField");
  return c ? Report("FTI_AddScalarField", c->AddField(id, fid, offset, 1)) : FTI_NSCS;
}

FTI_EXPORT int FTI_AddVectorField(fti_id_t id, const char* name, fti_id_t tid, int64_t offset,
                                  int ndims, int64_t* dim_sizes) {
  auto* c = Client("FTI_AddVectorField");
  if (!c) return FTI_NSCS;
  if (ndims < 0 || (ndims > 0 && dim_sizes == nullptr)) {
    return Report("FTI_AddVectorField", cairn_compat::Status::Error("ndims < 0 or dim_sizes is NULL"));
  }
  int64_t elements = 1;
  for (int d = 0; d < ndims; ++d) elements *= dim_sizes[d];
  return Report("FTI_AddVectorField", c->AddField(id, tid, offset, elements));
}
