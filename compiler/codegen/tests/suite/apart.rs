//! Baseline code generated away from the running thread
//! (`flowc_codegen::Apart`): made on another thread for a cache that
//! already holds code, installed (`TraceCache::install_emitted`), it runs
//! as the cache's own: its exits are the cache's next numbers, its
//! constants' words are filled in, its jumps reach the traces it was
//! given, and a bridge runs in its parent's frame.

use flowc_codegen::compile::Codegen;
use flowc_codegen::lower::Shape;
use flowc_codegen::{Emitted, Options, TraceCache, TraceEnd, TraceId};
use flowc_ir::Module;
use flowc_lang::{Symbol, Value};

use super::baseline::LINKED;

/// Two exits, then a list constant read (`len`) and compared with
/// (`eq`): leaves by `short` when `v0` is 0, by `other` when `v1` is not
/// the list `[4, 5, 6, 7]`, else by `next` with the list's length.
const LISTED: &str = "trace listed(v0:a, v1:l) {
b0:
    guard_true v0, r0 else short
    v2:n = len [4, 5, 6, 7]
    v3:c = eq v1, [4, 5, 6, 7]
    guard_true v3, r1 else other
    exit r2 to next
resume r0 {
    frame [a = v0]
}
resume r1 {
    frame [l = v1, a = v0]
}
resume r2 {
    frame [n = v2]
}
}
trace first(v0:n) {
b0:
    guard_true v0, r0 else out
    exit r0 to out
resume r0 {
    frame [n = v0]
}
}
";

/// A cache for `module` holding its trace `home` compiled here.
fn cache_with(module: &Module, home: usize) -> (TraceCache, TraceId) {
    let cache = TraceCache::new(std::sync::Arc::new(module.clone()), module.layout(), Options::default()).unwrap();
    let id = cache.compile_all(&[&module.functions[home]], Codegen::Baseline).unwrap()[0];
    (cache, id)
}

/// The code of `module`'s functions `fs` generated on another thread
/// with what `cache` gave for code that may jump to `targets` (and a
/// bridge of exit `from`).
fn emitted_apart(
    cache: &TraceCache,
    module: &Module,
    fs: &[usize],
    targets: &[&str],
    from: Option<flowc_codegen::ExitId>,
) -> Emitted {
    let targets: Vec<Symbol> = targets.iter().map(|t| Symbol::intern(t)).collect();
    let apart = cache.apart(&targets, from);
    let functions: Vec<flowc_ir::Function> = fs.iter().map(|&k| module.functions[k].clone()).collect();
    let shapes: Vec<Shape> = functions.iter().map(Shape::new).collect();
    let made = Crossing((apart, functions, shapes));
    std::thread::scope(|scope| {
        let worker = scope.spawn(move || {
            let (apart, functions, shapes) = made.into_inner();
            let fs: Vec<&flowc_ir::Function> = functions.iter().collect();
            Crossing(apart.emit(&fs, &shapes).expect("baseline code"))
        });
        worker.join().expect("the worker ends").0
    })
}

/// Moves what the test hands over to the other thread and back (the IR
/// holds lists, shared by atomic counts, as the JIT's jobs do).
struct Crossing<T>(T);
// SAFETY: the IR of these tests holds integers and lists of integers,
// shared by atomic counts; nothing else in it refers to a thread.
#[allow(unsafe_code)]
unsafe impl<T> Send for Crossing<T> {}

impl<T> Crossing<T> {
    /// What crossed (taken whole: a closure that took it apart would
    /// capture its fields, which do not cross).
    fn into_inner(self) -> T {
        self.0
    }
}

fn run(cache: &TraceCache, t: TraceId, args: Vec<Value>) -> (Symbol, Vec<Option<Value>>) {
    let mut run = flowc_codegen::RunState { max_depth: 1000, ..Default::default() };
    match cache.run(t, &args, &mut run) {
        TraceEnd::Exit { exit, values } => (cache.exit(exit).0.label, values),
        TraceEnd::Error(e) => panic!("{}", e.kind.term()),
        TraceEnd::Printed(_) => panic!("a trace printed"),
    }
}

