//! What herald's command-line tools (`herald`, `herald-mpi`) share: every error is one line on
//! standard error, prefixed with the tool's name, and the exit code says what kind of error it
//! was — [`USAGE`] for bad input, [`FAILED`] for a run that failed.
//!
//! # Examples
//!
//! ```
//! use clap::Parser;
//! use herald_cli_common::{parse_from, USAGE};
//!
//! /// A tool.
//! #[derive(Debug, Parser)]
//! struct Cli {
//!     /// Ranks.
//!     #[arg(long)]
//!     n: u32,
//! }
//!
//! let cli: Cli = parse_from("tool", ["tool", "--n", "4"]).unwrap();
//! assert_eq!(cli.n, 4);
//! // a missing argument: one line on stderr ("tool: the following required arguments …"), code 2
//! let code = parse_from::<Cli, _, _>("tool", ["tool"]).unwrap_err();
//! assert_eq!(code, std::process::ExitCode::from(USAGE));
//! ```

use std::process::ExitCode;

/// Exit code for bad input (arguments, files, options).
pub const USAGE: u8 = 2;
/// Exit code for a run that failed (a wrong byte, a dead peer).
pub const FAILED: u8 = 1;

/// Parses the process's arguments as [`parse_from`] does.
///
/// # Errors
/// The exit code to end with, after `--help` / `--version` (success) or bad arguments ([`USAGE`]).
pub fn parse<C: clap::Parser>(name: &str) -> Result<C, ExitCode> {
    parse_from(name, std::env::args_os())
}

/// Parses `args` (the first being the program). `--help` and `--version` print their text and
/// give [`ExitCode::SUCCESS`]; bad arguments print clap's first paragraph on one line as
/// `name: …` and give [`USAGE`].
///
/// # Errors
/// The exit code to end with, as above.
pub fn parse_from<C, I, T>(name: &str, args: I) -> Result<C, ExitCode>
where
    C: clap::Parser,
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    match C::try_parse_from(args) {
        Ok(cli) => Ok(cli),
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            Err(ExitCode::SUCCESS)
        }
        Err(e) => {
            let text = e.to_string();
            // clap's first paragraph ("… not provided: --ports <PORTS>" may span lines)
            let line = first_paragraph(&text);
            let line = if line.is_empty() {
                "invalid arguments"
            } else {
                &line
            };
            Err(fail(name, line.trim_start_matches("error: "), true))
        }
    }
}

/// The first paragraph of `text` (its first run of non-blank lines), on one line.
fn first_paragraph(text: &str) -> String {
    let words: Vec<&str> = text
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect();
    words.join(" ")
}

/// Prints `who: text` on standard error on one line (newlines become spaces) and returns the
/// exit code: [`USAGE`] for bad input (`usage`), else [`FAILED`].
///
/// # Examples
///
/// ```
/// use herald_cli_common::{fail, FAILED};
/// // prints "herald-mpi: rank 1: a peer stopped" on standard error
/// let code = fail("herald-mpi: rank 1", "a peer\nstopped", false);
/// assert_eq!(code, std::process::ExitCode::from(FAILED));
/// ```
pub fn fail(who: &str, text: &str, usage: bool) -> ExitCode {
    say(&format!("{who}: {}", text.replace('\n', " ")));
    ExitCode::from(if usage { USAGE } else { FAILED })
}

/// Writes `line` and a newline to stderr in one write, so the lines of processes that share
/// a terminal or a pipe (the ranks of an MPI job) do not interleave within a line, as
/// `eprintln!`'s separate writes of each formatted piece did (`herald-mpi: rank 0herald-mpi:
/// rank 1: …`).
///
/// ```
/// herald_cli_common::say("herald: one line");
/// ```
pub fn say(line: &str) {
    use std::io::Write;
    let mut text = String::with_capacity(line.len() + 1);
    text.push_str(line);
    text.push('\n');
    // Nothing to do if stderr is gone.
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::first_paragraph;

    #[test]
    fn the_first_paragraph_is_one_line() {
        let clap_text = "error: the following required arguments were not provided:\n  \
                         --ports <PORTS>\n\nUsage: herald sim --ports <PORTS>\n\nFor more \
                         information, try '--help'.\n";
        assert_eq!(
            first_paragraph(clap_text),
            "error: the following required arguments were not provided: --ports <PORTS>"
        );
        assert_eq!(first_paragraph("\n\n"), "");
    }
}
