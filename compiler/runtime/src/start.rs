//! The entry of executables built by `flowc build`.
//!
//! The object file the code generator writes holds the compiled functions,
//! a `main` that calls [`flowc_rt_main`], and a [`Program`] describing
//! everything the code needs at run time that cannot be a machine
//! constant: the symbol table (atoms, classes and fields are symbol
//! numbers in the code, so the executable must number its symbols as the
//! compiler did), the constants that are not immediate words (written as
//! an environment list, filled into a table the code reads), the errors
//! `trap` raises, the immutable fields, the fields objects have slots for
//! (their layout), the entry's parameters and the program's default
//! environment.
//!
//! Usage of a built executable: `OUT [--env ENV] [--fuel N] [--stats]`
//! (also `--env=ENV`, `--fuel=N`; `-h`/`--help` prints the usage); it
//! prints what the program prints, or the runtime error (exit status 1;
//! bad usage 2); `--stats` adds the run's time, allocations and what the
//! heap did, to stderr.

use std::ffi::{c_char, CStr};

use flowc_heap::error::{ErrorKind, RuntimeError};
use flowc_heap::heap::{Layout, Root};
use flowc_heap::text::parse_env;
use flowc_heap::{Symbol, Value};

use crate::frames::StackMaps;
use crate::runtime::Ctx;
use crate::word::{self, Word};

/// The interface between generated code and this runtime: the layout of
/// [`Ctx`]'s first fields and of [`Program`], and the `flowc_rt_*`
/// signatures. Bump it with any change to them; an executable linked with
/// a runtime of another version refuses to run instead of crashing.
pub const ABI: u64 = 7;

/// The description of a built program (see the module docs); the code
/// generator writes it with this layout.
#[repr(C)]
pub struct Program {
    /// `flowc_entry(args, ctx)`: loads the parameters from `args`, runs
    /// (`unsafe`: generated code trusts its arguments).
    pub entry: unsafe extern "C" fn(*const Word, *mut Ctx) -> Word,
    /// The constant table the code reads, `pool_len` words.
    pub pool: *mut Word,
    pub pool_len: u64,
    /// The constants as an environment list `[k/V, …]`, NUL-terminated.
    pub constants: *const c_char,
    /// `symbol_count` NUL-terminated names, in symbol-number order.
    pub symbols: *const c_char,
    pub symbol_count: u64,
    /// The entry's parameters, as symbol numbers.
    pub params: *const u64,
    pub param_count: u64,
    /// `trap_count` errors, four words each ([`encode_trap`]).
    pub traps: *const u64,
    pub trap_count: u64,
    /// `immutable_count` (class, field) pairs of symbol numbers.
    pub immutable: *const u64,
    pub immutable_count: u64,
    /// The default environment list, NUL-terminated.
    pub default_env: *const c_char,
    /// The maximum call depth.
    pub max_depth: u64,
    /// The [`ABI`] the code was generated for.
    pub abi: u64,
    /// The places of runtime calls, one line each (as errors print them),
    /// numbered as the code stores them in the context; NUL-terminated.
    pub sites: *const c_char,
    /// `field_count` field names (symbol numbers): the slots of objects.
    pub fields: *const u64,
    pub field_count: u64,
    /// `function_count` triples (address, first word in `safepoints`,
    /// number of safepoints): the compiled functions' safepoints.
    pub safepoint_functions: *const u64,
    pub function_count: u64,
    /// Per safepoint: its return address's offset in the function, the
    /// number of slots, the slots' offsets from the stack pointer.
    pub safepoints: *const u64,
    /// Whether the code counts fuel at loop headers (`flowc build
    /// --fuel-checks`): 1 or 0. Without it the executable refuses `--fuel`.
    pub fuel_checks: u64,
}

/// The four words that describe an error `trap` raises, if it is one a
/// trap can raise.
pub fn encode_trap(e: &ErrorKind) -> Option<[u64; 4]> {
    let s = |x: &Symbol| x.index() as u64;
    Some(match e {
        ErrorKind::User(r) => [0, s(r), 0, 0],
        ErrorKind::UnknownLabel(l) => [1, s(l), 0, 0],
        ErrorKind::UnknownFunction(f) => [2, s(f), 0, 0],
        ErrorKind::ArgumentCount { func, expected, got } => [3, s(func), *expected as u64, *got as u64],
        ErrorKind::ReturnOutsideFunction => [4, 0, 0, 0],
        _ => return None,
    })
}

