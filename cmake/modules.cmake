# cairn_module(NAME SOURCES ... DEPS ... [PUBLIC_DEPS ...])
# Builds one layer as the static target cairn_<NAME>; the shared and static
# libcairn are assembled from these. DEPS lists the layers below it that it uses.
set(CAIRN_MODULES "" CACHE INTERNAL "")

function(cairn_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS" ${ARGN})
  add_library(cairn_${name} STATIC ${M_SOURCES})
  target_include_directories(cairn_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>)
  target_compile_definitions(cairn_${name} PRIVATE CAIRN_BUILDING_LIBRARY)
  target_link_libraries(cairn_${name} PUBLIC ${M_DEPS})
  set(CAIRN_MODULES ${CAIRN_MODULES} cairn_${name} CACHE INTERNAL "")
endfunction()

# cairn_unit_program(TARGET ...): programs that tests labelled `unit` run.
# The target cairn_unit_programs builds only these (make test-sanitize).
function(cairn_unit_program)
  set_property(GLOBAL APPEND PROPERTY CAIRN_UNIT_PROGRAMS ${ARGN})
endfunction()

# cairn_unit_test(NAME [SHARDS N] SOURCES ... DEPS ...): one GoogleTest binary
# per module, registered with CTest under the label `unit`. With SHARDS, as N
# tests NAME_1ofN ... (GoogleTest's sharding), so that `ctest -j` spreads a
# long binary over the cores: under the sanitizers, the codec's exhaustive
# tests took 100 s of one core while the other had nothing left to run.
function(cairn_unit_test name)
  if(NOT CAIRN_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "" "SHARDS" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_DEPS} GTest::gtest GTest::gtest_main)
  cairn_use_pch(${name} cairn_pch_gtest)
  if(NOT T_SHARDS)
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 300)
  else()
    math(EXPR last "${T_SHARDS} - 1")
    foreach(index RANGE ${last})
      math(EXPR number "${index} + 1")
      set(test ${name}_${number}of${T_SHARDS})
      add_test(NAME ${test} COMMAND ${name})
      set_tests_properties(${test} PROPERTIES LABELS unit TIMEOUT 300
        ENVIRONMENT "GTEST_TOTAL_SHARDS=${T_SHARDS};GTEST_SHARD_INDEX=${index}")
    endforeach()
  endif()
  cairn_unit_program(${name})
endfunction()
