# Installation: libcairn (shared and static), the public headers, the
# `cairn` command, a CMake package (find_package(cairn) -> cairn::cairn) and
# a pkg-config file (cairn.pc).
include(CMakePackageConfigHelpers)

install(TARGETS cairn cairn_static EXPORT cairnTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS cairn_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Installed binaries run without LD_LIBRARY_PATH: the `cairn` command finds
# libraries beside the prefix's lib/, and both keep the directories of the
# dependencies they were linked against outside the system paths (Open
# MPI's lib/ on Debian).
set_target_properties(cairn cairn_cli PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
set_target_properties(cairn_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
install(FILES include/cairn/cairn.h include/cairn/cairn.hpp include/cairn/pmem.h
              include/cairn/pmem.hpp
              ${PROJECT_BINARY_DIR}/include/cairn/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cairn)

# The drop-in VeloC, SCR and FTI libraries (docs/compat.md): libcairn_<peer>
# beside libcairn, each peer's header under its usual name in a directory of
# its own, so that -I<prefix>/include/cairn/compat/<peer> and #include <veloc.h>
# (<scr.h>, <fti.h>) work as with the peer.
foreach(peer veloc scr fti)
  if(TARGET cairn_${peer})
    install(TARGETS cairn_${peer} EXPORT cairnTargets
      LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
      INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cairn/compat/${peer})
    install(DIRECTORY include/compat/${peer}/
            DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cairn/compat/${peer})
  endif()
endforeach()

install(EXPORT cairnTargets NAMESPACE cairn:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cairn)
file(WRITE ${PROJECT_BINARY_DIR}/cairnConfig.cmake.in [=[
@PACKAGE_INIT@
include(CMakeFindDependencyMacro)
find_dependency(MPI COMPONENTS C)
include("${CMAKE_CURRENT_LIST_DIR}/cairnTargets.cmake")
]=])
configure_package_config_file(${PROJECT_BINARY_DIR}/cairnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cairnConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cairn)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cairnConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cairnConfig.cmake ${PROJECT_BINARY_DIR}/cairnConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cairn)

configure_file(${PROJECT_SOURCE_DIR}/cmake/cairn.pc.in ${PROJECT_BINARY_DIR}/cairn.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cairn.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