fn decode_trap(w: [u64; 4]) -> ErrorKind {
    let s = |x: u64| Symbol::from_index(x as u32);
    match w[0] {
        0 => ErrorKind::User(s(w[1])),
        1 => ErrorKind::UnknownLabel(s(w[1])),
        2 => ErrorKind::UnknownFunction(s(w[1])),
        3 => ErrorKind::ArgumentCount { func: s(w[1]), expected: w[2] as usize, got: w[3] as usize },
        _ => ErrorKind::ReturnOutsideFunction,
    }
}

/// The `main` of a built executable.
///
/// # Safety
/// `argv` must hold `argc` C strings and `program` must point at the
/// [`Program`] the code generator wrote into the same executable.
#[no_mangle]
pub unsafe extern "C" fn flowc_rt_main(argc: i32, argv: *const *const c_char, program: *const Program) -> i32 {
    crate::init_process();
    // SAFETY: the caller passes the C runtime's arguments.
    let args: Vec<String> = (0..argc.max(0) as usize)
        .map(|k| unsafe { CStr::from_ptr(*argv.add(k)) }.to_string_lossy().into_owned())
        .collect();
    // SAFETY: the caller passes the program description of this executable.
    let program = unsafe { &*program };
    let name = args.first().map(|a| a.rsplit('/').next().unwrap_or(a).to_owned()).unwrap_or_default();
    // The code lives as long as the process; running it on a thread with a
    // big stack allows the language's deepest recursion.
    let address = program as *const Program as usize;
    let run = std::thread::Builder::new().stack_size(1 << 30).spawn(move || {
        // SAFETY: `address` is the program description, which is static.
        let program = unsafe { &*(address as *const Program) };
        let code = match start(program, &args[1.min(args.len())..]) {
            Ok(value) => {
                println!("{}", value.to_print_string());
                0
            }
            Err(Failure::Help) => {
                print!("{}", usage(&name, program));
                0
            }
            Err(Failure::Usage(msg)) => {
                eprint!("{name}: {msg}\n{}", usage(&name, program));
                2
            }
            Err(Failure::Runtime(e)) => {
                eprintln!("{name}: {e}");
                1
            }
            Err(Failure::At(e, at)) => {
                eprintln!("{name}: {e}\n  at {at}");
                1
            }
        };
        // The process ends here, its heap and the thread's stack left to
        // the exit (`crate::end_process`).
        crate::end_process(code)
    });
    // The run's thread ends the process: the join returns only if the
    // thread could not start or panicked.
    let _ = run.map(|t| t.join());
    eprintln!("internal error: the program's thread failed");
    1
}

/// The usage text of executable `name`.
fn usage(name: &str, program: &Program) -> String {
    // SAFETY: the code generator writes a NUL-terminated environment list.
    let default_env = unsafe { text(program.default_env) };
    let fuel = if program.fuel_checks != 0 {
        "stop with an error after N loop iterations"
    } else {
        "(only in executables built with `flowc build --fuel-checks`)"
    };
    format!(
        "usage: {name} [--env ENV] [--fuel N] [--stats]\n\
         Runs the program (compiled by flowc) and prints what it prints.\n\
         \x20 --env ENV   the start environment (default {default_env})\n\
         \x20 --fuel N    {fuel}\n\
         \x20 --stats     print the run's time, allocations and heap to stderr\n\
         \x20 -h, --help  print this text\n"
    )
}

enum Failure {
    /// `--help`: the usage on stdout, success.
    Help,
    Usage(String),
    Runtime(RuntimeError),
    /// A runtime error and the place it happened, as printed.
    At(RuntimeError, String),
}

/// Reads a NUL-terminated string of the program description.
///
/// # Safety
/// `p` must point at a NUL-terminated string that lives for `'static`.
unsafe fn text(p: *const c_char) -> &'static str {
    // SAFETY: see the function's contract.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

/// `n` words of the program description at `p`.
///
/// # Safety
/// `p` must point at `n` readable words (any pointer when `n` is 0).
unsafe fn words(p: *const u64, n: u64) -> &'static [u64] {
    if n == 0 {
        return &[];
    }
    // SAFETY: see the function's contract.
    unsafe { std::slice::from_raw_parts(p, n as usize) }
}

