//! `rclick`: the driver. Installed also as `click` and `click-flatten`,
//! it behaves as Click's user-level driver or its flattener, chosen by the
//! name it is run under.

mod call;
mod dot;
mod driver;
mod options;

use std::process::ExitCode;

fn program_name() -> String {
    std::env::args()
        .next()
        .and_then(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "rclick".into())
}

const COMMANDS: [&str; 5] = ["run", "check", "flatten", "dot", "call"];

/// A first argument that is a bare word and no file, followed by more
/// arguments, is a mistyped command (`rclick chek x.click`), not a router
/// file: say so rather than "router configuration specified twice".
fn looks_like_a_command(word: &str) -> bool {
    word.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
        && !word.starts_with('-')
        && !std::path::Path::new(word).exists()
}

fn main() -> ExitCode {
    let prog = program_name();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = if prog.starts_with("click-flatten") {
        driver::main(&prog, driver::Command::Flatten, &args)
    } else if prog == "click" || (prog.starts_with("click") && !prog.starts_with("clicktest")) {
        driver::main(&prog, driver::Command::Run, &args)
    } else {
        match args.first().map(String::as_str) {
            Some("flatten") => driver::main(&prog, driver::Command::Flatten, &args[1..]),
            Some("check") => driver::main(&prog, driver::Command::Check, &args[1..]),
            Some("dot") => driver::main(&prog, driver::Command::Dot, &args[1..]),
            Some("call") => call::main(&prog, &args[1..]),
            Some("run") => driver::main(&prog, driver::Command::Run, &args[1..]),
            Some(word) if args.len() > 1 && looks_like_a_command(word) => {
                eprintln!(
                    "{prog}: '{word}' is neither a command nor a file (commands: {})",
                    COMMANDS.join(", ")
                );
                2
            }
            _ => driver::main(&prog, driver::Command::Run, &args),
        }
    };
    ExitCode::from(code)
}
