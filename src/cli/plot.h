// Figures for the `cairn` commands (`cairn model --plot`, `cairn status
// --plot`). The command computes the figure's data and hands it, as JSON in
// a temporary file, to scripts/cairn_plot.py, which draws it with matplotlib
// and writes the PNG: drawing stays in a language with a plotting library,
// and everything the figure shows is computed (and tested) in C++. The
// data's "kind" member ("model", "status") selects the figure.
//
// The script is looked for where this build put it: in the source tree the
// binary was built from (a build-tree `cairn`), then where `cmake --install`
// puts it (<prefix>/share/cairn/cairn_plot.py). The source tree comes first
// so that a build-tree binary never runs an older installed copy.
// Thread-safety: not thread-safe (runs a child process; writes to stderr).
#ifndef CAIRN_CLI_PLOT_H_
#define CAIRN_CLI_PLOT_H_

#include <string>

#include "base/status.h"
#include "base/json.h"

namespace cairn {

// Draws `data` into png_path with `python3 cairn_plot.py DATA.json PNG`,
// python3 being the first on PATH that has matplotlib. The data file is
// written next to png_path, whose
// directory must be writable anyway, and removed afterwards. The script's
// own messages go to stderr, never to stdout (which may carry --json).
// Errors, each saying what to do: kNotFound when python3 or the script is
// missing; kUnsupported when no python3 has matplotlib; kIo when the data
// file or the PNG cannot be written, or the script fails otherwise.
Status DrawPlot(const Json& data, const std::string& png_path);

}  // namespace cairn

#endif  // CAIRN_CLI_PLOT_H_
