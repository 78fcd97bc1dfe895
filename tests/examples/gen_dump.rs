//! Prints a generated program:
//! `cargo run -p flowc-tests --example gen_dump -- SEED [readable] [alloc]`
//! (`alloc`: the allocation-heavy program of the seed).
// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seed: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(0);
    let syntax = if args.iter().any(|a| a == "readable") {
        flowc_lang::syntax::Syntax::Readable
    } else {
        flowc_lang::syntax::Syntax::Prolog
    };
    let program = if args.iter().any(|a| a == "alloc") {
        flowc_tests::gen::alloc_program(seed)
    } else {
        flowc_tests::gen::program(seed)
    };
    print!("{}", flowc_lang::syntax::print(syntax, &program));
}
