//! Prints a generated program: `cargo run -p flowc-tests --example gen_dump -- SEED [readable]`.
fn main() {
    let mut args = std::env::args().skip(1);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let syntax = match args.next().as_deref() {
        Some("readable") => flowc_lang::syntax::Syntax::Readable,
        _ => flowc_lang::syntax::Syntax::Prolog,
    };
    print!("{}", flowc_lang::syntax::print(syntax, &flowc_tests::gen::program(seed)));
}
