// Shell completion for the `thund` command, generated from the CLI11 app
// itself (its subcommands, their options, the choices their validators
// accept), so the scripts cannot drift from the command line.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace thund::cli {

struct CompletionOption {
  std::vector<std::string> names;    // "--format", "-q", ...
  bool takes_value = false;          // false: a flag
  std::vector<std::string> choices;  // from CLI::IsMember; empty: any value (files offered)
  std::string description;
};

struct CompletionCommand {
  std::string name;
  std::string description;
  std::vector<CompletionOption> options;
  std::vector<std::string> positional_choices;  // empty: positionals are files
};

// The subcommands of `app` in registration order. REQUIRES: every subcommand
// is registered (call after all Register* functions).
std::vector<CompletionCommand> DescribeCommands(CLI::App& app);

// One script per shell; `program` is the command's name ("thund").
std::string BashCompletion(const std::vector<CompletionCommand>& commands,
                           const std::string& program);
std::string ZshCompletion(const std::vector<CompletionCommand>& commands,
                          const std::string& program);
std::string FishCompletion(const std::vector<CompletionCommand>& commands,
                           const std::string& program);

}  // namespace thund::cli
