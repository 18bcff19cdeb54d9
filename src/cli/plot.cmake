# Figures of `cairn model --plot` and `cairn status --plot` (cli/plot.h),
# included from src/cli/CMakeLists.txt: the C++ side (cairn_cli_plot) and the
# matplotlib script it runs, installed beside the `cairn` command.
add_library(cairn_cli_plot STATIC ${CMAKE_CURRENT_LIST_DIR}/plot.cc)
target_include_directories(cairn_cli_plot PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>)
target_link_libraries(cairn_cli_plot PUBLIC cairn_model cairn_env fmt::fmt)
set(CAIRN_PLOT_SCRIPT ${PROJECT_SOURCE_DIR}/scripts/cairn_plot.py)
set(CAIRN_PLOT_SCRIPT_DIR ${CMAKE_INSTALL_DATADIR}/cairn)
target_compile_definitions(cairn_cli_plot PRIVATE
  CAIRN_PLOT_SCRIPT_SOURCE="${CAIRN_PLOT_SCRIPT}"
  CAIRN_PLOT_SCRIPT_INSTALLED="${CMAKE_INSTALL_FULL_DATADIR}/cairn/cairn_plot.py")
install(PROGRAMS ${CAIRN_PLOT_SCRIPT} DESTINATION ${CAIRN_PLOT_SCRIPT_DIR})
