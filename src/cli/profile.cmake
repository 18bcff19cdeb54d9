# `cairn profile` (I/O profiler command), included from src/cli/CMakeLists.txt;
# the `cairn` binary links cairn_cli_profile and calls
# cairn::AddProfileCommand(app, exit_code) from main.cc.
add_library(cairn_cli_profile STATIC ${CMAKE_CURRENT_LIST_DIR}/profile_command.cc)
target_include_directories(cairn_cli_profile PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>)
# cairn_cli_store provides LoadCliConfig (inventory.h).
target_link_libraries(cairn_cli_profile PUBLIC cairn_cli_store cairn_runtime cairn_model
  cairn_env CLI11::CLI11 fmt::fmt)
