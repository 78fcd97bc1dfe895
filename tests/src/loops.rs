//! Programs of many short-lived loops, the shapes where a JIT's compiles
//! and round trips cost more than they save: functions each with its own
//! loop of a few rounds, called in turn from a main loop too short to be
//! hot ([`many_functions`]), and one such function called from many call
//! sites in a row ([`short_loop_calls`]), and functions picked by a chain
//! of tests ([`dispatched_calls`]). The benchmarks run them large
//! (`jit_short`), the tests small.

/// A function `name(x)` whose loop runs `rounds` rounds of `acc = (acc *
/// 3 + add) % 1000003` from `acc = x`, and returns `acc`.
fn loop_function(name: &str, rounds: usize, add: usize) -> String {
    format!(
        "\nfunction {name}(x):\n    s:\n        i = {rounds}\n        acc = x\n        goto l\n    l:\n        if i goto body else goto done\n    body:\n        acc = acc * 3\n        acc = acc + {add}\n        acc = acc % 1000003\n        i = i - 1\n        goto l\n    done:\n        return acc\n"
    )
}

/// The main graph: `r = 0`, then `n` times (an input, 30 by default) a
/// call of each of `callees` in turn, each passing `r` on; prints `r`.
fn called_in_turn(callees: impl IntoIterator<Item = String>) -> String {
    let mut out =
        String::from("\nstart:\n    r = 0\n    goto outer\nouter:\n    if n goto calls else goto fin\ncalls:\n");
    let mut k = 0;
    for callee in callees {
        k += 1;
        out.push_str(&format!("    r = call {callee}(r) then c{k}\nc{k}:\n"));
    }
    out.push_str("    n = n - 1\n    goto outer\nfin:\n    print_and_stop(r)\n");
    out
}

/// `functions` functions, each running its own loop of `rounds` rounds,
/// all called in turn from a main loop that goes round `n` times (30 by
/// default): a program whose every loop is short-lived, and much of
/// whose size is functions.
pub fn many_functions(functions: usize, rounds: usize) -> String {
    let mut out = String::from("entry start(n = 30)\n");
    for i in 0..functions {
        out.push_str(&loop_function(&format!("f{i}"), rounds, i));
    }
    out + &called_in_turn((0..functions).map(|i| format!("f{i}")))
}

/// One function whose loop runs `rounds` rounds per call, called from
/// `calls` call sites in a row in a main loop that goes round `n` times
/// (30 by default): the caller is never hot, so each call enters the
/// loop's compiled code from the interpreter and leaves it there, and a
/// round trip between them weighs against the rounds run compiled
/// (`flowc_trace::jit::TRANSITION_STEPS`).
pub fn short_loop_calls(rounds: usize, calls: usize) -> String {
    let mut out = String::from("entry start(n = 30)\n");
    out.push_str(&loop_function("f", rounds, 1));
    out + &called_in_turn((0..calls).map(|_| "f".to_string()))
}

/// A ledger: `kinds` functions `post0`..., each adding an amount to an
/// account object's balance in a loop of `k % 24 + 1` rounds and
/// returning the balance, one called per round of a main loop of `n`
/// rounds (an input), picked by a pseudo-random number and found by a
/// chain of `kinds` equality tests, as a program without a jump table
/// finds it. Prints the sum of the balances the calls return (mod
/// 1000003). The main loop's head is reached from each of the `kinds`
/// calls' returns: a block of that many predecessors.
pub fn dispatched_calls(kinds: usize, n: usize) -> String {
    let mut out = format!("entry start(n = {n})\n");
    for k in 0..kinds {
        out.push_str(&format!(
            "\nfunction post{k}(acct, amount):\n    s:\n        j = {}\n        goto l\n    l:\n        if j goto b else goto d\n    b:\n        v = acct.balance\n        v = v + amount\n        v = v % 1000003\n        acct.balance = v\n        j = j - 1\n        goto l\n    d:\n        v = acct.balance\n        return v\n",
            k % 24 + 1
        ));
    }
    out.push_str("\nstart:\n    acct = new account\n    acct.balance = 0\n    i = 0\n    r = 12345\n    total = 0\n    goto head\n");
    out.push_str("head:\n    more = i < n\n    if more goto pick else goto fin\n");
    out.push_str(&format!(
        "pick:\n    r = r * 1103515245\n    r = r + 12345\n    r = r % 2147483648\n    k = r % {kinds}\n    i = i + 1\n    goto test0\n"
    ));
    for k in 0..kinds {
        let next = if k + 1 < kinds { format!("test{}", k + 1) } else { "head".to_string() };
        out.push_str(&format!(
            "test{k}:\n    c = k == {k}\n    if c goto call{k} else goto {next}\ncall{k}:\n    v = call post{k}(acct, i) then back{k}\nback{k}:\n    total = total + v\n    total = total % 1000003\n    goto head\n"
        ));
    }
    out.push_str("fin:\n    print_and_stop(total)\n");
    out
}

