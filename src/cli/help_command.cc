// `sluice help [COMMAND...]`, `sluice completion bash|zsh|fish` and `sluice man`: all read the
// command definitions the other commands registered, so they stay true as commands change.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "sluice/core/error_classes.h"

namespace sluice::cli {
namespace {

std::vector<const CLI::App*> Subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

// The words that may follow a command: its subcommands and its flags.
std::vector<std::string> NextWords(const CLI::App& command) {
  std::vector<std::string> words;
  for (const CLI::App* sub : Subcommands(command)) words.push_back(sub->get_name());
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) words.push_back("--" + name);
    for (const std::string& name : option->get_snames()) words.push_back("-" + name);
  }
  return words;
}

std::string Joined(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

// Every command path ("", "delta", "delta history", ...) with what may follow it.
void CollectPaths(const CLI::App& command, const std::string& path,
                  std::vector<std::pair<std::string, std::vector<std::string>>>* paths) {
  paths->emplace_back(path, NextWords(command));
  for (const CLI::App* sub : Subcommands(command)) {
    CollectPaths(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), paths);
  }
}

std::string BashCompletion(const CLI::App& app) {
  std::vector<std::pair<std::string, std::vector<std::string>>> paths;
  CollectPaths(app, "", &paths);
  std::string script =
      "# bash completion for sluice: source it, or save it as "
      "/etc/bash_completion.d/sluice\n_sluice_words() {\n  case \"$1\" in\n";
  for (const auto& [path, words] : paths) script += "    \"" + path + "\") echo \"" + Joined(words) + "\" ;;\n";
  script +=
      "  esac\n}\n"
      "_sluice() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" path=\"\" word candidate\n"
      "  for word in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do\n"
      "    [[ \"$word\" == -* ]] && continue\n"
      "    candidate=\"${path:+$path }$word\"\n"
      "    [[ -n \"$(_sluice_words \"$candidate\")\" ]] && path=\"$candidate\"\n"
      "  done\n"
      "  COMPREPLY=($(compgen -W \"$(_sluice_words \"$path\")\" -- \"$cur\"))\n"
      "  [[ ${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=($(compgen -f -- \"$cur\"))\n"
      "  return 0\n"
      "}\n"
      "complete -F _sluice sluice\n";
  return script;
}

std::string FishCompletion(const CLI::App& app) {
  std::string script = "# fish completion for sluice: save it as ~/.config/fish/completions/sluice.fish\n";
  for (const CLI::App* sub : Subcommands(app)) {
    std::string description = sub->get_description().substr(0, 60);
    std::erase(description, '\'');  // inside single quotes
    script += "complete -c sluice -f -n '__fish_use_subcommand' -a '" + sub->get_name() + "' -d '" + description + "'\n";
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> paths;
  CollectPaths(app, "", &paths);
  for (const auto& [path, words] : paths) {
    if (path.empty()) continue;
    const std::string last = path.substr(path.rfind(' ') == std::string::npos ? 0 : path.rfind(' ') + 1);
    for (const std::string& word : words) {
      script += "complete -c sluice -n '__fish_seen_subcommand_from " + last + "' ";
      script += word.starts_with("--")  ? "-l " + word.substr(2)
                : word.starts_with("-") ? "-s " + word.substr(1)
                                        : "-f -a " + word;
      script += "\n";
    }
  }
  return script;
}

// Text for a man page: roff's escape, hyphens as \- and no line starting with a control character.
std::string Roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out.push_back(c);
    }
    line_start = c == '\n';
  }
  return out;
}

// The program's description without its leading "sluice: ".
std::string Description(const CLI::App& app) {
  std::string description = app.get_description();
  if (description.starts_with("sluice: ")) description.erase(0, 8);
  return description;
}

