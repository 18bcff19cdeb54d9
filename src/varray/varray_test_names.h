// For the varray tests only: GoogleTest's name for a VarrayKind parameter
// ("log_rma", "log_msg", "flat"), shared by the unit and MPI suites.
#ifndef CAIRN_VARRAY_VARRAY_TEST_NAMES_H_
#define CAIRN_VARRAY_VARRAY_TEST_NAMES_H_

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "varray/varray.h"

namespace cairn {

inline std::string VarrayKindTestName(const testing::TestParamInfo<VarrayKind>& info) {
  std::string name = VarrayKindName(info.param);
  std::replace(name.begin(), name.end(), '-', '_');  // test names are identifiers
  return name;
}

}  // namespace cairn

#endif  // CAIRN_VARRAY_VARRAY_TEST_NAMES_H_
