# `cairn profile` (I/O profiler command), included from src/cli/CMakeLists.txt;
# the `cairn` binary links cairn_cli_profile and calls
# cairn::AddProfileCommand(app, exit_code) from main.cc.
#
# The command's MPI entry point (api/process_comm.h) is its own small library
# rather than part of libcairn: it initializes MPI for a tool launched by
# mpirun, which an application linking libcairn does itself.
add_library(cairn_api_process STATIC ${PROJECT_SOURCE_DIR}/src/api/process_comm.cc)
target_include_directories(cairn_api_process PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>)
target_link_libraries(cairn_api_process PUBLIC cairn_comm cairn_base MPI::MPI_C)

cairn_unit_test(cairn_api_process_test
  SOURCES ${PROJECT_SOURCE_DIR}/src/api/process_comm_test.cc
  DEPS cairn_api_process)

add_library(cairn_cli_profile STATIC ${CMAKE_CURRENT_LIST_DIR}/profile_command.cc)
target_include_directories(cairn_cli_profile PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>)
# cairn_cli_store provides LoadCliConfig (inventory.h).
target_link_libraries(cairn_cli_profile PUBLIC cairn_cli_store cairn_runtime cairn_model
  cairn_env cairn_api_process CLI11::CLI11 fmt::fmt)
