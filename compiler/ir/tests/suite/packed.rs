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
    // 2 + 2 × 4 + 2 × 2 × 2 + 2 + 2 × 2 + 2 words for the full record.
    assert!(packed.heap_bytes() < 4 * 64 + std::mem::size_of::<Value>());
}
