# `cairn model` (energy-aware checkpoint I/O optimizer command), included from
# src/cli/CMakeLists.txt; the `cairn` binary links cairn_cli_model and calls
# cairn::AddModelCommand(app, exit_code) from main.cc.
add_library(cairn_cli_model STATIC ${CMAKE_CURRENT_LIST_DIR}/model_command.cc)
target_include_directories(cairn_cli_model PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>)
target_link_libraries(cairn_cli_model PUBLIC cairn_model cairn_env cairn_cli_plot CLI11::CLI11 fmt::fmt)
