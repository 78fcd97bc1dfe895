//! The tracing JIT agrees with the reference interpreter: same output or
//! same error kind, over the corpus from every label and over generated
//! programs of their own shapes (the plain generated programs run on
//! every engine in [`super::matrix`]), with thresholds low enough that
//! nearly every loop is traced, guards fail and bridges get attached —
//! also with traces optimized on a second thread while the run goes on.

use flowc_lang::ast::Program;
use flowc_tests::engines;
use flowc_tests::{corpus, gen};
use flowc_trace::jit::{Options, Stats};

/// Eager settings: trace at the `threshold`-th jump (no compile budget),
/// bridge at the first failure; with `trees`, linked exits checking in
/// every fourth crossing and every bridge crossed grafted into its loop's
/// tree, else bridges of baseline code running in their parent's frame,
/// linked by a direct jump, and only what exits read kept of each trace's
/// IR; the IR checker runs on every trace, bridge and tree.
fn eager(threshold: u32, trees: bool) -> Options {
    Options {
        threshold,
        bridge_threshold: 1,
        trees,
        // As `flowc run` does, without trees: exits and bridges then read
        // only what is kept of their traces' IR.
        keep_ir: trees,
        compile_allowance: None,
        link_check: 4,
        graft_crossings: 1,
        inspect: Some(check),
        ..Options::default()
    }
}

fn check(f: &flowc_ir::Function, after: &str) {
    if let Err(vs) = flowc_ir_checker::check(f) {
        let list: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
        panic!("trace IR invalid after {after}:\n{}\n{}", list.join("\n"), flowc_ir::print::function(f));
    }
}

/// The tutorial-shaped BF interpreter (tests/corpus/interpreters/
/// bf_tutorial.fg) and its entry label.
fn tutorial() -> (Program, flowc_lang::Symbol) {
    (corpus::program("tests/corpus/interpreters/bf_tutorial.fg"), flowc_lang::Symbol::intern("start"))
}

/// The environment that runs BF program `text` on [`tutorial`].
fn tutorial_env(text: &str) -> Vec<(flowc_lang::Symbol, flowc_lang::Value)> {
    flowc_lang::syntax::prolog::parse_env(&flowc_tests::bf::tutorial_env(text)).expect("an environment")
}

/// Runs `program` from `label` under the JIT and checks it printed
/// checksum `sum`, as the reference does; what the JIT reports.
fn jit_prints(
    program: &Program,
    label: flowc_lang::Symbol,
    env: &[(flowc_lang::Symbol, flowc_lang::Value)],
    config: &flowc_lang::interp::Config,
    options: Options,
    sum: i64,
) -> flowc_trace::jit::Stats {
    let (outcome, stats) = engines::jit_run(program, label, env, config, options);
    assert_eq!(engines::outcome(outcome), engines::Outcome::Output(format!("{sum}\n")));
    stats
}

/// [`tutorial`] with the environment that runs BF program `text` on it.
fn on_tutorial(text: &str) -> (Program, Vec<(flowc_lang::Symbol, flowc_lang::Value)>, flowc_lang::Symbol) {
    let (program, label) = tutorial();
    (program, tutorial_env(text), label)
}

#[test]
fn jit_matches_reference_on_the_corpus() {
    let (compared, traced, bridges, trees, direct, jobs, flushes) = flowc_codegen::with_stack(move || {
        let (mut compared, mut traced, mut bridges, mut trees, mut direct, mut jobs) = (0, 0, 0, 0, 0, 0);
        let mut flushes = 0;
        for case in engines::corpus_cases_from_every_label().filter(|c| c.finishes()) {
            let (p, label, env) = (&case.program, case.label, &case.env);
            for threshold in [1, 7] {
                let got = engines::jit(p, label, env, eager(threshold, true));
                assert_eq!(got, case.expected, "{} with threshold {threshold}", case.name);
                compared += 1;
            }
            // Bridges in their parents' frames, linked directly.
            let (got, stats) = engines::jit_run(p, label, env, &engines::config(), eager(2, false));
            assert_eq!(engines::outcome(got), case.expected, "{} with threshold 2, no trees", case.name);
            compared += 1;
            direct += stats.direct_links();
            // Optimized on a second thread, installed when done.
            let background = Options { background: true, ..eager(2, false) };
            let (got, stats) = engines::jit_run(p, label, env, &engines::config(), background);
            assert_eq!(engines::outcome(got), case.expected, "{} optimized in the background", case.name);
            compared += 1;
            jobs += stats.background_jobs + stats.dropped_jobs;
            // A cache of three pieces, flushed whenever the interpreter
            // did more than its code since it was found full.
            for trees in [false, true] {
                let tiny = Options { max_traces: 3, small_pieces_room: 1, full_window: 1, ..eager(2, trees) };
                let (got, stats) = engines::jit_run(p, label, env, &engines::config(), tiny);
                assert_eq!(engines::outcome(got), case.expected, "{} with a cache of three pieces", case.name);
                compared += 1;
                flushes += stats.flushes;
            }
            let (_, stats) = engines::jit_run(p, label, env, &engines::config(), eager(1, true));
            traced += stats.traces;
            bridges += stats.bridges;
            trees += stats.trees;
        }
        (compared, traced, bridges, trees, direct, jobs, flushes)
    });
    assert!(compared > 300, "only {compared} runs compared");
    assert!(flushes > 25, "only {flushes} flushes");
    // How many jobs the worker finished (and made the code of) before
    // their short runs ended depends on the machine: the jobs given are
    // counted. A run long enough for the worker to finish is
    // `an_error_in_code_made_on_the_worker_names_the_interpreters_place`.
    assert!(jobs > 25, "only {jobs} jobs given to the worker");
    assert!(traced > 25, "only {traced} traces compiled");
    assert!(bridges > 25, "only {bridges} bridges compiled");
    assert!(trees > 5, "only {trees} trees compiled");
    assert!(direct > 25, "only {direct} exits linked directly");
}

/// The labels the JIT watches, found the short way in flow graphs that
/// promote nothing (the targets of retreating edges, `jit::watched_labels`)
/// and by the loop forest in every graph: the same set on every corpus
/// program, the BF interpreters and generated programs, from each label
/// of their main graphs — loops, nests, cycles entered at two blocks,
/// calls, hints.
#[test]
fn the_labels_watched_are_those_the_loop_forests_find() {
    let mut programs: Vec<(String, Program)> = corpus::all().into_iter().map(|p| (p.name(), p.program)).collect();
    programs.extend(gen::programs(40));
    let (mut compared, mut watched, mut promoting, mut from_text) = (0, 0, 0, 0);
    for (name, program) in &programs {
        if program.main_blocks().any(|b| matches!(b.term, flowc_lang::ast::Terminator::Promote { .. })) {
            promoting += 1;
        }
        for label in program.main_blocks().map(|b| b.label) {
            let Ok(module) = flowc_frontend::lower(program, label) else { continue };
            let sorted = |mut labels: Vec<(Option<flowc_lang::Symbol>, flowc_lang::Symbol)>| {
                labels.sort();
                labels
            };
            let short = sorted(flowc_trace::jit::watched_labels(program, &module));
            let forests = sorted(flowc_trace::jit::watched_labels_by_loop_forests(program, &module));
            assert_eq!(short, forests, "{name} from {label}");
            if !program.main_blocks().any(|b| matches!(b.term, flowc_lang::ast::Terminator::Promote { .. })) {
                // The main graph left out, its labels found in its text.
                let functions = flowc_frontend::lower_unless_main(program, label, |_, _| false).expect("it lowers");
                assert!(functions.functions.iter().all(|f| f.kind != flowc_ir::FunctionKind::Main));
                let text = sorted(flowc_trace::jit::watched_labels_from(program, &functions, label));
                assert_eq!(text, short, "{name} from {label}, its main graph not lowered");
                from_text += 1;
            }
            compared += 1;
            watched += short.len();
        }
    }
    assert!(compared > 300, "only {compared} starts compared");
    assert!(from_text > 250, "only {from_text} starts compared with their main graph not lowered");
    assert!(watched > 300, "only {watched} labels watched");
    assert!(promoting > 5, "only {promoting} programs promote");
}

