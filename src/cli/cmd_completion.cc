// thund completion bash|zsh|fish: print (or write) the shell's completion
// script, generated from this binary's own command tree (cli/completion.h).
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/completion.h"

namespace thund::cli {

void RegisterCompletion(CLI::App& app, int* exit_code) {
  struct Options {
    std::string shell;
    std::string output;
  };
  auto o = std::make_shared<Options>();
  auto* c = app.add_subcommand(
      "completion",
      "Print a shell completion script. bash: source it, or put it in "
      "~/.local/share/bash-completion/completions/thund; zsh: put it in a $fpath "
      "directory as _thund; fish: in ~/.config/fish/completions/thund.fish.");
  c->add_option("SHELL", o->shell, "the shell")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  c->add_option("--output,-o", o->output, "write to this file instead of standard output");
  CLI::App* root = &app;
  c->callback([o, root, exit_code] {
    const auto commands = DescribeCommands(*root);
    const std::string script = o->shell == "bash"  ? BashCompletion(commands, "thund")
                               : o->shell == "zsh" ? ZshCompletion(commands, "thund")
                                                   : FishCompletion(commands, "thund");
    if (o->output.empty()) {
      std::cout << script;
    } else {
      std::ofstream out(o->output, std::ios::binary | std::ios::trunc);
      out << script;
      if (!out.flush()) {
        std::cerr << "error: cannot write " << o->output << "\n";
        *exit_code = kFailed;
        return;
      }
    }
    *exit_code = kOk;
  });
}

}  // namespace thund::cli
