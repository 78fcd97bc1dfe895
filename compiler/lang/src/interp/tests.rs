//! Semantics of the reference interpreter on small programs.

use super::{run, Config, ErrorKind, Machine};
use crate::interp::resolve::Resolved;
use crate::syntax;
use crate::{Symbol, Value};

fn eval(src: &str, env: &[(&str, Value)]) -> Result<String, ErrorKind> {
    let p = syntax::parse("test", src).unwrap_or_else(|e| panic!("{e}"));
    let env: Vec<_> = env.iter().map(|(k, v)| (Symbol::intern(k), v.clone())).collect();
    run(&p, p.default_entry().unwrap(), &env, &Config::default()).map(|o| o.output()).map_err(|e| e.kind)
}

#[test]
fn power_prints_bignums() {
    let src = "block(power, op1(res, same, const(1), if(y, power_rec, power_done))).
               block(power_rec, op2(res, mul, var(res), var(x), op2(y, sub, var(y), const(1), if(y, power_rec, power_done)))).
               block(power_done, print_and_stop(var(res))).";
    assert_eq!(eval(src, &[("x", Value::Int(10)), ("y", Value::Int(20))]).unwrap(), "100000000000000000000\n");
}

#[test]
fn only_integer_zero_is_false() {
    let src = r#"start:
    if v goto yes else goto no
yes:
    print_and_stop(:yes)
no:
    print_and_stop(:no)
"#;
    assert_eq!(eval(src, &[("v", Value::Int(0))]).unwrap(), "no\n");
    assert_eq!(eval(src, &[("v", Value::Int(-1))]).unwrap(), "yes\n");
    assert_eq!(eval(src, &[("v", Value::atom("false"))]).unwrap(), "yes\n");
    assert_eq!(eval(src, &[("v", Value::list(vec![]))]).unwrap(), "yes\n");
}

#[test]
fn objects_have_identity_and_print_with_allocation_number() {
    let src = r#"start:
    a = new point
    b = new point
    a.x = 1
    b.x = 1
    same = a == b
    self = a == a
    c = self - same
    if c goto show else goto bad
show:
    print_and_stop(b)
bad:
    error(:identity)
"#;
    assert_eq!(eval(src, &[]).unwrap(), "<point#2>\n");
}

#[test]
fn if_class_tests_objects_only() {
    // `o` is the parameter, or an object made first.
    let test = |setup: &str| {
        format!("start:\n{setup}    if o is point goto yes else goto no\nyes:\n    print_and_stop(1)\nno:\n    print_and_stop(0)\n")
    };
    assert_eq!(eval(&test(""), &[("o", Value::Int(3))]).unwrap(), "0\n");
    assert_eq!(eval(&test("    o = new point\n"), &[]).unwrap(), "1\n");
}

#[test]
fn promote_is_a_jump() {
    let src = r#"start:
    promote x then next
next:
    y = x + 1
    print_and_stop(y)
"#;
    assert_eq!(eval(src, &[("x", Value::Int(41))]).unwrap(), "42\n");
}

#[test]
fn functions_have_their_own_environment() {
    let src = r#"function f(a):
    s:
        x = a * 2
        return x

main:
    x = 5
    r = call f(x) then k
k:
    s = r + x
    print_and_stop(s)
"#;
    assert_eq!(eval(src, &[]).unwrap(), "15\n");
    let leak = r#"function f(a):
    s:
        return y

main:
    y = 5
    r = call f(y) then k
k:
    print_and_stop(r)
"#;
    assert_eq!(eval(leak, &[]), Err(ErrorKind::Unbound(Symbol::intern("y"))));
}

#[test]
fn lists_print_without_spaces_and_atoms_quoted() {
    let src = r#"start:
    l = [:a, [:'B c', 2], -3]
    x = l[1]
    print_and_stop(l)
"#;
    assert_eq!(eval(src, &[]).unwrap(), "[a,['B c',2],-3]\n");
}

#[test]
fn environment_order_is_first_write_order() {
    let src = r#"start:
    b = 1
    a = 2
    b = 3
    c = a
    print_and_stop(c)
"#;
    let p = syntax::parse("t", src).unwrap();
    let env = [(Symbol::intern("z"), Value::Int(0))];
    let resolved = Resolved::new(&p, &[Symbol::intern("z")]);
    let mut m = Machine::new(&p, &resolved, &Config::default());
    m.run(Symbol::intern("start"), &env).unwrap();
    let frame = m.last_frame().expect("the frame that printed");
    let order: Vec<String> = frame.env(&resolved.graphs[0]).iter().map(|(k, v)| format!("{k}/{v}")).collect();
    assert_eq!(order, ["z/0", "b/3", "a/2", "c/2"]);
}

#[test]
fn fuel_counts_statements_and_terminators() {
    let src = r#"start:
    x = 1
    goto next
next:
    print_and_stop(x)
"#;
    let p = syntax::parse("t", src).unwrap();
    let ok = run(&p, Symbol::intern("start"), &[], &Config { fuel: Some(3), ..Config::default() }).unwrap();
    assert_eq!(ok.steps, 3);
    let err = run(&p, Symbol::intern("start"), &[], &Config { fuel: Some(2), ..Config::default() }).unwrap_err();
    assert_eq!(err.kind, ErrorKind::FuelExhausted { fuel: 2 });
}