/// A register VM: `opcodes` opcodes, each adding its own amount to
/// register `a` and folding `a` into `b` (`b = (b * 3 + a) % 100003`),
/// found by a chain of equality tests on the opcode read from a program
/// of 60 instructions (an input list, pseudo-random opcodes); the program
/// run `n` times (an input). No hint: the opcode is a value the trace
/// tests, the chain a run of guards in the traces of its dispatch (see
/// `flowc_codegen`'s `lower/switch.rs`). Prints `a + b`.
pub fn register_vm(opcodes: usize, n: usize) -> String {
    let mut seed: u64 = 7;
    let program: Vec<String> = (0..60)
        .map(|_| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) % opcodes as u64).to_string()
        })
        .collect();
    let mut out = format!(
        "entry start(n = {n}, prog = [{}])

start:
    a = 1
    b = 2
    rounds = 0
    goto round
",
        program.join(", ")
    );
    out.push_str(
        "round:
    more = rounds < n
    if more goto begin else goto done
begin:
    pc = 0
    rounds = rounds + 1
    goto fetch
",
    );
    out.push_str(
        "fetch:
    going = pc < 60
    if going goto decode else goto round
decode:
    op = prog[pc]
    pc = pc + 1
    goto t0
",
    );
    for j in 0..opcodes {
        let next = if j + 1 < opcodes { format!("t{}", j + 1) } else { "fetch".to_string() };
        out.push_str(&format!(
            "t{j}:
    c = op == {j}
    if c goto x{j} else goto {next}
x{j}:
    a = a + {}
    b = b * 3
    b = b + a
    b = b % 100003
    goto fetch
",
            j + 1
        ));
    }
    out.push_str(
        "done:
    r = a + b
    print_and_stop(r)
",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both programs print what their loops compute.
    #[test]
    fn the_programs_print_what_their_loops_compute() {
        let step = |acc: i64, add: i64, rounds: usize| (0..rounds).fold(acc, |a, _| (a * 3 + add) % 1_000_003);
        let run = |text: &str| {
            let p = flowc_lang::syntax::parse("loops.fg", text).unwrap_or_else(|e| panic!("{e}"));
            let label = flowc_lang::Symbol::intern("start");
            let env = p.entry_env(label).expect("an entry").to_vec();
            flowc_lang::interp::run(&p, label, &env, &flowc_lang::interp::Config::default()).expect("it runs").output()
        };
        let r = (0..30).fold(0, |r, _| (0..3).fold(r, |r, i| step(r, i, 4)));
        assert_eq!(run(&many_functions(3, 4)), format!("{r}\n"));
        let r = (0..30).fold(0, |r, _| (0..5).fold(r, |r, _| step(r, 1, 2)));
        assert_eq!(run(&short_loop_calls(2, 5)), format!("{r}\n"));
        let (mut r, mut balance, mut total) = (12345i64, 0i64, 0i64);
        for i in 1..=40i64 {
            r = (r * 1_103_515_245 + 12345) % 2_147_483_648;
            for _ in 0..(r % 7) % 24 + 1 {
                balance = (balance + i) % 1_000_003;
            }
            total = (total + balance) % 1_000_003;
        }
        assert_eq!(run(&dispatched_calls(7, 40)), format!("{total}\n"));
        // The VM: its program read back from the text, run in Rust.
        let text = register_vm(12, 3);
        let list = &text[text.find('[').expect("a list") + 1..text.find(']').expect("a list")];
        let program: Vec<i64> = list.split(", ").map(|s| s.parse().expect("an opcode")).collect();
        assert!(program.iter().all(|&op| (0..12).contains(&op)) && program.len() == 60);
        let (mut a, mut b) = (1i64, 2i64);
        for _ in 0..3 {
            for &op in &program {
                a += op + 1;
                b = (b * 3 + a) % 100_003;
            }
        }
        assert_eq!(run(&text), format!("{}\n", a + b));
    }
}
