//! The `cairn` binary: everything it does is [`cairn::cli`].

#![deny(unsafe_code)]

// Allocation-heavy paths (an import's pages, a call's JSON) spend far less in it than in
// glibc's (Cargo.toml says by how much).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cairn::cli::main()
}
