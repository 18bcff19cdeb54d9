#include "cli/plot.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "env/env.h"

namespace cairn {
namespace {

Result<std::string> FindPlotScript(Env* env) {
  for (const char* candidate : {CAIRN_PLOT_SCRIPT_SOURCE, CAIRN_PLOT_SCRIPT_INSTALLED}) {
    if (env->FileExists(candidate)) return std::string(candidate);
  }
  return Error(Code::kNotFound, "the plot script is missing: neither {} nor {} exists",
               CAIRN_PLOT_SCRIPT_SOURCE, CAIRN_PLOT_SCRIPT_INSTALLED);
}

// Runs args[0] and returns its wait status; kNotFound when there is no such
// program. Its stdout goes to our stderr: ours may be --json.
Result<int> Run(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  pid_t pid = 0;
  int err = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err == ENOENT || err == EACCES) return Error(Code::kNotFound, "cannot run {}", args[0]);
  if (err != 0) return ErrnoError(err, "start", args[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return ErrnoError(errno, "wait for", args[0]);
  }
  return status;
}

bool Succeeded(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

// The first python3 on PATH that has matplotlib, not merely the first
// python3: a pyenv or virtualenv python ahead of the system's often lacks
// the python3-matplotlib that scripts/bootstrap.sh installs for Debian's
// own. The probe looks matplotlib up without importing it: silent, fast.
Result<std::string> FindPython(Env* env) {
  const char* path = std::getenv("PATH");
  std::vector<std::string> tried;
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    dirs.remove_prefix(colon == std::string_view::npos ? dirs.size() : colon + 1);
    const std::string python = JoinPath(dir.empty() ? "." : dir, "python3");
    if (!env->FileExists(python)) continue;
    auto probe = Run({python, "-c",
                      "import importlib.util, sys; "
                      "sys.exit(importlib.util.find_spec('matplotlib') is None)"});
    if (!probe.ok() && probe.status().code() == Code::kNotFound) continue;
    CAIRN_RETURN_IF_ERROR(probe.status());
    if (Succeeded(*probe)) return python;
    tried.push_back(python);
  }
  if (tried.empty()) {
    return Error(Code::kNotFound,
                 "python3 is not on PATH: --plot needs python3 with matplotlib (Debian: apt-get "
                 "install python3-matplotlib)");
  }
  std::string names;
  for (const std::string& t : tried) names += (names.empty() ? "" : ", ") + t;
  return Error(Code::kUnsupported,
               "no python3 on PATH has matplotlib, which --plot needs (tried {}; Debian: "
               "apt-get install python3-matplotlib)",
               names);
}

}  // namespace

Status DrawPlot(const Json& data, const std::string& png_path) {
  Env* env = PosixEnv();
  CAIRN_ASSIGN_OR_RETURN(std::string script, FindPlotScript(env));
  CAIRN_ASSIGN_OR_RETURN(std::string python, FindPython(env));
  const std::string data_path = fmt::format("{}.data-{}.json", png_path, ::getpid());
  const std::string text = data.dump();
  Status written = env->WriteFileAtomic(data_path, text.data(), text.size(), false);
  if (!written.ok()) return written.Annotate(fmt::format("cannot write the plot {}", png_path));
  auto status = Run({python, script, data_path, png_path});
  (void)env->DeleteFile(data_path);
  CAIRN_RETURN_IF_ERROR(status.status());
  if (Succeeded(*status)) return Status::Ok();
  if (WIFSIGNALED(*status)) {
    return Error(Code::kIo, "{} was killed by signal {} while drawing {}", script,
                 WTERMSIG(*status), png_path);
  }
  return Error(Code::kIo, "{} failed (exit status {}) drawing {}; its message is above", script,
               WEXITSTATUS(*status), png_path);
}

}  // namespace cairn
