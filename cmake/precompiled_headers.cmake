# Precompiled third-party headers (CAIRN_PCH, on by default). CLI11 is
# header-only and takes seconds to compile in every translation unit that
# includes it, GoogleTest about two; the cli commands, the benchmarks and
# the GoogleTest programs reuse one precompiled copy each instead, which
# takes about a third off a fresh build. The library's own modules are
# built without one, so that their includes stay complete.
option(CAIRN_PCH "Precompile the heavy third-party headers of tests, cli and bench" ON)

# cairn_pch_anchor(NAME FOR executables|libraries LIBS ... HEADERS ...): an
# object library that only builds the precompiled header the targets of
# that kind reuse. A precompiled header is used only with the flags it was
# made with, and code is position-independent as an executable's (-fPIE)
# or as a library's (-fPIC): one anchor for each.
function(cairn_pch_anchor name)
  if(NOT CAIRN_PCH)
    return()
  endif()
  cmake_parse_arguments(P "" "FOR" "LIBS;HEADERS" ${ARGN})
  add_library(${name} OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch_anchor.cc)
  target_link_libraries(${name} PRIVATE ${P_LIBS})
  set_property(TARGET ${name} PROPERTY CAIRN_PCH_LIBS ${P_LIBS})
  target_precompile_headers(${name} PRIVATE ${P_HEADERS})
  if(P_FOR STREQUAL "executables" AND CMAKE_POSITION_INDEPENDENT_CODE)
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
    target_compile_options(${name} PRIVATE -fPIE)
  endif()
endfunction()

# cairn_use_pch(TARGET ANCHOR): TARGET's C++ sources start from ANCHOR's
# precompiled header. TARGET also gets the anchor's libraries' usage
# requirements (FMT_SHARED from fmt::fmt, say): a header precompiled under
# other definitions is not used (-Winvalid-pch says so).
function(cairn_use_pch target anchor)
  if(CAIRN_PCH AND TARGET ${anchor})
    target_precompile_headers(${target} REUSE_FROM ${anchor})
    get_target_property(libraries ${anchor} CAIRN_PCH_LIBS)
    target_link_libraries(${target} PRIVATE ${libraries})
  endif()
endfunction()

set(CAIRN_PCH_CLI_HEADERS <CLI/CLI.hpp> <nlohmann/json.hpp> <fmt/format.h> <functional> <map>
    <memory> <string> <vector>)
if(CAIRN_BUILD_TESTS)
  cairn_pch_anchor(cairn_pch_gtest FOR executables LIBS GTest::gtest fmt::fmt
    HEADERS <gtest/gtest.h> <fmt/format.h> <functional> <map> <memory> <string> <vector>)
endif()
# The cli commands' static libraries, and the benchmarks and the cairn program.
cairn_pch_anchor(cairn_pch_cli FOR libraries
  LIBS CLI11::CLI11 nlohmann_json::nlohmann_json fmt::fmt HEADERS ${CAIRN_PCH_CLI_HEADERS})
# The cli's libraries whose sources do not parse command lines: CLI11 left
# out, whose inline definitions cost seconds of code generation in every
# translation unit even when precompiled.
cairn_pch_anchor(cairn_pch_cli_json FOR libraries
  LIBS nlohmann_json::nlohmann_json fmt::fmt
  HEADERS <nlohmann/json.hpp> <fmt/format.h> <functional> <map> <memory> <string> <vector>)
cairn_pch_anchor(cairn_pch_cli_programs FOR executables
  LIBS CLI11::CLI11 nlohmann_json::nlohmann_json fmt::fmt HEADERS ${CAIRN_PCH_CLI_HEADERS})

# Every GoogleTest program defined so far in the calling directory reuses
# cairn_pch_gtest (tests/ defines them with add_executable directly).
function(cairn_use_gtest_pch_in_directory)
  get_property(targets DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target ${targets})
    get_target_property(libraries ${target} LINK_LIBRARIES)
    if(libraries AND "GTest::gtest" IN_LIST libraries)
      cairn_use_pch(${target} cairn_pch_gtest)
    endif()
  endforeach()
endfunction()
