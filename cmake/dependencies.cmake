# Third-party libraries, all from Debian packages (scripts/bootstrap.sh installs them).
find_package(PkgConfig REQUIRED)
find_package(MPI REQUIRED COMPONENTS C CXX)
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json REQUIRED)
pkg_check_modules(ISAL REQUIRED IMPORTED_TARGET libisal)
# Page digests for deduplication (src/dedup): xxh3 and SHA-1/SHA-256.
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
# libpmem2 maps files for the pmem tier and persistent arrays and tells real
# persistent memory from an ordinary file (env/pmem_map.cc); without it Cairn
# maps with mmap and treats every file as ordinary.
option(CAIRN_ENABLE_PMEM "Use libpmem2 for persistent-memory mappings" ON)
if(CAIRN_ENABLE_PMEM)
  pkg_check_modules(PMEM2 IMPORTED_TARGET libpmem2)
endif()
if(CAIRN_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
