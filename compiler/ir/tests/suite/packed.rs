//! Resume records packed for keeping (`PackedRecords`): every record
//! unpacks as it was packed, and the innermost frame's function reads
//! without unpacking.

use flowc_ir::{Operand, PackedRecords, ResumeData, ResumeFrame, ResumeValue, ValueId, VirtualObject};
use flowc_lang::{Symbol, Value};
use la_arena::{Arena, RawIdx};

fn var(n: &str, v: ResumeValue) -> (Symbol, ResumeValue) {
    (Symbol::intern(n), v)
}

fn ssa(k: u32) -> ResumeValue {
    ResumeValue::Operand(Operand::Value(ValueId::from_raw(RawIdx::from(k))))
}

#[test]
fn records_unpack_as_they_were_packed() {
    let mut records: Arena<ResumeData> = Arena::new();
    let empty = records.alloc(ResumeData::default());
    let outer = ResumeFrame {
        function: None,
        env: vec![var("pc", ResumeValue::Operand(Operand::Const(Value::Int(-7)))), var("tape", ssa(3))],
        call: Some((Symbol::intern("r"), Symbol::intern("back"))),
    };
    let inner = ResumeFrame {
        function: Some(Symbol::intern("step")),
        env: vec![var("c", ResumeValue::Virtual(1)), var("big", ssa((1 << 30) - 1))],
        call: None,
    };
    let objects = vec![
        VirtualObject {
            class: Symbol::intern("cell"),
            fields: vec![var("v", ssa(0)), var("l", ResumeValue::Virtual(1))],
        },
        VirtualObject { class: Symbol::intern("box"), fields: Vec::new() },
    ];
    let full = records.alloc(ResumeData { frames: vec![outer, inner], virtuals: objects });
    let one = ResumeFrame { function: Some(Symbol::intern("f")), env: Vec::new(), call: None };
    let last = records.alloc(ResumeData { frames: vec![one], virtuals: Vec::new() });

    let packed = PackedRecords::pack(&records);
    assert_eq!(packed.len(), 3);
    for (r, record) in records.iter() {
        assert_eq!(&packed.get(r), record);
    }
    assert_eq!(packed.innermost_function(empty), None);
    assert_eq!(packed.innermost_function(full), Some(Some(Symbol::intern("step"))));
    assert_eq!(packed.innermost_function(last), Some(Some(Symbol::intern("f"))));
}

/// Records that list the same names and name the same constants (an
/// integer, a list) share them: each more record costs its own words
/// alone — a start, its counts, its frame's four words and a word per
/// variable.
#[test]
fn records_share_their_names_and_constants() {
    let program = Value::List(std::sync::Arc::new(flowc_lang::value::List::new(vec![Value::Int(1), Value::Int(2)])));
    let record = |k: u32| ResumeData {
        frames: vec![ResumeFrame {
            function: None,
            env: vec![
                var("op", ResumeValue::Operand(Operand::Const(Value::Int(3)))),
                var("code", ResumeValue::Operand(Operand::Const(program.clone()))),
                var("pc", ssa(k)),
            ],
            call: None,
        }],
        virtuals: Vec::new(),
    };
    let bytes = |n: u32| {
        let mut records: Arena<ResumeData> = Arena::new();
        for k in 0..n {
            records.alloc(record(k));
        }
        let packed = PackedRecords::pack(&records);
        for (r, original) in records.iter() {
            assert_eq!(&packed.get(r), original);
        }
        packed.heap_bytes()
    };
    assert_eq!(bytes(100) - bytes(1), 99 * 4 * (1 + 2 + 4 + 3));
}