/// Made on another thread after a trace was compiled here, the trace's
/// exits are numbered on from that one's (the exit each run
/// leaves by is the one whose record says where it goes), and its list
/// constant, filled in when it was installed, is read and compared with.
#[cfg(target_arch = "x86_64")]
#[test]
fn code_made_on_another_thread_numbers_its_exits_on_and_gets_its_constants() {
    flowc_codegen::with_stack(|| {
        let module = flowc_ir::parse::module("listed", LISTED).unwrap();
        let (cache, home) = cache_with(&module, 1);
        let before = cache.exits_of(home).len() as u32;
        assert!(before > 0);
        let code = emitted_apart(&cache, &module, &[0], &[], None);
        let listed = cache.install_emitted(code).unwrap()[0];
        let exits = cache.exits_of(listed);
        assert_eq!(exits.iter().map(|e| e.0).collect::<Vec<_>>(), vec![before, before + 1, before + 2]);
        let list = |items: &[i64]| Value::list(items.iter().map(|&k| Value::Int(k)).collect());
        let (at, values) = run(&cache, listed, vec![Value::Int(0), list(&[4, 5, 6, 7])]);
        assert_eq!((at.as_str(), values), ("short", vec![Some(Value::Int(0))]));
        let (at, _) = run(&cache, listed, vec![Value::Int(1), list(&[4, 5])]);
        assert_eq!(at.as_str(), "other");
        let (at, values) = run(&cache, listed, vec![Value::Int(1), list(&[4, 5, 6, 7])]);
        assert_eq!((at.as_str(), values), ("next", vec![Some(Value::Int(4))]));
        // The trace compiled here still leaves by its own exit.
        let (at, _) = run(&cache, home, vec![Value::Int(0)]);
        assert_eq!(at.as_str(), "out");
    })
}

/// A bridge made on another thread for an exit of a trace compiled here
/// runs in that trace's frame: linked, the exit's stub jumps straight
/// into it, and its jump back to `count` (given to it by name) makes the
/// two one loop that counts 5,000 down to the guard's exit, no crossing
/// counted. A name the cache has, a jump to a trace it was not given, or
/// code made for another cache, is refused.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_bridge_made_on_another_thread_runs_in_its_parents_frame() {
    flowc_codegen::with_stack(|| {
        let module = flowc_ir::parse::module("linked", LINKED).unwrap();
        let (cache, count) = cache_with(&module, 0);
        let linked = *cache.exits_of(count).iter().find(|&&e| !cache.exit(e).0.guard).expect("the exit's");
        let apart = cache.apart(&[], Some(linked));
        let again = &module.functions[1];
        let refused = apart.emit(&[again], &[Shape::new(again)]).err();
        assert_eq!(refused, Some("a jump to an unknown trace"));
        let code = emitted_apart(&cache, &module, &[1], &["count"], Some(linked));
        let bridge = cache.install_emitted(code).unwrap()[0];
        cache.link(linked, bridge).unwrap();
        assert!(cache.linked_directly(linked));
        let (at, values) = run(&cache, count, vec![Value::Int(5000)]);
        assert_eq!((at.as_str(), values), ("out", vec![Some(Value::Int(0))]));
        assert_eq!(cache.linked_failures(linked), 0);
        let twice = emitted_apart(&cache, &module, &[1], &["count"], None);
        let err = cache.install_emitted(twice).unwrap_err();
        assert!(err.contains("a trace named again is compiled already"), "{err}");
        // Code made for this cache jumps through its slots: another cache
        // will not take it.
        let (other, _) = cache_with(&module, 0);
        let elsewhere = emitted_apart(&cache, &module, &[1], &["count"], None);
        let err = other.install_emitted(elsewhere).unwrap_err();
        assert!(err.contains("code made for another trace cache"), "{err}");
    })
}

/// Code no longer wanted (the run it was for has ended, or its cache was
/// dropped) is not made: the emitter asks before each trace, and gives up
/// at the first no, even after making the traces before it.
#[cfg(target_arch = "x86_64")]
#[test]
fn code_no_longer_wanted_is_not_made() {
    flowc_codegen::with_stack(|| {
        let module = flowc_ir::parse::module("listed", LISTED).unwrap();
        let (cache, _) = cache_with(&module, 1);
        let apart = cache.apart(&[], None);
        let listed = &module.functions[0];
        let again = flowc_ir::Function { name: Symbol::intern("listed_again"), ..listed.clone() };
        let fs = [listed, &again];
        let shapes = [Shape::new(listed), Shape::new(&again)];
        let asked = std::cell::Cell::new(0);
        let first_only = || {
            asked.set(asked.get() + 1);
            asked.get() == 1
        };
        assert_eq!(apart.emit_while(&fs, &shapes, &first_only).err(), Some("no longer wanted"));
        assert_eq!(asked.get(), 2, "asked before each trace");
        assert_eq!(apart.emit_while(&fs, &shapes, &|| false).err(), Some("no longer wanted"));
        let made = apart.emit_while(&fs, &shapes, &|| true).expect("wanted, both are made");
        assert_eq!(made.len(), 2);
    })
}