// The man page's entry of each command under `command` (whose words are `path`), depth first:
// its description, positionals and options.
void AppendCommands(const CLI::App& command, const std::string& path, std::string* page) {
  for (const CLI::App* sub : Subcommands(command)) {
    const std::string sub_path = path.empty() ? sub->get_name() : path + " " + sub->get_name();
    *page += ".TP\n.B sluice " + Roff(sub_path) + "\n" + Roff(sub->get_description()) + "\n";
    for (const CLI::Option* option : sub->get_options()) {
      if (option == sub->get_help_ptr()) continue;
      *page += ".RS\n.TP\n.B " + Roff(option->get_name(true, true)) + "\n" + Roff(option->get_description()) + "\n.RE\n";
    }
    AppendCommands(*sub, sub_path, page);
  }
}

// sluice(1): every command with its description, positionals and options, as --help gives them.
std::string ManPage(const CLI::App& app) {
  std::string page = ".TH SLUICE 1 \"\" \"sluice " SLUICE_VERSION "\" \"User Commands\"\n"
                     ".SH NAME\nsluice \\- " + Roff(Description(app)) + "\n"
                     ".SH SYNOPSIS\n.B sluice\n[\\-\\-config \\fIFILE\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR...]\n"
                     ".SH COMMANDS\n";
  AppendCommands(app, "", &page);
  page +=
      ".SH EXIT STATUS\n0 success; 1 a command that failed (its error class on standard error); 2 invalid input "
      "(an unknown command or flag, a missing argument, a bad project file).\n"
      ".SH ENVIRONMENT\n.TP\n.B SLUICE_WAREHOUSE\nThe warehouse of catalog tables when \\-\\-warehouse is not given.\n"
      ".SH FILES\n.TP\n.B sluice.yaml\nThe project file of the working directory (or \\-\\-config \\fIFILE\\fR): "
      "the warehouse, connections and object stores (S3, Azure options) of every command.\n"
      ".SH SEE ALSO\nThe documentation in docs/ (quickstart.md first); sluice help \\fICOMMAND\\fR.\n";
  return page;
}

}  // namespace

void RegisterHelpCommands(CLI::App& app) {
  auto words = std::make_shared<std::vector<std::string>>();
  CLI::App* help = app.add_subcommand("help", "Print the help of sluice or of a command: sluice help delta history");
  help->add_option("COMMAND", *words, "A command, and a subcommand of it");
  CLI::App* root = &app;
  help->callback([root, words] {
    const CLI::App* command = root;
    std::string name = "sluice";
    for (const std::string& word : *words) {
      const CLI::App* next = nullptr;
      for (const CLI::App* sub : Subcommands(*command)) {
        if (sub->get_name() == word) next = sub;
      }
      if (next == nullptr) {
        std::fprintf(stderr, "%s: unknown command `%s`; `sluice help` lists them\n",
                     std::string(errors::kInvalidArgument).c_str(), word.c_str());
        throw CLI::RuntimeError(2);
      }
      command = next;
      name += " " + word;
    }
    // Through the formatter: App::help() of the root would print the help of the command that
    // runs (this one).
    std::printf("%s", command->get_formatter()->make_help(command, name, CLI::AppFormatMode::Normal).c_str());
  });

  CLI::App* man = app.add_subcommand("man", "Print the sluice(1) man page: sluice man | man -l -");
  man->callback([root] { std::printf("%s", ManPage(*root).c_str()); });

  auto shell = std::make_shared<std::string>();
  CLI::App* completion =
      app.add_subcommand("completion", "Print a shell completion script: source <(sluice completion bash)");
  completion->add_option("SHELL", *shell, "bash, zsh or fish")->required()->check(CLI::IsMember({"bash", "zsh", "fish"}));
  completion->callback([root, shell] {
    if (*shell == "fish") {
      std::printf("%s", FishCompletion(*root).c_str());
    } else if (*shell == "zsh") {
      // zsh runs the bash script through its bash completion layer.
      std::printf("autoload -U +X bashcompinit && bashcompinit\n%s", BashCompletion(*root).c_str());
    } else {
      std::printf("%s", BashCompletion(*root).c_str());
    }
  });
}

}  // namespace sluice::cli