/// The stack maps of the executable's code.
///
/// # Safety
/// `program`'s safepoint tables are as the code generator writes them.
unsafe fn read_safepoints(program: &Program) -> StackMaps {
    let mut maps = StackMaps::default();
    // SAFETY: the caller's contract.
    let functions = unsafe { words(program.safepoint_functions, 3 * program.function_count) };
    let mut all = Vec::with_capacity(functions.len() / 3);
    for f in functions.chunks(3) {
        let (address, mut at, count) = (f[0] as usize, f[1] as usize, f[2]);
        let mut points = Vec::with_capacity(count as usize);
        for _ in 0..count {
            // SAFETY: the caller's contract: each safepoint is two words
            // and its slots.
            let (offset, n) = unsafe { (*program.safepoints.add(at), *program.safepoints.add(at + 1)) };
            // SAFETY: as above.
            let slots = unsafe { words(program.safepoints.add(at + 2), n) };
            points.push((offset as u32, slots.iter().map(|&s| s as u32).collect()));
            at += 2 + n as usize;
        }
        all.push((address, points));
    }
    maps.add(all);
    maps
}

/// The command line of a built executable.
#[derive(Default)]
struct Options {
    env: Option<String>,
    fuel: Option<u64>,
    stats: bool,
}

impl Options {
    /// Reads `--env ENV`, `--env=ENV`, `--fuel N`, `--fuel=N`, `--stats`
    /// and `-h`/`--help`, each at most once.
    fn parse(args: &[String]) -> Result<Options, Failure> {
        let mut o = Options::default();
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_owned())),
                _ => (arg.as_str(), None),
            };
            let mut value = |what: &str| match inline.clone().or_else(|| rest.next().cloned()) {
                Some(v) => Ok(v),
                None => Err(Failure::Usage(format!("{flag} needs {what}"))),
            };
            match flag {
                "-h" | "--help" => return Err(Failure::Help),
                "--stats" if inline.is_none() => o.stats = true,
                "--env" if o.env.is_none() => o.env = Some(value("an environment, e.g. '[x/10,y/20]'")?),
                "--fuel" if o.fuel.is_none() => {
                    let v = value("a number of loop iterations")?;
                    let n = v.parse().map_err(|_| Failure::Usage(format!("--fuel needs a number, got `{v}`")))?;
                    o.fuel = Some(n);
                }
                "--env" | "--fuel" | "--stats" => {
                    return Err(Failure::Usage(format!("{flag} given twice or with a value it does not take")))
                }
                _ => return Err(Failure::Usage(format!("unexpected argument: {arg}"))),
            }
        }
        Ok(o)
    }
}

