//! Debug helper: `cargo run -p flowc-tests --example trace_dbg -- SEED LABEL` prints the
//! generated program (without functions) as readable text.
fn main() {
    let mut args = std::env::args().skip(1);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let mut cfg = flowc_tests::gen::config_for(seed);
    cfg.functions = 0;
    let p = flowc_tests::gen::generate(seed, &cfg);
    print!("{}", flowc_lang::syntax::print(flowc_lang::syntax::Syntax::Readable, &p));
}