/// The JIT leaves a program's main graph unlowered only where nothing it
/// does needs it (`jit::main_wanted`): a big main graph of integers and
/// calls is left out; one with an object statement, anywhere, one that
/// promotes, and a small one whose functions the passes would optimize
/// with it are lowered.
#[test]
fn the_main_graph_is_lowered_only_where_the_jit_needs_it() {
    let wanted = |text: &str| {
        let program = flowc_lang::syntax::parse("main.fg", text).expect("it parses");
        let label = program.default_entry().expect("an entry");
        let module = flowc_frontend::lower_unless_main(&program, label, |functions, signatures| {
            flowc_trace::jit::main_wanted(&program, label, functions, signatures)
        })
        .expect("it lowers");
        module.functions.iter().any(|f| f.kind == flowc_ir::FunctionKind::Main)
    };
    // 1,000 loops in a row, each calling a function: 2,000 operations.
    let mut sequence = String::from(
        "entry start(rounds = 3)\n\nfunction step(a, b):\n    s:\n        c = a * 31\n        c = c + b\n        \
         return c\n\nstart:\n    acc = 1\n    goto b0\n",
    );
    for i in 0..1000 {
        sequence.push_str(&format!(
            "b{i}:\n    k = rounds\n    goto l{i}\nl{i}:\n    if k goto body{i} else goto b{next}\nbody{i}:\n    \
             t = k + {i}\n    acc = call step(acc, t) then after{i}\nafter{i}:\n    k = k - 1\n    goto l{i}\n",
            next = i + 1
        ));
    }
    sequence.push_str("b1000:\n    print_and_stop(acc)\n");
    assert!(!wanted(&sequence), "1,000 loops of integers and calls in sequence");
    let with_object = sequence.replacen("start:\n", "start:\n    p = new box\n    p.n = 1\n", 1);
    assert!(with_object != sequence && wanted(&with_object), "an object statement in the main graph");
    let small = "entry start(n = 5)\n\nfunction f(a):\n    s:\n        b = a + 1\n        return b\n\nstart:\n    \
                 k = n\n    goto head\nhead:\n    if k goto body else goto done\nbody:\n    \
                 k = call f(k) then back\nback:\n    k = k - 2\n    goto head\ndone:\n    print_and_stop(k)\n";
    assert!(wanted(small), "a small main graph whose function the passes optimize with it");
    // Only what the entry reaches is lowered, and judged: 2,000 more
    // operations no jump reaches leave it small.
    let mut unreached = small.to_string();
    unreached.push_str("island:\n");
    for k in 0..2000 {
        unreached.push_str(&format!("    k = k + {k}\n"));
    }
    unreached.push_str("    goto island\n");
    assert!(wanted(&unreached), "a small main graph and an island its entry never reaches");
    let no_functions = "entry start(n = 5)\n\nstart:\n    goto head\nhead:\n    \
                        if n goto body else goto done\nbody:\n    n = n - 1\n    goto head\ndone:\n    print_and_stop(n)\n";
    assert!(!wanted(no_functions), "a loop of integers and no function");
    let promoting =
        no_functions.replace("body:\n    n = n - 1\n    goto head", "body:\n    n = n - 1\n    promote n then head");
    assert!(promoting != no_functions && wanted(&promoting), "a main graph that promotes");
}

/// The JIT taking over a run the interpreter began and paused (`flowc
/// run`'s late start) agrees with the reference interpreter wherever the
/// pause falls: after a statement or two, inside a loop or a called
/// function, with objects in the frames — outputs and errors alike; and
/// from a light start (`flowc_trace::jit::starts_light`) on every program
/// whose text gives its watched labels, the rest of the start adopted
/// mid-run (where the JIT would record) — which checks, as it adopts it,
/// that the text gave the recursive functions lowering gives.
#[test]
fn jit_taking_over_a_paused_run_matches_reference_on_the_corpus() {
    let (compared, took_over, light) = flowc_codegen::with_stack(move || {
        let (mut compared, mut took_over, mut light) = (0, 0, 0);
        for case in engines::corpus_cases_from_every_label().filter(|c| c.finishes()) {
            let (p, label, env) = (&case.program, case.label, &case.env);
            let shapes: &[(bool, bool)] = match flowc_trace::jit::starts_light_shape(p) {
                true => &[(false, false), (true, false), (false, true), (true, true)],
                false => &[(false, false), (true, false)],
            };
            for warmup in [1, 3, 20, 150] {
                for &(background, starts_light) in shapes {
                    let options = Options { background, ..eager(2, false) };
                    let (got, paused) = engines::jit_late(p, label, env, options, warmup, starts_light);
                    let start = if starts_light { "a light start" } else { "a full start" };
                    assert_eq!(got, case.expected, "{} taken over after {warmup} statements, {start}", case.name);
                    compared += 1;
                    took_over += usize::from(paused);
                    light += usize::from(paused && starts_light);
                }
            }
        }
        (compared, took_over, light)
    });
    assert!(compared > 300, "only {compared} runs compared");
    assert!(took_over > 150, "the JIT took over only {took_over} runs");
    assert!(light > 100, "the JIT took over from a light start only {light} runs");
}

