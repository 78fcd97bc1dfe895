//! Generated programs of a given size, for the scaling benchmarks.

use flowc_lang::ast::Program;
use flowc_tests::gen::{generate, GenConfig};

/// A generated program of about `statements` statements (and terminators),
/// with a few functions, and its exact statement count.
pub fn program(statements: usize) -> (Program, usize) {
    let cfg =
        GenConfig { size: statements, functions: 3, errors: false, odd_names: false, alloc: false, rotate: false };
    let p = generate(2026, &cfg);
    let n = p.statement_count();
    (p, n)
}

/// The sizes the scaling benchmarks run: 10^3 to 10^6.
pub const SIZES: [usize; 4] = [1_000, 10_000, 100_000, 1_000_000];

/// Runs `f` `runs` times; returns the fastest run in seconds (the first
/// run also pays for fresh memory pages, later ones measure the work).
/// What `f` returns is dropped outside the timed region.
///
/// The scaling benchmarks give every size the same number of runs: the
/// best of many runs is lower than the best of few on a noisy machine, so
/// timing small sizes more often than large ones would flatter the small
/// sizes and overstate how badly the large ones scale.
pub fn time_best<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let t = std::time::Instant::now();
        let out = f();
        best = best.min(t.elapsed().as_secs_f64());
        drop(out);
    }
    best
}

/// mimalloc's `mi_option_purge_delay` (its position in `mi_option_t` of
/// mimalloc 2, which the workspace has libmimalloc-sys build; the crate
/// does not export it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// Its default in that version, in milliseconds.
const MI_PURGE_DELAY_DEFAULT: i64 = 10;

/// Tells the allocator to keep freed memory instead of returning it to the
/// operating system. The scaling benchmarks take the best of several runs
/// so that every size measures the work and not the kernel's zeroing of
/// fresh pages; by default mimalloc hands large freed regions back, so at
/// 10^6 statements every run paid for fresh pages again while small sizes
/// reused theirs. Call first thing in `main`.
pub fn keep_freed_memory() {
    // SAFETY: reading and setting a mimalloc option has no memory-safety
    // requirements; the benchmark is single-threaded at this point.
    unsafe {
        let before = libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) as i64;
        let from_env = std::env::var_os("MIMALLOC_PURGE_DELAY").is_some();
        assert!(
            from_env || before == MI_PURGE_DELAY_DEFAULT,
            "mimalloc option {MI_OPTION_PURGE_DELAY} is {before}, not the purge delay's default: \
             the option numbering changed, update MI_OPTION_PURGE_DELAY"
        );
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1);
    }
}

/// A main graph of `loops` small loops one after another, each counted
/// down from the input `rounds` and calling one function: a shape of
/// residual programs and of generated code, where every loop header reads
/// a variable no loop writes. (The front end's SSA construction was
/// quadratic in the number of loops on it: a chain of trivial phis handed
/// each link's users on to the next.)
pub fn loops_in_sequence(loops: usize) -> String {
    let mut out = String::from(
        "entry start(rounds = 3)\n\nfunction step(a, b):\n    s:\n        c = a * 31\n        c = c + b\n        c = c % 1000003\n        return c\n\nstart:\n    acc = 1\n    goto b0\n",
    );
    for i in 0..loops {
        out.push_str(&format!(
            "b{i}:\n    k{i} = rounds\n    goto l{i}\nl{i}:\n    if k{i} goto body{i} else goto b{next}\nbody{i}:\n    t{i} = k{i} + {i}\n    acc = call step(acc, t{i}) then after{i}\nafter{i}:\n    k{i} = k{i} - 1\n    goto l{i}\n",
            next = i + 1
        ));
    }
    out.push_str(&format!("b{loops}:\n    print_and_stop(acc)\n"));
    out
}

/// A main graph of `nests` loop nests one after another over the fields
/// of one object, no function and no hint: nest `k` runs `n` (an input,
/// 4 by default) rounds of an inner loop of 3 rounds that adds `k + 1` to
/// `p.total` (modulo 1,000,003) and counts `p.count`; prints the total.
/// Generated code and residual programs have this shape: many loops, each
/// hot for a moment, all reading and writing objects (so the JIT's field
/// facts need the whole main graph).
pub fn loop_nests_in_sequence(nests: usize) -> String {
    let mut out =
        String::from("entry start(n = 4)\n\nstart:\n    p = new acc\n    p.total = 0\n    p.count = 0\n    goto a0\n");
    for k in 0..nests {
        out.push_str(&format!(
            "a{k}:\n    i = 0\n    goto h{k}\nh{k}:\n    c = i < n\n    if c goto b{k} else goto a{next}\n\
             b{k}:\n    j = 0\n    goto m{k}\nm{k}:\n    c = j < 3\n    if c goto d{k} else goto e{k}\n\
             d{k}:\n    t = p.total\n    t = t + {add}\n    t = t % 1000003\n    p.total = t\n    u = p.count\n    \
             u = u + 1\n    p.count = u\n    j = j + 1\n    goto m{k}\ne{k}:\n    i = i + 1\n    goto h{k}\n",
            next = k + 1,
            add = k + 1
        ));
    }
    out.push_str(&format!("a{nests}:\n    r = p.total\n    print_and_stop(r)\n"));
    out
}
