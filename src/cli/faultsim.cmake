# `cairn faultsim` (DRAM fault simulator command), included from
# src/cli/CMakeLists.txt; the `cairn` binary links cairn_cli_faultsim and
# calls cairn::AddFaultsimCommand(app, exit_code) from main.cc.
add_library(cairn_cli_faultsim STATIC ${CMAKE_CURRENT_LIST_DIR}/faultsim_command.cc)
target_include_directories(cairn_cli_faultsim PUBLIC
  $<BUILD_INTERFACE:${CMAKE_CURRENT_LIST_DIR}/..>)
target_link_libraries(cairn_cli_faultsim PUBLIC cairn_codec cairn_cli_output CLI11::CLI11 fmt::fmt)
target_compile_features(cairn_cli_faultsim PUBLIC cxx_std_20)

cairn_unit_test(cairn_cli_faultsim_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/faultsim_command_test.cc
  DEPS cairn_cli_faultsim)