/// A light start (`flowc run`'s for a big program whose text gives its
/// watched labels: `flowc_trace::jit::starts_light`) prepares the rest of
/// the JIT's start only once a hot spot would be recorded: 300 functions
/// whose loops are never hot leave it unprepared (nothing lowered, no
/// code); with loops of 400 rounds (each function called once) it is
/// asked for, adopted, and loops compiled; given no rest, a light start
/// compiles nothing (its hints are empty). All print what the interpreter
/// prints.
#[test]
fn a_light_start_prepares_the_rest_only_when_a_loop_would_be_recorded() {
    use flowc_trace::jit::{interpret_first_preparing, Jit, Later, PrepareLater, PrepareOnThread, Prepared, Warmup};
    /// The rest prepared on its thread, and waited for the first time it
    /// is asked about: a run that would end before the thread is done (a
    /// loaded machine) still adopts it.
    struct Waited(Later);
    impl PrepareLater for Waited {
        fn start(&mut self) {
            self.0.start();
        }
        fn done(&self) -> bool {
            let started = std::time::Instant::now();
            while !self.0.done() {
                assert!(started.elapsed() < std::time::Duration::from_secs(120), "the thread never finished");
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            true
        }
        fn finish(self: Box<Self>) -> Result<Prepared, flowc_lang::interp::ErrorKind> {
            Box::new(self.0).finish()
        }
    }
    let runs = flowc_codegen::with_stack(move || {
        let mut runs = Vec::new();
        // Loops of 2 rounds called 10 times (30 arrivals each, under the
        // threshold), then of 400 called once, with the rest given and
        // without it.
        for (rounds, calls, given) in [(2, 10, true), (400, 1, true), (400, 1, false)] {
            let text = flowc_tests::loops::many_functions(300, rounds)
                .replace("start(n = 30)", &format!("start(n = {calls})"));
            let program = std::sync::Arc::new(flowc_lang::syntax::parse("functions.fg", &text).expect("it parses"));
            assert!(flowc_trace::jit::starts_light(&program), "a big program that promotes nothing");
            let label = flowc_lang::Symbol::intern("start");
            let env = program.entry_env(label).expect("an entry").to_vec();
            let expected = engines::reference(&program, label, &env);
            let config = flowc_lang::interp::Config::default();
            let lower = move |p: &flowc_lang::Program| {
                flowc_frontend::lower_unless_main(p, label, |functions, signatures| {
                    flowc_trace::jit::main_wanted(p, label, functions, signatures)
                })
            };
            let mut apart = PrepareOnThread::light(program.clone(), label);
            let Warmup::Paused(paused) =
                interpret_first_preparing(&program, label, &env, &config, 2_000, Some(&mut apart))
            else {
                panic!("the run goes on past 2,000 statements")
            };
            let prepared = apart.finish(|_| panic!("a light start lowers nothing")).expect("prepared");
            let options = Options { inspect: Some(check), ..Options::default() };
            let mut jit = Jit::prepared(&program, prepared, options);
            if given {
                jit.prepare_later(Box::new(Waited(Later::new(program.clone(), label, lower))));
            }
            let outcome = jit.take_over(paused, &config);
            assert_eq!(engines::outcome(outcome), expected, "loops of {rounds} rounds");
            runs.push(jit.stats());
        }
        runs
    });
    let (cold, hot, none) = (&runs[0], &runs[1], &runs[2]);
    assert!(cold.light_start && hot.light_start);
    assert_eq!(none.start_rest, None, "no rest to ask for: {none}");
    assert_eq!(none.traces + none.bridges + none.entry_traces, 0, "no code against empty hints: {none}");
    assert_eq!(cold.start_rest, None, "nothing hot asked for the rest: {cold}");
    assert_eq!(cold.traces + cold.bridges + cold.entry_traces, 0, "{cold}");
    let Some((asked, Some(adopted))) = hot.start_rest else { panic!("the rest adopted: {hot}") };
    assert!(asked <= adopted, "{hot}");
    assert!(hot.traces > 0, "loops compiled once the rest was there: {hot}");
}

/// Forty functions, each with a loop of 20 rounds called 30 times: each
/// loop's code has little left to run when it is compiled, and the
/// compiles return a fraction of their cost. Past the grace the budget
/// stops paying for more (`Options::compile_grace`): fewer loops are
/// compiled than without that bound, and the run prints the same.
#[test]
fn compiles_that_do_not_pay_back_stop_past_the_grace() {
    let text = flowc_tests::loops::many_functions(40, 20);
    let (bounded, unbounded) = flowc_codegen::with_stack(move || {
        let program = flowc_lang::syntax::parse("functions.fg", &text).expect("it parses");
        let label = flowc_lang::Symbol::intern("start");
        let env = program.entry_env(label).expect("an entry").to_vec();
        let expected = engines::reference(&program, label, &env);
        let config = flowc_lang::interp::Config::default();
        let mut stats = Vec::new();
        for compile_grace in [30_000, u64::MAX] {
            let options = Options { compile_grace, inspect: Some(check), ..Options::default() };
            let (outcome, s) = engines::jit_run(&program, label, &env, &config, options);
            assert_eq!(engines::outcome(outcome), expected);
            stats.push(s);
        }
        let unbounded = stats.pop().expect("two runs");
        (stats.pop().expect("two runs"), unbounded)
    });
    assert!(unbounded.traces > 20, "{unbounded}");
    assert!(bounded.traces < unbounded.traces / 2, "{bounded}\n{unbounded}");
}

/// A loaded machine may leave the worker behind: with every job held up
/// (`Options::worker_delay`), the stack VM's dispatch loop is entered
/// more than a thousand times from the interpreter while its bridges are
/// still being optimized. It is not judged meanwhile (judged then, it was
/// given up and the run interpreted to its end): its bridges arrive and
/// link, and the run prints the interpreter's output.
#[test]
fn a_loop_whose_bridges_are_late_is_not_given_up() {
    use flowc_tests::stack_vm;
    let (printed, stats) = flowc_codegen::with_stack(move || {
        let program = corpus::program("tests/corpus/interpreters/stack_vm.fg");
        let env = flowc_lang::syntax::prolog::parse_env(&stack_vm::env(120)).expect("an environment");
        let options =
            Options { background: true, worker_delay: Some(std::time::Duration::from_millis(3)), ..Options::default() };
        let config = flowc_lang::interp::Config { fuel: Some(50_000_000), ..Default::default() };
        let (outcome, stats) = engines::jit_run(&program, flowc_lang::Symbol::intern("start"), &env, &config, options);
        (outcome.map(|o| o.output()).expect("the run ends"), stats)
    });
    assert_eq!(printed, format!("{}\n", stack_vm::expected(120)));
    assert!(stats.entries > 1_000, "entered often enough to be judged: {stats}");
    assert_eq!(stats.ignored, 0, "{stats}");
    assert!(stats.bridges > 10 && stats.direct_links() > 0, "{stats}");
}

/// Brainfuck programs of every shape (`flowc_tests::bf`, numbers walked
/// by scans among them) on the tutorial-shaped interpreter written in the
/// language, under the JIT as it ships (optimizing on the running thread,
/// and on a second one) and eagerly: the checksum the reference says,
/// inner loops cut from outer recordings (compiled on the running thread
/// without a worker, sent to the worker with one, the outer loop then
/// recorded again as an entry trace), trees grown.
#[test]
fn brainfuck_programs_run_under_the_jit() {
    use flowc_tests::bf;
    // Eagerly only the small ones: in a debug build the rest take half a
    // minute each.
    let programs = [
        (bf::nest(&[3, 2, 3, 2], 3), true),
        (bf::nest(&[2, 2, 2, 2, 2, 2], 2), true),
        (bf::primes(12, 1), false),
        (bf::bottles(1), false),
        (bf::digits(4, 1), false),
    ];
    let (inner, trees, jobs) = flowc_codegen::with_stack(move || {
        let (mut inner, mut trees, mut jobs) = (0, 0, 0);
        let (program, label) = tutorial();
        for (text, eagerly) in &programs {
            let (sum, _) = bf::run(text).expect("a valid program");
            let env = tutorial_env(text);
            let expected = engines::Outcome::Output(format!("{sum}\n"));
            let eagerly = eagerly.then(|| eager(3, true));
            let background = Options { background: true, ..Options::default() };
            for options in [Options::default(), background].into_iter().chain(eagerly) {
                let config = flowc_lang::interp::Config { fuel: Some(50_000_000), ..Default::default() };
                let background = options.background;
                let (outcome, stats) = engines::jit_run(&program, label, &env, &config, options);
                assert_eq!(engines::outcome(outcome), expected, "{text}");
                if !background {
                    assert_eq!(stats.inner_sent, 0, "{stats}");
                    inner += stats.inner_first;
                }
                trees += stats.trees;
                jobs += stats.background_jobs + stats.dropped_jobs;
            }
        }
        (inner, trees, jobs)
    });
    assert!(jobs > 0, "nothing was optimized in the background");
    assert!(inner > 0, "no inner loop was cut from an outer recording on the running thread");
    assert!(trees > 3, "only {trees} trees compiled");
}

/// The tutorial interpreter running `digits` (a divmod loop around
/// three copy loops) at threshold 70, on the running thread: the divmod
/// loop is recorded before two of the loops inside it have code, going
/// through a round of each. Once they get code that runs them to their
/// end at once, it is recorded again doing them so
/// (`Jit::nest_done_at_once`), and code recorded round it before
/// (bridges that went through its head, entry traces into the old loop)
/// gives way to it (`Jit::give_way`). Until then, bridges that jump into
/// the old loop give way too (`Jit::mark_nest`): the loop is entered only
/// from code, so the interpreter, which records it again where it
/// arrives at its head, never did. The checksum is the reference's.
#[test]
fn a_loop_recorded_again_round_inner_loops_done_at_once_takes_over_the_code_round_it() {
    use flowc_tests::bf;
    let text = bf::digits(30, 20);
    let (sum, _) = bf::run(&text).expect("a valid program");
    let stats = flowc_codegen::with_stack(move || {
        let (program, label) = tutorial();
        let env = tutorial_env(&text);
        let options = Options { threshold: 70, background: false, ..Options::default() };
        let config = flowc_lang::interp::Config { fuel: Some(50_000_000), ..Default::default() };
        jit_prints(&program, label, &env, &config, options, sum)
    });
    assert!(stats.renested > 0, "{stats}");
    assert!(stats.gave_way > 0, "{stats}");
    assert!(stats.gave_way_nest > 0, "{stats}");
}

/// The tutorial interpreter running `digits` on the running thread at
/// thresholds from 30 to 100 and bridge thresholds from 5 to 20: which of
/// its nested loops gets code first, and so which bridges link up the
/// way round the others, changes with them. Where bridges recorded while
/// the divmod loop had no code went through its head and round it (the
/// copy loops inside then ran round by round), they give way to its first
/// code once that does a loop inside at once (`Jit::give_way`); where a
/// loop marked to be recorded again round its inner loops is entered
/// only by bridges, they give way too (`Jit::mark_nest`), so that the
/// interpreter arrives at its head. Both happen over these runs, and
/// every run prints the reference's checksum.
#[test]
fn bridges_round_a_loop_without_code_or_into_one_to_be_recorded_again_give_way() {
    use flowc_tests::bf;
    let text = bf::digits(30, 20);
    let (sum, _) = bf::run(&text).expect("a valid program");
    let (first, nest) = flowc_codegen::with_stack(move || {
        let (program, label) = tutorial();
        let env = tutorial_env(&text);
        let (mut first, mut nest) = (0, 0);
        for threshold in [30, 40, 60, 70, 80, 100] {
            for bridge_threshold in [5, 10, 20] {
                let options = Options { threshold, bridge_threshold, background: false, ..Options::default() };
                let config = flowc_lang::interp::Config { fuel: Some(50_000_000), ..Default::default() };
                let stats = jit_prints(&program, label, &env, &config, options, sum);
                first += stats.gave_way_first;
                nest += stats.gave_way_nest;
            }
        }
        (first, nest)
    });
    assert!(first > 0 && nest > 0, "{first} bridges gave way to a first loop, {nest} to one to be recorded again");
}

/// Functions each with a hot loop of a few operations, called in turn,
/// more of them than a cache of `max_traces` pieces holds: small pieces
/// get twice the room (`jit::small_pieces_full`), so every loop gets
/// code; with the room of `max_traces` alone, the cache is full with six
/// of them (a preamble and a loop each), and the code it holds does
/// enough of the work to be kept: the other four stay interpreted. The
/// output is the interpreter's either way.
#[test]
fn small_pieces_of_code_get_twice_the_room_in_the_cache() {
    let text = flowc_tests::loops::many_functions(10, 400);
    let runs = flowc_codegen::with_stack(move || {
        let p = flowc_lang::syntax::parse("many.fg", &text).expect("it parses");
        let (label, env) = engines::start(&p);
        let expected = engines::reference(&p, label, &env);
        assert!(matches!(expected, engines::Outcome::Output(_)), "{expected:?}");
        let mut runs = Vec::new();
        for room in [2, 1] {
            let options = Options { max_traces: 12, small_pieces_room: room, background: false, ..Options::default() };
            let (got, stats) = engines::jit_run(&p, label, &env, &engines::config(), options);
            assert_eq!(engines::outcome(got), expected, "room {room}");
            runs.push(stats);
        }
        runs
    });
    let (roomy, tight) = (&runs[0], &runs[1]);
    assert_eq!((roomy.flushes, roomy.traces), (0, 10), "{roomy}");
    assert_eq!((tight.flushes, tight.traces), (0, 6), "{tight}");
}

/// Brainfuck whose loops are longer than a trace (docs/architecture.md,
/// "Long loops in segments"): `escape` travels the tape from its records
/// to cells far away and back inside its loops, so with the trace limit
/// low, loop recordings and bridges alike stop short of closing. They are
/// cut into segments that link into each other and print what the
/// reference says; no hot spot is given up (they were, after three
/// aborts each).
#[test]
fn brainfuck_loops_longer_than_a_trace_run_in_segments() {
    use flowc_tests::bf;
    let text = bf::escape(12, 3, 1);
    let (sum, _) = bf::run(&text).expect("a valid program");
    let stats = flowc_codegen::with_stack(move || {
        let (program, label) = tutorial();
        let env = tutorial_env(&text);
        let options = Options { trace_limit: 1_500, ..Options::default() };
        let config = flowc_lang::interp::Config { fuel: Some(50_000_000), ..Default::default() };
        let (outcome, stats) = engines::jit_run(&program, label, &env, &config, options);
        assert_eq!(engines::outcome(outcome), engines::Outcome::Output(format!("{sum}\n")));
        stats
    });
    assert!(stats.segments > 0, "{stats}");
    assert_eq!((stats.aborted, stats.ignored), (0, 0), "{stats}");
}

/// The JIT's clock counts what straight code stands in for (bridges,
/// entry traces, loops' preambles add what they were recorded from each
/// time they run, `Ctx::work`), not only loop iterations. BF `digits`
/// does most of its work there — short loops entered through bridges,
/// bridges linked to bridges — and with that work unseen the compile
/// budget closed: under `flowc run` (worker off, as here) 10,781 hot spots
/// and exits deferred, the exits sent to the interpreter, 65 ms against
/// 39; here (no warm-up; the worker off, so the decisions are the same
/// every run) 1,731 deferred against 772.
#[test]
fn straight_code_counts_on_the_jits_clock() {
    use flowc_tests::bf;
    let text = bf::digits(30, 20);
    let (sum, _) = bf::run(&text).expect("a valid program");
    let stats = flowc_codegen::with_stack(move || {
        let (program, env, label) = on_tutorial(&text);
        jit_prints(&program, label, &env, &Default::default(), Options::default(), sum)
    });
    assert!(stats.work_straight > 0 && stats.work_in_loops > 0, "{stats}");
    assert!(stats.deferred < 1_200, "{stats}");
}

/// A field every `new` sets at once (`fields_always_set` names `v` here)
/// is read by traces without the unset test
/// (`TraceCache::assume_always_set`): each round reads `v` of the object
/// the round before made, checked to be a `box` (so the trace knows it is
/// an object), a `get` the optimizer cannot forward on entry,
/// while `x` grows past a machine word. Eagerly and as it ships, the JIT
/// prints what the interpreter prints. (What makes the assumption sound
/// for traces — whatever continues after a trace leaves between a `new`
/// and its `set` runs that block's `set`s first — is not staged here: a
/// trace's guards between the two come only from operations, and this
/// program's arithmetic leaves at the loop's end.)
#[test]
fn traces_read_an_always_set_field_as_the_interpreter_does() {
    let text = "entry start(n = 300)
start:
    i = 0
    x = 1
    s = 0
    prev = new box
    prev.v = 0
    goto top
top:
    more = i < n
    if more goto body else goto done
body:
    o = new box
    x = x * 3
    o.v = x
    if prev is box goto read else goto done
read:
    t = prev.v
    s = s + t
    s = s % 1000003
    prev = o
    i = i + 1
    goto top
done:
    print_and_stop(s)
";
    let runs = flowc_codegen::with_stack(move || {
        let program = flowc_lang::syntax::parse("new_then_set.fg", text).expect("parses");
        let label = flowc_lang::Symbol::intern("start");
        let module = flowc_frontend::lower(&program, label).expect("lowers");
        assert_eq!(flowc_codegen::fields_always_set(&module.functions), [flowc_lang::Symbol::intern("v")]);
        let env = [(flowc_lang::Symbol::intern("n"), flowc_lang::Value::Int(300))];
        let expected = flowc_lang::interp::run(&program, label, &env, &Default::default()).expect("runs").value;
        let sum: i64 = expected.to_string().parse().expect("a checksum");
        [eager(3, false), Options::default()].map(|options| {
            let s = jit_prints(&program, label, &env, &Default::default(), options, sum);
            (s.traces, s.guard_failures + s.bridged, s.to_string())
        })
    });
    for (traces, left, stats) in runs {
        assert!(traces > 0 && left > 0, "{stats}");
    }
}

/// BF program `text` on the tutorial interpreter under the JIT with a
/// worker and `options`, each run printing the reference's checksum, up
/// to three runs, until one is `shown`: when code arrives depends on the
/// worker's speed. The runs' stats.
fn worker_runs_until(text: String, options: Options, shown: fn(&Stats) -> bool) -> Vec<Stats> {
    let (sum, _) = flowc_tests::bf::run(&text).expect("a valid program");
    flowc_codegen::with_stack(move || {
        let (program, env, label) = on_tutorial(&text);
        let mut runs = Vec::new();
        for _ in 0..3 {
            let options = Options { background: true, ..options.clone() };
            let stats = jit_prints(&program, label, &env, &Default::default(), options, sum);
            let done = shown(&stats);
            runs.push(stats);
            if done {
                break;
            }
        }
        runs
    })
}

/// With a worker, an inner loop cut from an outer recording is optimized
/// there and the outer recording dropped; once the inner loop's code is
/// installed, the outer hot spot is recorded again at its next arrival
/// (`Jit::inner_arrived`), an entry trace into it. The suite's primes
/// program, whose hot spots get hot in outer loops at first. When code
/// arrives depends on the worker's speed: a run on a loaded machine may
/// end before it does, so up to three runs are made, and one must show
/// it (each prints the reference's checksum).
#[test]
fn an_inner_loop_goes_to_the_worker_and_its_outer_loop_follows() {
    let shown = |s: &Stats| s.inner_sent > 0 && s.outer_asked > 0 && s.entry_traces > 0;
    let runs = worker_runs_until(flowc_tests::bf::primes(99, 1), Options::default(), shown);
    let last = runs.last().expect("a run");
    assert!(last.inner_sent > 0, "no inner loop went to the worker in {} runs: {last}", runs.len());
    assert!(last.outer_asked > 0, "no outer hot spot was asked again once its inner loop was there: {last}");
    assert!(last.entry_traces > 0, "no entry trace: {last}");
}

/// A nest's inner loop optimized on the worker while its outer loop's
/// recording waits for it is installed as soon as it comes back, not
/// when the interpreter next arrives at its head: bridges may link the
/// nest's other loops up round that head first, and then the interpreter
/// never arrives there (the suite's `digits`: its divmod loop stayed a
/// job in hand to the end of the run, in one run out of five). The outer
/// hot spot is then asked again. Up to three runs, as above.
#[test]
fn an_inner_loop_an_outer_recording_waits_for_is_installed_as_it_comes() {
    let options = Options { inspect: Some(check), ..Options::default() };
    let runs =
        worker_runs_until(flowc_tests::bf::digits(30, 20), options, |s| s.inner_installed > 0 && s.outer_asked > 0);
    let last = runs.last().expect("a run");
    assert!(last.inner_installed > 0, "no inner loop installed as it came in {} runs: {last}", runs.len());
    assert!(last.outer_asked > 0, "no outer hot spot asked again: {last}");
}

/// The objects BF interpreter on the suite's `escape 1`, bridges after five
/// failures, one thread: a loop that mostly leaves at once by the exit
/// round an inner loop is recorded again from inside, which meets another
/// loop's code first and makes an entry trace into it, no loop. The loop
/// stays its hot spot's code, entered there and running rounds (dropped
/// from its hot spot, it ran only where older code jumped into it, and
/// its tree grew bridges no hot spot held: on `escape 20` it filled and
/// every exit of it went through the interpreter, twice the run's time).
#[test]
fn a_loop_recorded_again_that_gives_no_loop_stays_its_hot_spots_code() {
    use flowc_tests::bf;
    let text = bf::escape(48, 5, 1);
    let (sum, _) = bf::run(&text).expect("a valid program");
    let stats = flowc_codegen::with_stack(move || {
        let program = corpus::program("tests/corpus/interpreters/bf_objects.fg");
        let label = flowc_lang::Symbol::intern("start");
        let options = Options { bridge_threshold: 5, inspect: Some(check), ..Options::default() };
        jit_prints(&program, label, &tutorial_env(&text), &Default::default(), options, sum)
    });
    assert!(stats.recorded_inside >= 1 && stats.kept_loops >= 1, "{stats}");
    // The loop kept, and the entry traces its hot spot got instead.
    let kept: Vec<_> = stats
        .per_trace
        .iter()
        .filter(|t| t.kind == "loop" && stats.per_trace.iter().any(|e| e.kind == "entry" && e.start == t.start))
        .collect();
    assert!(!kept.is_empty(), "{stats}");
    assert!(kept.iter().any(|t| t.iterations > 0 && t.entries > 0), "{stats}");
}

/// Runs each finishing program of `programs(count)` under the JIT
/// ([`agrees`]); the traces and bridges compiled at threshold 1. (The
/// programs are made on the JIT's stack: they cannot cross threads.)
fn jit_agrees_on(programs: fn(u64) -> Vec<(String, Program)>, count: u64) -> (usize, usize) {
    flowc_codegen::with_stack(move || {
        let (mut traced, mut bridges) = (0, 0);
        for case in engines::cases(programs(count)).filter(|c| c.finishes()) {
            let (t, b) = agrees(&case);
            traced += t;
            bridges += b;
        }
        (traced, bridges)
    })
}

/// Runs `case` (one that finishes) under the JIT at thresholds 1 (with
/// trees) and 3, checking each against the reference interpreter; the
/// traces and bridges compiled at threshold 1.
pub(super) fn agrees(case: &engines::Case) -> (usize, usize) {
    let (p, label, env) = (&case.program, case.label, &case.env);
    let (got, stats) = engines::jit_run(p, label, env, &engines::config(), eager(1, true));
    assert_eq!(engines::outcome(got), case.expected, "{}, threshold 1", case.name);
    let got = engines::jit(p, label, env, eager(3, false));
    assert_eq!(got, case.expected, "{}, threshold 3", case.name);
    (stats.traces, stats.bridges)
}

/// Generated programs whose loop variables take each other's values
/// ([`gen::rotate_programs`]): the JIT (whose baseline code keeps loop
/// variables in registers) agrees with the interpreter.
#[test]
fn jit_matches_reference_on_programs_whose_loop_variables_rotate() {
    let (traced, _) = jit_agrees_on(gen::rotate_programs, gen::seed_count(200));
    assert!(traced > 50, "only {traced} traces compiled");
}

/// Errors under the JIT — raised by the interpreter, the tracer or
/// compiled traces, also code generated on the worker — name the
/// interpreter's place.
#[test]
fn jit_errors_name_the_interpreters_place() {
    let compared = engines::check_error_cases(gen::seed_count(500), |case, expected| {
        for threshold in [1, 3] {
            let got = engines::jit_error(&case.program, case.label, &case.env, eager(threshold, threshold == 1));
            assert_eq!(got.as_deref(), Some(expected), "{}, threshold {threshold}", case.name);
        }
        let background = Options { background: true, ..eager(2, false) };
        let got = engines::jit_error(&case.program, case.label, &case.env, background);
        assert_eq!(got.as_deref(), Some(expected), "{}, optimized in the background", case.name);
    });
    assert!(compared > 30, "only {compared} errors compared");
}

/// A loop the worker optimized and generated the code of (the run's
/// second job, after a warm-up loop's: the worker takes the first job
/// too, so nothing installed was optimized on the running thread) divides
/// by zero in its 2,000,000th round, long after its code was installed
/// (the interpreter alone would take a debug build seconds to get there,
/// and the worker's two jobs take milliseconds): the error names the
/// interpreter's place, from the sites the worker numbered.
#[test]
fn an_error_in_code_made_on_the_worker_names_the_interpreters_place() {
    const PROGRAM: &str = "entry start(n = 2000000)

start:
    i = 0
    s = 0
    goto warm
warm:
    c = i < 1000
    if c goto up else goto second
up:
    i = i + 1
    goto warm
second:
    j = 0
    goto head
head:
    d = j < n
    if d goto body else goto done
body:
    k = n - j
    k = k - 1
    x = 7 // k
    s = s + x
    j = j + 1
    goto head
done:
    print_and_stop(s)
";
    let (got, expected, stats) = flowc_codegen::with_stack(|| {
        let p = flowc_lang::syntax::parse("divides.fg", PROGRAM).expect("it parses");
        let (label, env) = engines::start(&p);
        let config = flowc_lang::interp::Config { fuel: Some(50_000_000), ..Default::default() };
        let expected = flowc_lang::interp::run(&p, label, &env, &config).err().map(|e| e.to_string());
        let options = Options { background: true, inspect: Some(check), ..Options::default() };
        let (result, stats) = engines::jit_run(&p, label, &env, &config, options);
        let got = result.err().map(|mut e| {
            e.at = e.at.map(|at| p.with_text(at));
            e.to_string()
        });
        (got, expected, stats)
    });
    assert!(expected.as_deref().is_some_and(|e| e.contains("x = 7 // k")), "{expected:?}");
    assert_eq!(got, expected);
    assert!(stats.emitted_apart > 0, "{stats}");
    // Everything optimized was optimized (and its code made) on the worker.
    assert!(stats.optimize_time <= stats.background_time, "{stats}");
}

/// Seeds the engine fuzzer (`flowc-fuzz engines`) once failed on, with
/// the threshold that showed each. 609027: a trace optimized twice (a
/// promoted variable settled on entry) lost the virtual objects its
/// resume records already held. 878003: two guards sharing a resume
/// record but leaving to different labels were given one exit (the
/// optimistic copy's exit sharing keyed exits without the label).
const FUZZER_FINDINGS: &[(u64, u32)] = &[(609027, 2), (878003, 1)];

#[test]
fn jit_fuzzer_findings_stay_fixed() {
    flowc_codegen::with_stack(|| {
        for &(seed, threshold) in FUZZER_FINDINGS {
            let p = gen::program(seed);
            let (label, env) = engines::start(&p);
            let expected = engines::reference(&p, label, &env);
            assert_eq!(engines::jit(&p, label, &env, eager(threshold, true)), expected, "seed {seed}");
        }
    });
}

/// A trace's optimistic copy assumes its arithmetic and the parameters it
/// computes with stay small integers: a product that overflows inside the
/// trace goes on in the generic copy, and a trace entered with a bignum
/// starts there. Each run prints what the interpreter prints.
#[test]
fn traces_leave_their_optimistic_copy_where_arithmetic_grows() {
    let results = flowc_codegen::with_stack(|| {
        use flowc_lang::syntax::prolog::parse_env;
        use flowc_lang::Symbol;
        let program = corpus::program("tests/corpus/grow.fg");
        let label = Symbol::intern("start");
        ["[x/3, n/10]", "[x/3, n/100]", "[x/-3, n/100]", "[x/1180591620717411303424, n/30]", "[x/a, n/30]"]
            .iter()
            .map(|text| {
                let env = parse_env(text).unwrap();
                let expected = engines::reference(&program, label, &env);
                (*text, engines::jit(&program, label, &env, eager(3, false)) == expected)
            })
            .collect::<Vec<_>>()
    });
    let wrong: Vec<&str> = results.iter().filter(|(_, same)| !same).map(|(e, _)| *e).collect();
    assert!(wrong.is_empty(), "the JIT differs from the interpreter for {wrong:?}");
    assert_eq!(results.len(), 5);
}

/// `program` with its `can_enter_jit` hints replaced by one on `label`, or
/// removed when `label` is `None` (the JIT then watches loop headers).
fn with_hint(program: &flowc_lang::Program, label: Option<flowc_lang::Symbol>) -> flowc_lang::Program {
    use flowc_lang::ast::Item;
    let mut p = program.clone();
    p.items.retain(|i| !matches!(i, Item::CanEnterJit(_)));
    p.items.extend(label.map(Item::CanEnterJit));
    p
}

/// Where users put the hint — on any label, or nowhere — changes how fast
/// the JIT is, never what a program prints: every corpus program, and
/// generated programs, with the hint removed and on each main-graph label
/// in turn.
#[test]
fn jit_matches_reference_wherever_the_hint_is() {
    let count: u64 = gen::seed_count(25);
    let compared = flowc_codegen::with_stack(move || {
        let mut compared = 0;
        for case in engines::cases(corpus::with_generated(count)).filter(|c| c.finishes()) {
            let hints = std::iter::once(None).chain(case.program.main_blocks().map(|b| Some(b.label)));
            for hint in hints.take(8) {
                let p = with_hint(&case.program, hint);
                let got = engines::jit(&p, case.label, &case.env, eager(2, false));
                assert_eq!(got, case.expected, "{} with the hint on {hint:?}", case.name);
                compared += 1;
            }
        }
        compared
    });
    assert!(compared > 300, "only {compared} runs compared");
}

/// The compile budget: with no allowance the JIT records only as much as
/// the run's work pays for, deferring the rest, and prints what it prints
/// without a budget, which records more and defers nothing.
#[test]
fn the_compile_budget_defers_what_the_run_cannot_pay_for() {
    use flowc_tests::bf;
    let text = bf::bottles(3);
    let (sum, _) = bf::run(&text).expect("a valid program");
    let (budgeted, unbounded) = flowc_codegen::with_stack(move || {
        let (program, env, label) = on_tutorial(&text);
        let config = flowc_lang::interp::Config::default();
        let mut stats = Vec::new();
        for allowance in [Some(0), None] {
            let options = Options { compile_allowance: allowance, inspect: Some(check), ..Options::default() };
            let s = jit_prints(&program, label, &env, &config, options, sum);
            stats.push(s);
        }
        let unbounded = stats.pop().expect("two runs");
        (stats.pop().expect("two runs"), unbounded)
    });
    assert!(budgeted.deferred > 0, "{budgeted}");
    assert_eq!(unbounded.deferred, 0, "{unbounded}");
    assert!(budgeted.recorded_ops < unbounded.recorded_ops, "{budgeted}\n{unbounded}");
}

/// The compile budget of a run the JIT takes over counts the work done
/// since: the interpreter's warm-up is no credit. Taken over halfway
/// through with no allowance, a run defers and records less than the
/// same run given the warm-up as its allowance (what counting the warm-up
/// would amount to), and prints the same.
#[test]
fn the_compile_budget_of_a_run_taken_over_starts_then() {
    use flowc_tests::bf;
    use flowc_trace::jit::{interpret_first, Jit, Warmup};
    let text = bf::bottles(3);
    let (sum, _) = bf::run(&text).expect("a valid program");
    let (own, credited) = flowc_codegen::with_stack(move || {
        let (program, env, label) = on_tutorial(&text);
        let config = flowc_lang::interp::Config::default();
        let module = flowc_frontend::lower(&program, label).expect("it lowers");
        let whole = flowc_lang::interp::run(&program, label, &env, &config).expect("it runs").steps;
        let warmup = whole / 2;
        let mut stats = Vec::new();
        for allowance in [0, warmup] {
            let Warmup::Paused(paused) = interpret_first(&program, label, &env, &config, warmup) else {
                panic!("the run goes on past half of it")
            };
            // Each hot spot over budget deferred in turn (no threshold
            // raised while the budget is spent): deferrals count them.
            let options = Options {
                compile_allowance: Some(allowance),
                most_raised: 1,
                inspect: Some(check),
                ..Options::default()
            };
            let mut jit = Jit::new(&program, &module, options);
            let outcome = jit.take_over(paused, &config).expect("it runs");
            assert_eq!(outcome.value.to_print_string(), sum.to_string());
            stats.push(jit.stats());
        }
        let credited = stats.pop().expect("two runs");
        (stats.pop().expect("two runs"), credited)
    });
    assert!(own.deferred > credited.deferred, "{own}\n{credited}");
    assert!(own.recorded_ops < credited.recorded_ops, "{own}\n{credited}");
}

/// A big program's start is prepared apart only once the run has done
/// `PREPARE_AFTER_STEPS` statements: a run that ends within them never
/// starts the thread; one that goes on does, once, and pauses where the
/// warm-up says, with the counts of a warm-up that prepared nothing.
#[test]
fn a_run_that_ends_early_never_starts_preparing() {
    use flowc_trace::jit::{interpret_first, interpret_first_preparing, Warmup, PREPARE_AFTER_STEPS};
    let label = flowc_lang::Symbol::intern("start");
    let config = flowc_lang::interp::Config::default();
    let program = corpus::program("tests/corpus/interpreters/stack_vm.fg");
    let steps_of = |n: u64| {
        let env = flowc_lang::syntax::prolog::parse_env(&flowc_tests::stack_vm::env(n)).expect("an environment");
        (flowc_lang::interp::run(&program, label, &env, &config).expect("it runs").steps, env)
    };
    // A run shorter than the delay, and one far longer.
    let (short, short_env) = steps_of(2);
    let (long, long_env) = steps_of(300);
    assert!(short < PREPARE_AFTER_STEPS && long > 4 * PREPARE_AFTER_STEPS, "{short} {long}");
    let mut started = 0;
    let mut prepare = || started += 1;
    let Warmup::Done(Ok(outcome), _, 0) =
        interpret_first_preparing(&program, label, &short_env, &config, long, Some(&mut prepare))
    else {
        panic!("the short run ends within its warm-up")
    };
    assert_eq!(outcome.steps, short);
    assert_eq!(started, 0, "a run that ended early started preparing");
    let warmup = 2 * PREPARE_AFTER_STEPS;
    let mut prepare = || started += 1;
    let Warmup::Paused(paused) =
        interpret_first_preparing(&program, label, &long_env, &config, warmup, Some(&mut prepare))
    else {
        panic!("the long run goes on past its warm-up")
    };
    assert_eq!(started, 1, "preparing starts once");
    let Warmup::Paused(plain) = interpret_first(&program, label, &long_env, &config, warmup) else {
        panic!("the long run goes on past its warm-up")
    };
    assert_eq!((paused.counts.steps, paused.block), (plain.counts.steps, plain.block));
    assert!(paused.counts.steps >= warmup);
}

/// The take-over never waits for the JIT's start to be prepared apart:
/// past its warm-up the interpreter goes on, `PREPARED_YET_EVERY`
/// statements at a time, until the preparation is done, and says how
/// many statements that took; a preparation never done leaves the whole
/// run to the interpreter, which ends as it would alone.
#[test]
fn the_interpreter_goes_on_while_the_start_is_prepared() {
    use flowc_trace::jit::{interpret_first_preparing, PrepareApart, Warmup, PREPARED_YET_EVERY, PREPARE_AFTER_STEPS};
    /// Done once asked `after` times.
    struct Slow {
        started: u32,
        asked: std::cell::Cell<u32>,
        after: u32,
    }
    impl PrepareApart for Slow {
        fn start(&mut self) {
            self.started += 1;
        }
        fn done(&self) -> bool {
            self.asked.set(self.asked.get() + 1);
            self.asked.get() > self.after
        }
    }
    let label = flowc_lang::Symbol::intern("start");
    let config = flowc_lang::interp::Config::default();
    let program = corpus::program("tests/corpus/interpreters/stack_vm.fg");
    let env = flowc_lang::syntax::prolog::parse_env(&flowc_tests::stack_vm::env(300)).expect("an environment");
    let plain = flowc_lang::interp::run(&program, label, &env, &config).expect("it runs");
    let warmup = 2 * PREPARE_AFTER_STEPS;
    assert!(plain.steps > warmup + 4 * PREPARED_YET_EVERY, "{}", plain.steps);
    let mut slow = Slow { started: 0, asked: Default::default(), after: 3 };
    let Warmup::Paused(paused) = interpret_first_preparing(&program, label, &env, &config, warmup, Some(&mut slow))
    else {
        panic!("the run goes on past its warm-up")
    };
    assert_eq!((slow.started, slow.asked.get()), (1, 4));
    // Three more stretches, each paused at the start of a block.
    assert!(
        paused.waited >= 3 * PREPARED_YET_EVERY && paused.waited < 3 * PREPARED_YET_EVERY + 100,
        "{}",
        paused.waited
    );
    assert!(paused.counts.steps >= warmup + paused.waited);
    // Ready at once (a closure): no statement waited.
    let Warmup::Paused(at_once) = interpret_first_preparing(&program, label, &env, &config, warmup, Some(&mut || ()))
    else {
        panic!("the run goes on past its warm-up")
    };
    assert_eq!(at_once.waited, 0);
    assert!(at_once.counts.steps < paused.counts.steps);
    let mut never = Slow { started: 0, asked: Default::default(), after: u32::MAX };
    let Warmup::Done(Ok(outcome), counts, waited) =
        interpret_first_preparing(&program, label, &env, &config, warmup, Some(&mut never))
    else {
        panic!("a preparation never done leaves the run to the interpreter")
    };
    assert_eq!((outcome.value, outcome.steps, counts.steps), (plain.value, plain.steps, plain.steps));
    // Ended past its warm-up, and says by how much.
    assert!(waited > 0 && counts.steps >= warmup + waited, "{waited} {}", counts.steps);
}

/// `flowc run`'s preparation on a thread ([`flowc_trace::jit::PrepareOnThread`])
/// is done when nothing was started (the program is then prepared where
/// the JIT takes over, lowered there), not while its thread lowers, and
/// once the thread has finished, which hands over the program prepared.
#[test]
fn a_preparation_on_a_thread_is_done_when_its_thread_is() {
    use flowc_trace::jit::{PrepareApart, PrepareOnThread};
    let label = flowc_lang::Symbol::intern("start");
    let program = std::sync::Arc::new(corpus::program("tests/corpus/interpreters/stack_vm.fg"));
    let (release, held) = std::sync::mpsc::channel::<()>();
    let mut apart = PrepareOnThread::new(
        program.clone(),
        label,
        Box::new(move |p| {
            // Lowers once the test lets it.
            held.recv().expect("the test lets it go");
            flowc_frontend::lower(p, label)
        }),
    );
    assert!(apart.done(), "nothing started is nothing to wait for");
    apart.start();
    assert!(!apart.done(), "the thread waits for the test");
    release.send(()).expect("the thread is waiting");
    let started = std::time::Instant::now();
    while !apart.done() {
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "the thread never finished");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let prepared = apart.finish(|_| panic!("lowered here, not on its thread"));
    assert!(prepared.is_ok(), "the program is prepared");
    // Never started: lowered where it finishes.
    let never = PrepareOnThread::new(program, label, Box::new(move |p| flowc_frontend::lower(p, label)));
    let mut lowered_here = false;
    let prepared = never.finish(|p| {
        lowered_here = true;
        flowc_frontend::lower(p, label)
    });
    assert!(prepared.is_ok() && lowered_here, "a preparation never started is made where it finishes");
}

/// A program of counted loops, as a Brainfuck program's `[->+<]` is one,
/// written from `seed`: each round sets a counter cell and a second cell
/// (the same object as the counter in some rounds) to values that may be
/// negative or beyond the modulus (the counter 0 every fourth round), then runs a loop that steps the counter
/// by -1 modulo `m` (as `-1`, `m - 1` or `-1 - m`) and the other cell by a
/// constant modulo another modulus, tested before or after the step; then
/// a loop over two variables of the same kind. What both hold afterwards
/// is summed and printed.
fn counted_loops(seed: u64) -> String {
    let mut rng = flowc_tests::rng::Rng::new(seed);
    let moduli = [2, 3, 5, 7, 16, 256, 1000];
    let m = *rng.pick(&moduli);
    let m2 = *rng.pick(&moduli);
    let step = *rng.pick(&[-1, m - 1, -1 - m]);
    let other = rng.range(-5, 5);
    let (k1, c1, k2, c2) = (rng.range(-3, 40), rng.range(-300, 300), rng.range(-3, 9), rng.range(-300, 300));
    let alias = rng.chance(40);
    let top = rng.chance(50);
    let pm = *rng.pick(&moduli);
    let pstep = *rng.pick(&[-1, pm - 1]);
    let (pm2, pother) = (*rng.pick(&moduli), rng.range(-7, 7));
    let pick_d = if alias {
        "    k = r % 2\n    if k goto same else goto apart\nsame:\n    d = a\n    goto fill\napart:\n    d = b\n    goto fill\nfill:\n"
    } else {
        "    d = b\n"
    };
    let loop_ = if top {
        format!(
            "loop:\n    z = a.v\n    y = d.v\n    if z goto body else goto after\nbody:\n    x = a.v\n    x = x + {step}\n    x = x % {m}\n    a.v = x\n    y = d.v\n    y = y + {other}\n    y = y % {m2}\n    d.v = y\n    goto loop\n"
        )
    } else {
        format!(
            "loop:\n    x = a.v\n    x = x + {step}\n    x = x % {m}\n    a.v = x\n    y = d.v\n    y = y + {other}\n    y = y % {m2}\n    d.v = y\n    z = a.v\n    if z goto loop else goto after\n"
        )
    };
    format!(
        "entry start(n = 24)\n\nstart:\n    a = new cell\n    b = new cell\n    a.v = 0\n    b.v = 0\n    r = 0\n    total = 0\n    goto round\nround:\n    more = r < n\n    if more goto setup else goto done\nsetup:\n{pick_d}    u = r * {k2}\n    u = u + {c2}\n    d.v = u\n    t = r * {k1}\n    t = t + {c1}\n    q = r % 4\n    t = t * q\n    a.v = t\n    goto loop\n{loop_}after:\n    w = a.v\n    total = total + w\n    w = d.v\n    total = total + w\n    i = r * {k1}\n    i = i + {c2}\n    s = r\n    goto count\ncount:\n    i = i + {pstep}\n    i = i % {pm}\n    s = s + {pother}\n    s = s % {pm2}\n    if i goto count else goto counted\ncounted:\n    total = total + s\n    r = r + 1\n    goto round\ndone:\n    print_and_stop(total)\n"
    )
}

/// Counted loops run to their end at once (`flowc_trace::opt::fast_forward`)
/// print what the reference interpreter prints, over generated loops:
/// counters from any integer, moduli from 2 to 1,000, steps of -1 written
/// three ways, a second cell that is sometimes the counter's own object,
/// tests before and after the step, counters in variables. Runs the
/// reference interpreter does not finish within the fuel (a counter that
/// shares its cell with another step may never reach 0) are skipped.
#[test]
fn counted_loops_skipped_at_once_print_what_the_interpreter_prints() {
    let (compared, skipped) = flowc_codegen::with_stack(|| {
        let (mut compared, mut skipped) = (0, 0);
        for seed in 0..120 {
            let text = counted_loops(seed);
            let p = flowc_lang::syntax::parse("counted.fg", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            let (label, env) = engines::start(&p);
            let expected = engines::reference(&p, label, &env);
            if expected == engines::Outcome::Error("fuel_exhausted".into()) {
                continue;
            }
            for threshold in [2, 5] {
                let (got, stats) = engines::jit_run(&p, label, &env, &engines::config(), eager(threshold, false));
                assert_eq!(engines::outcome(got), expected, "seed {seed}, threshold {threshold}:\n{text}");
                compared += 1;
                skipped += stats.fast_forwarded;
            }
        }
        (compared, skipped)
    });
    assert!(compared >= 150, "only {compared} runs compared");
    assert!(skipped >= compared, "only {skipped} loops skipped in {compared} runs");
}

/// A nest of counted loops four deep with `[-]` innermost (the shape of
/// the classic BF loop benchmark, `flowc_tests::bf::counters`): each
/// level's rounds leave the level inside at 0, so each level is a
/// counted loop with constant cells, run to its end at once where it is
/// entered and done at once by the recording of the level around it.
/// It prints what the interpreter computes.
#[test]
fn a_nest_of_counted_loops_is_done_at_once_level_by_level() {
    use flowc_tests::bf;
    let text = bf::counters(4, 6, 30);
    let (sum, _) = bf::run(&text).expect("a valid program");
    let stats = flowc_codegen::with_stack(move || {
        let (program, env, label) = on_tutorial(&text);
        let options = Options { background: false, ..Options::default() };
        jit_prints(&program, label, &env, &engines::config(), options, sum)
    });
    // The three loops inside the outermost, each counted.
    assert!(stats.fast_forwarded >= 3, "{stats}");
    assert!(stats.skipped >= 3, "{stats}");
}

/// BF loops that move along the tape and come back (`[->>+<<]`) walk
/// links that come back on the tutorial
/// interpreter's tape of cells: unpeeled they check those links every
/// iteration and cannot skip, peeled they skip to their end at once. So
/// they are optimized peeled first, each body once (before, unpeeled
/// first, then again peeled: two bodies a loop).
#[test]
fn loops_walking_links_back_are_optimized_peeled_once() {
    use flowc_tests::bf;
    let text = "++++++[>++++++++<-]>[->>+++<<]>>[-<+>]<[->>>+<<<]>>>[-<<+>>]<<.>.";
    let (sum, _) = bf::run(text).expect("a valid program");
    let stats = flowc_codegen::with_stack(move || {
        let (program, env, label) = on_tutorial(text);
        // (The dispatch tier's loop, for any position, is no counted loop
        // of the program's: not made here.)
        let options = Options { background: false, dispatch_tier: false, ..eager(3, false) };
        jit_prints(&program, label, &env, &engines::config(), options, sum)
    });
    assert!(stats.traces >= 4, "{stats}");
    assert_eq!(stats.fast_forwarded, stats.traces, "every loop skips: {stats}");
    assert_eq!(stats.loop_bodies, stats.traces, "each body optimized once: {stats}");
}

/// A loop that walks links that come back and does not skip peeled
/// (`tests/corpus/shapes/links_back.fg`: no counted loop) is converted
/// again assuming no links, not tried unpeeled in between: two bodies a
/// loop, not three. It prints what the reference interpreter prints.
#[test]
fn a_loop_walking_links_back_that_does_not_skip_is_optimized_twice() {
    let (expected, stats) = flowc_codegen::with_stack(|| {
        let p = corpus::program("tests/corpus/shapes/links_back.fg");
        let (label, env) = engines::start(&p);
        let expected = engines::reference(&p, label, &env);
        let options = Options { background: false, ..eager(3, false) };
        let (got, stats) = engines::jit_run(&p, label, &env, &engines::config(), options);
        assert_eq!(engines::outcome(got), expected);
        (expected, stats)
    });
    assert!(matches!(expected, engines::Outcome::Output(_)), "{expected:?}");
    assert!(stats.traces >= 1 && stats.fast_forwarded == 0, "{stats}");
    assert_eq!(stats.loop_bodies, 2 * stats.traces, "{stats}");
}

/// BF's `[->+<]` written by hand (`tests/corpus/shapes/pour.fg`): the
/// loop tests its count before stepping it, and peeled it carries the
/// count in a phi stored after the guard. It runs to its end at once
/// (`opt::fast_forward`; before, only a count stored before the guard
/// did) and prints what the reference interpreter prints.
#[test]
fn a_hand_written_transfer_loop_tested_before_its_step_runs_to_its_end_at_once() {
    let (expected, stats) = flowc_codegen::with_stack(|| {
        let p = corpus::program("tests/corpus/shapes/pour.fg");
        let (label, _) = engines::start(&p);
        // Longer than the corpus's run, which the differential fuel bounds.
        let env = flowc_lang::syntax::prolog::parse_env("[m/300,rounds/40]").expect("an environment");
        let config = flowc_lang::interp::Config::default();
        let expected = engines::outcome(flowc_lang::interp::run(&p, label, &env, &config));
        let options = Options { background: false, inspect: Some(check), ..Options::default() };
        let (got, stats) = engines::jit_run(&p, label, &env, &config, options);
        assert_eq!(engines::outcome(got), expected);
        (expected, stats)
    });
    assert_eq!(expected, engines::Outcome::Output("55016\n".into()));
    assert!(stats.fast_forwarded >= 1, "{stats}");
}

/// Brainfuck of many loops each run once a round (`bf::statements`, the
/// shape of programs compiled to BF) on the tutorial-shaped interpreter,
/// with a cache of a few pieces: it fills, the code it holds no longer
/// runs, and it is flushed — on the running thread, and with a worker
/// whose jobs are in flight and ready when it is (their code dropped
/// with the cache). The checksum is the reference's, and every trace and
/// bridge passes the checker.
#[test]
fn a_full_cache_is_flushed_under_every_worker() {
    use flowc_tests::bf;
    let text = bf::statements(12, 2);
    let (sum, _) = bf::run(&text).expect("a valid program");
    let runs = flowc_codegen::with_stack(move || {
        let (program, env, label) = on_tutorial(&text);
        let small = Options {
            max_traces: 12,
            small_pieces_room: 1,
            full_window: 20_000,
            compile_allowance: None,
            inspect: Some(check),
            // Without the dispatch tier: once its one piece runs the
            // interpreter's dispatch, the traces' cache no longer fills
            // on a slow machine, and whether a flush comes with jobs in
            // hand would depend on how fast the worker is.
            dispatch_tier: false,
            ..Options::default()
        };
        let late = Some(std::time::Duration::from_millis(2));
        let mut runs = Vec::new();
        for (background, worker_delay) in [(false, None), (true, None), (true, late)] {
            let options = Options { background, worker_delay, ..small.clone() };
            let config = flowc_lang::interp::Config { fuel: Some(50_000_000), ..Default::default() };
            let stats = jit_prints(&program, label, &env, &config, options, sum);
            let jobs = stats.background_jobs + stats.dropped_jobs;
            runs.push((stats.flushes, jobs, stats.flushed_jobs, stats.to_string()));
        }
        runs
    });
    let (flushes, _, _, stats) = &runs[0];
    assert!(*flushes > 1, "{stats}");
    for (_, jobs, _, stats) in &runs[1..] {
        assert!(*jobs > 0, "the worker had jobs: {stats}");
    }
    // A worker held up two milliseconds a job is far behind: its jobs
    // fill the cache (each counts as the pieces it may become), the
    // interpreter does the work, and the cache is flushed with jobs in
    // hand, whose results are dropped as they come back.
    let (flushes, _, flushed, stats) = &runs[2];
    assert!(*flushes > 0 && *flushed > 0, "{stats}");
}

/// The objects interpreter's traces name its instruction objects (each
/// promoted at the dispatch label): they cross to the worker lent, and
/// stay alive while the worker has them and while the JIT keeps their
/// code — with the collector running at every allocation, and a worker
/// held up so that jobs are in flight across collections and across
/// flushes of a small cache (and results are dropped untaken when it is
/// full, in most runs). The checksum is the reference's, and every
/// trace and bridge passes the checker.
#[test]
fn objects_cross_to_the_worker_lent_and_live_while_it_has_them() {
    use flowc_tests::bf;
    let text = bf::bottles(3);
    let (sum, _) = bf::run(&text).expect("a valid program");
    let runs = flowc_codegen::with_stack(move || {
        let program = corpus::program("tests/corpus/interpreters/bf_objects.fg");
        let env = flowc_lang::syntax::prolog::parse_env(&bf::tutorial_env(&text)).expect("an environment");
        let label = flowc_lang::Symbol::intern("start");
        let late = Some(std::time::Duration::from_millis(2));
        // Without the dispatch tier: it runs the positions whose jobs would
        // be in flight at a flush.
        let small = Options {
            max_traces: 12,
            small_pieces_room: 1,
            full_window: 20_000,
            dispatch_tier: false,
            ..Options::default()
        };
        flowc_lang::heap::with(|h| h.set_stress(true));
        let mut runs = Vec::new();
        for (worker_delay, cache) in [(None, Options::default()), (late, small)] {
            let options =
                Options { background: true, worker_delay, compile_allowance: None, inspect: Some(check), ..cache };
            let stats = jit_prints(&program, label, &env, &Default::default(), options, sum);
            runs.push((stats.lent_jobs, stats.flushed_jobs, stats.to_string()));
        }
        flowc_lang::heap::with(|h| h.set_stress(false));
        // Every loan was let go: nothing of the runs stays pinned.
        flowc_lang::heap::collect();
        assert_eq!(flowc_lang::heap::stats().live_bytes, 0, "objects the runs left pinned");
        runs
    });
    for (lent, _, stats) in &runs {
        assert!(*lent > 0, "jobs crossed with objects lent: {stats}");
    }
    let (_, flushed, stats) = &runs[1];
    assert!(*flushed > 0, "jobs were in flight at a flush: {stats}");
}

/// The dispatch tier where the promoted `pc` is an instruction object
/// (the objects interpreter: its positions are counted by allocation
/// number): the tier runs, leaves for positions with code, and the run
/// interprets fewer statements than without it, printing the reference's
/// checksum both ways.
#[test]
fn the_dispatch_tier_runs_positions_held_in_objects() {
    use flowc_tests::bf;
    let text = bf::bottles(3);
    let (sum, _) = bf::run(&text).expect("a valid program");
    let options =
        |dispatch_tier| Options { background: false, dispatch_tier, inspect: Some(check), ..Options::default() };
    let [with, without] = bf_jit_both("bf_objects", text, sum, options);
    let (tier, entries, exits, tiered, stats) =
        (with.tier.is_some(), with.tier_entries, with.tier_exits, with.interpreted.total(), with.to_string());
    let (none, interpreted, plain) = (without.tier.is_some(), without.interpreted.total(), without.to_string());
    assert!(tier && entries > 0 && exits > 0, "{stats}");
    assert!(!none, "{plain}");
    assert!(tiered < interpreted, "{tiered} statements interpreted with the tier, {interpreted} without");
}

/// The dispatch tier enters the code of the positions that have some
/// through their links (`Jit::link_position`), not through the driver:
/// on both BF interpreters (positions as integers and as objects) the run
/// prints the reference's checksum with links and without, takes links,
/// and leaves the tier for the driver fewer times than without them.
#[test]
fn the_dispatch_tier_enters_positions_code_through_their_links() {
    use flowc_tests::bf;
    let text = bf::bottles(5);
    let (sum, _) = bf::run(&text).expect("a valid program");
    for interpreter in ["bf_tutorial", "bf_objects"] {
        let options =
            |tier_links| Options { background: false, tier_links, inspect: Some(check), ..Options::default() };
        let [with, without] = bf_jit_both(interpreter, text.clone(), sum, options);
        let (links, exits, none, driven) = (with.tier_links, with.tier_exits, without.tier_links, without.tier_exits);
        assert!(links > 0 && none == 0, "{interpreter}: {with}\n{without}");
        assert!(exits < driven, "{interpreter}: left the tier {exits} times with links, {driven} without");
    }
}

/// Runs BF program `text` on the BF interpreter `interpreter` (of
/// tests/corpus/interpreters) under the JIT with `options(true)` and with
/// `options(false)`, checking that each prints `sum`, the reference's
/// checksum: the two runs' statistics.
fn bf_jit_both(interpreter: &'static str, text: String, sum: i64, options: fn(bool) -> Options) -> [Stats; 2] {
    use flowc_tests::bf;
    flowc_codegen::with_stack(move || {
        let program = corpus::program(&format!("tests/corpus/interpreters/{interpreter}.fg"));
        let env = flowc_lang::syntax::prolog::parse_env(&bf::tutorial_env(&text)).expect("an environment");
        let label = flowc_lang::Symbol::intern("start");
        [true, false].map(|on| jit_prints(&program, label, &env, &Default::default(), options(on), sum))
    })
}

/// Random BF programs that always end (`flowc_tests::bf_random`: counted
/// loops nested three deep with their step anywhere in the body,
/// transfers across up to nine cells, clears, `if`s, scans to the first
/// 0 cell), shapes nobody fitted the JIT to, on all three BF interpreters
/// under the eager JIT (the checker on every trace and bridge, bridges in
/// their parents' frames), optimized on the running thread and on a
/// second one: each prints the checksum the BF model computes.
#[test]
fn random_brainfuck_programs_run_under_the_jit() {
    use flowc_tests::{bf, bf_random};
    let programs: Vec<(String, i64)> = (0..8)
        .map(|seed| {
            let text = bf_random::program(seed, 16);
            let (sum, _) = bf::run(&text).expect("a generated program is valid");
            (text, sum)
        })
        .collect();
    let (traces, bridges) = flowc_codegen::with_stack(move || {
        let (mut traces, mut bridges) = (0, 0);
        let label = flowc_lang::Symbol::intern("start");
        for interpreter in ["bf_tutorial", "bf_rle", "bf_objects"] {
            let program = corpus::program(&format!("tests/corpus/interpreters/{interpreter}.fg"));
            for (text, sum) in &programs {
                let env = match interpreter {
                    "bf_rle" => bf::run_length_env(text),
                    _ => bf::tutorial_env(text),
                };
                let env = flowc_lang::syntax::prolog::parse_env(&env).expect("an environment");
                for background in [false, true] {
                    let options = Options { background, ..eager(3, false) };
                    let (outcome, stats) = engines::jit_run(&program, label, &env, &Default::default(), options);
                    let expected = engines::Outcome::Output(format!("{sum}\n"));
                    assert_eq!(engines::outcome(outcome), expected, "{interpreter} running {text}");
                    traces += stats.traces;
                    bridges += stats.bridges;
                }
            }
        }
        (traces, bridges)
    });
    assert!(traces > 50 && bridges > 50, "{traces} traces, {bridges} bridges");
}
