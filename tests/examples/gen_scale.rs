//! Times generating and lowering large programs: `cargo run --release -p flowc-tests --example gen_scale`.
use std::time::Instant;
// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

fn main() {
    for size in [1_000usize, 10_000, 100_000, 1_000_000] {
        let cfg = flowc_tests::gen::GenConfig {
            size,
            functions: 3,
            errors: false,
            odd_names: false,
            alloc: false,
            rotate: false,
        };
        let t = Instant::now();
        let p = flowc_tests::gen::generate(7, &cfg);
        let tg = t.elapsed();
        let stmts = p.statement_count();
        let t = Instant::now();
        let m = flowc_frontend::lower(&p, flowc_lang::Symbol::intern("start")).unwrap();
        let tl = t.elapsed();
        let f = &m.functions[0];
        let (blocks, phis, insts) = f.counts();
        println!(
            "  main: {blocks} blocks, {phis} phis, {insts} insts; arena {} insts, {} values",
            f.insts.len(),
            f.values.len()
        );
        println!(
            "size {size}: {stmts} stmts, gen {:?}, lower {:?} ({:.1} ns/stmt), {} fns",
            tg,
            tl,
            tl.as_nanos() as f64 / stmts as f64,
            m.functions.len()
        );
    }
}
