//! The `cairn` binary: everything it does is [`cairn::cli`].

#![deny(unsafe_code)]

fn main() -> std::process::ExitCode {
    cairn::cli::main()
}