fn start(program: &Program, args: &[String]) -> Result<Value, Failure> {
    if program.abi != ABI {
        let msg = format!(
            "internal: the program was compiled for runtime interface {} but linked with {ABI}; rebuild it",
            program.abi
        );
        return Err(Failure::Runtime(RuntimeError { kind: ErrorKind::User(Symbol::intern(&msg)), at: None }));
    }
    // Symbols first, before anything else names one.
    // SAFETY: the code generator writes `symbol_count` NUL-terminated names.
    let mut p = program.symbols;
    for k in 0..program.symbol_count {
        // SAFETY: as above; `p` stays within the names.
        let name = unsafe { CStr::from_ptr(p) };
        let s = Symbol::intern(&name.to_string_lossy());
        if s.index() as u64 != k {
            let msg = format!("internal: symbol {k} ({}) numbered {}", s.as_str(), s.index());
            return Err(Failure::Runtime(RuntimeError { kind: ErrorKind::User(Symbol::intern(&msg)), at: None }));
        }
        // SAFETY: the next name starts after this one's NUL.
        p = unsafe { p.add(name.to_bytes().len() + 1) };
    }
    let options = Options::parse(args)?;
    if options.fuel.is_some() && program.fuel_checks == 0 {
        return Err(Failure::Usage(
            "--fuel: this executable was built without fuel checks (build it with `flowc build --fuel-checks`)"
                .to_owned(),
        ));
    }
    let (env_text, stats) = (options.env.as_deref(), options.stats);
    let started = std::time::Instant::now();
    let heap_before = flowc_heap::heap::stats();
    // SAFETY: the code generator writes NUL-terminated environment lists.
    let default_env = unsafe { text(program.default_env) };
    let env = parse_env(env_text.unwrap_or(default_env)).map_err(|e| Failure::Usage(e.to_string()))?;
    // SAFETY: as above.
    let constants = parse_env(unsafe { text(program.constants) })
        .map_err(|e| Failure::Usage(format!("internal: unreadable constants: {e}")))?;
    // SAFETY: the code generator writes these arrays with these lengths.
    let (traps, immutable, params, fields) = unsafe {
        (
            words(program.traps, 4 * program.trap_count),
            words(program.immutable, 2 * program.immutable_count),
            words(program.params, program.param_count),
            words(program.fields, program.field_count),
        )
    };
    let layout = Layout::of(fields.iter().map(|&f| Symbol::from_index(f as u32)));
    // SAFETY: the code generator writes the safepoint tables as documented
    // on `Program`: `function_count` triples whose ranges lie within
    // `safepoints`.
    let stack_maps = unsafe { read_safepoints(program) };
    let traps: Vec<ErrorKind> = traps.chunks(4).map(|w| decode_trap([w[0], w[1], w[2], w[3]])).collect();
    let immutable: Vec<(Symbol, Symbol)> =
        immutable.chunks(2).map(|w| (Symbol::from_index(w[0] as u32), Symbol::from_index(w[1] as u32))).collect();
    let mut ctx = Ctx::new(program.max_depth, layout, immutable, traps);
    // SAFETY: the program's safepoints, read from its tables; they live
    // until this function returns, after the run.
    unsafe { ctx.set_stack_maps(&stack_maps) };
    if let Some(fuel) = options.fuel {
        (ctx.fuel, ctx.fuel_limit) = (fuel.max(1), fuel);
    }
    // The constants and arguments, kept alive (pinned) for the whole run.
    let mut roots: Vec<Root> = Vec::new();
    for (k, (_, v)) in constants.into_iter().enumerate().take(program.pool_len as usize) {
        let root = Root::new(&v);
        // SAFETY: the table has `pool_len` words; code reads it only after
        // this loop.
        unsafe { *program.pool.add(k) = root.word() };
        roots.push(root);
    }
    let args: Vec<Word> = params
        .iter()
        .map(|&p| {
            let name = Symbol::from_index(p as u32);
            match env.iter().find(|(k, _)| *k == name) {
                Some((_, v)) => {
                    let root = Root::new(v);
                    let w = root.word();
                    roots.push(root);
                    w
                }
                None => word::unbound(name),
            }
        })
        .collect();
    // SAFETY: `ctx` lives, unmoved, until the activation ends.
    let activation = unsafe { crate::runtime::Activation::enter(&mut ctx) };
    // SAFETY: `args` holds one word per parameter of the entry (the
    // program's parameter table, which the code generator wrote with the
    // entry), each an immediate or a rooted cell; `ctx` is the run's
    // context, unique for the call.
    unsafe { (program.entry)(args.as_ptr(), &mut ctx) };
    drop(activation);
    if stats {
        let iterations = match options.fuel {
            Some(fuel) => format!(", {} loop iterations", fuel.saturating_sub(ctx.fuel)),
            None => String::new(),
        };
        let end = if ctx.error.is_some() { ", ended in an error" } else { "" };
        eprintln!(
            "stats: {:.3} ms, {} allocations{iterations}{end}",
            started.elapsed().as_secs_f64() * 1e3,
            ctx.allocations
        );
        eprintln!("{}", flowc_heap::heap::report(&flowc_heap::heap::stats().since(&heap_before)));
    }
    if let Some(kind) = ctx.error.take() {
        let e = RuntimeError { kind, at: None };
        // SAFETY: the code generator writes the site lines NUL-terminated.
        let sites = unsafe { text(program.sites) };
        return Err(match usize::try_from(ctx.error_site).ok().and_then(|k| sites.lines().nth(k)) {
            Some(at) => Failure::At(e, at.to_owned()),
            None => Failure::Runtime(e),
        });
    }
    ctx.output.take().ok_or(Failure::Runtime(RuntimeError { kind: ErrorKind::ReturnOutsideFunction, at: None }))
}
