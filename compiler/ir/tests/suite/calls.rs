//! The call graph (`flowc_ir::calls`): which functions are recursive, the
//! bottom-up order cleanup follows, and the call depths and heights that
//! decide which calls inlining keeps exact.

use flowc_ir::calls::CallGraph;
use flowc_ir::Module;
use flowc_lang::Symbol;

/// main calls `a` and `c`; `a` calls the leaf `b`; `c` calls `r`, which
/// calls itself and `b`; `u` is never called.
const PROGRAM: &str = r#"function b(x):
    s:
        return x

function a(x):
    s:
        y = call b(x) then k
    k:
        return y

function r(x):
    s:
        if x goto more else goto done
    more:
        y = call b(x) then k
    k:
        m = x - 1
        z = call r(m) then l
    l:
        return z
    done:
        return 0

function c(x):
    s:
        y = call r(x) then k
    k:
        return y

function u(x):
    s:
        return x

entry main(n = 3)

main:
    p = call a(n) then k
k:
    q = call c(p) then done
done:
    print_and_stop(q)
"#;

fn module() -> Module {
    let p = flowc_lang::syntax::parse("test", PROGRAM).unwrap();
    flowc_frontend::lower(&p, Symbol::intern("main")).unwrap()
}

fn position(m: &Module, name: &str) -> usize {
    let name = Symbol::intern(name);
    m.functions.iter().position(|f| f.name == name).unwrap()
}

#[test]
fn recursion_and_the_bottom_up_order() {
    let m = module();
    let g = CallGraph::new(&m);
    let names = |xs: Vec<Symbol>| xs.iter().map(|s| s.as_str().to_string()).collect::<Vec<_>>();
    assert_eq!(names(g.recursive()), ["r"]);
    assert!(g.is_recursive(Symbol::intern("r")) && !g.is_recursive(Symbol::intern("a")));
    // Every function after the ones it calls.
    let order: Vec<String> = g.bottom_up_positions().into_iter().map(|k| m.functions[k].name.to_string()).collect();
    let at = |n: &str| order.iter().position(|x| x == n).unwrap();
    assert!(at("b") < at("a") && at("b") < at("r") && at("r") < at("c"), "{order:?}");
    assert!(at("a") < at("main") && at("c") < at("main"), "{order:?}");
    assert_eq!(order.len(), 6);
}

#[test]
fn depths_and_heights_are_bounded_only_away_from_recursion() {
    let m = module();
    let g = CallGraph::new(&m);
    let depth = |n: &str| g.depth(position(&m, n));
    let height = |n: &str| g.height(Symbol::intern(n));
    assert_eq!(depth("main"), Some(0));
    assert_eq!(depth("a"), Some(1));
    assert_eq!(depth("c"), Some(1));
    // `b` is also called by the recursive `r`: any depth.
    assert_eq!(depth("b"), None);
    assert_eq!(depth("r"), None);
    // Never called.
    assert_eq!(depth("u"), None);
    assert_eq!(height("b"), Some(1));
    assert_eq!(height("a"), Some(2));
    assert_eq!(height("r"), None);
    assert_eq!(height("c"), None);
    // Inlining `a` into main keeps depths exact; `c` reaches recursion;
    // nothing is inlined into `r` but under a limit it never reaches.
    let main = position(&m, "main");
    assert!(g.inlines_exactly(main, Symbol::intern("a"), 100));
    assert!(!g.inlines_exactly(main, Symbol::intern("a"), 2));
    assert!(!g.inlines_exactly(main, Symbol::intern("c"), 100));
    assert!(!g.inlines_exactly(position(&m, "r"), Symbol::intern("b"), 100));
}
