use super::word::Word;
use super::*;
use crate::symbol::Symbol;
use crate::value::Value;

fn s(x: &str) -> Symbol {
    Symbol::intern(x)
}

fn layout() -> &'static Layout {
    Layout::of([s("next"), s("value")])
}

/// A chain of `n` cells, each `next` pointing at the one before; only the
/// handle of the last is kept.
fn chain(n: u64) -> Obj {
    let mut last: Option<Obj> = None;
    for k in 0..n {
        let o = Obj::new(k + 1, s("cell"), layout());
        o.set(s("value"), Value::Int(k as i64)).unwrap();
        if let Some(prev) = last.take() {
            o.set(s("next"), Value::Object(prev)).unwrap();
        }
        last = Some(o);
    }
    last.expect("n > 0")
}

fn length(o: &Obj) -> u64 {
    let mut n = 1;
    let mut cur = o.clone();
    while let Some(Value::Object(next)) = cur.get(s("next")) {
        n += 1;
        cur = next;
    }
    n
}

#[test]
fn what_a_pinned_object_reaches_survives_and_the_rest_is_freed() {
    let head = chain(10_000);
    collect();
    let live = stats().live_bytes;
    assert!(live >= 10_000 * (layout().words() as u64 * 8), "{live}");
    assert_eq!(length(&head), 10_000);
    assert_eq!(head.get(s("value")), Some(Value::Int(9_999)));
    drop(head);
    collect();
    assert_eq!(stats().live_bytes, 0);
}

#[test]
fn boxed_values_in_fields_survive_with_their_object() {
    // Past four limbs: a boxed `BigInt`, not a limb cell.
    let big = Value::from_big(num_bigint::BigInt::from(1) << 300u32);
    let list = Value::list(vec![Value::Int(1), Value::atom("a")]);
    let o = Obj::new(1, s("box"), layout());
    o.set(s("value"), big.clone()).unwrap();
    o.set(s("next"), list.clone()).unwrap();
    for _ in 0..3 {
        chain(1000);
        collect();
    }
    assert_eq!(o.get(s("value")), Some(big));
    assert_eq!(o.get(s("next")), Some(list));
    assert!(o.is_set(s("next")));
}

#[test]
fn memory_is_reused_when_objects_die_young() {
    for _ in 0..200 {
        chain(1000);
    }
    let first = stats().peak_bytes;
    for _ in 0..2000 {
        chain(1000);
    }
    let s = stats();
    assert!(s.collections > 10, "{s:?}");
    assert_eq!(s.peak_bytes, first, "the heap does not grow: {s:?}");
}

#[test]
fn stress_mode_collects_at_every_allocation_and_verifies() {
    with(|h| h.set_stress(true));
    let before = stats().collections;
    let head = chain(100);
    assert!(stats().collections - before >= 100);
    assert_eq!(length(&head), 100);
    with(|h| h.set_stress(false));
}

#[test]
fn a_roots_hook_keeps_what_it_marks() {
    unsafe fn roots(data: *mut (), m: &mut Marker) {
        // SAFETY: the test's word points at a live object.
        unsafe { m.mark_word(*(data as *const Word)) };
    }
    let mut word: Word = chain(50).word();
    // The handle is gone; only the hook knows the word.
    let old = with(|h| h.set_roots(Some((roots, &mut word as *mut Word as *mut ()))));
    collect();
    with(|h| h.set_roots(old));
    // SAFETY: the hook kept the chain.
    let head = unsafe { Obj::from_word(word) };
    assert_eq!(length(&head), 50);
    with(|h| assert_eq!(h.verify(), Ok(())));
}

#[test]
fn unset_fields_and_identity() {
    let a = Obj::new(7, s("point"), layout());
    let b = a.clone();
    assert_eq!(a, b);
    assert_ne!(a, Obj::new(8, s("point"), layout()));
    assert_eq!(a.get(s("value")), None);
    assert_eq!(a.set(s("value"), Value::Int(1)), Ok(false));
    assert_eq!(a.set(s("value"), Value::Int(2)), Ok(true));
    assert_eq!(a.set(s("nope"), Value::Int(2)), Err(NoSlot(s("nope"))));
    assert_eq!((a.class(), a.id()), (s("point"), 7));
}

/// The one-read paths of the interpreters (`get_word_at`, `set_at`) take
/// a slot guessed from a layout: a slot that is not the field's there, or
/// one past the layout, falls back to looking the field up, never reads or
/// writes past the object.
#[test]
fn a_wrong_slot_guess_falls_back_to_the_fields_slot() {
    let o = Obj::new(1, s("cell"), layout());
    o.set(s("value"), Value::Int(5)).unwrap();
    let five = word::small(5).unwrap();
    for slot in [0, 1, 2, 10_000] {
        assert_eq!(o.get_word_at(layout(), slot, s("value")), Some(five), "slot {slot}");
    }
    assert_eq!(o.get_word_at(layout(), 1, s("next")), None, "`next` is not set");
    o.set_at(layout(), 10_000, s("next"), &Value::Int(6)).unwrap();
    o.set_at(layout(), 0, s("value"), &Value::Int(7)).unwrap();
    assert_eq!((o.get(s("next")), o.get(s("value"))), (Some(Value::Int(6)), Some(Value::Int(7))));
    assert_eq!(o.set_at(layout(), 0, s("nope"), &Value::Int(1)), Err(NoSlot(s("nope"))));
}

/// The runtime's handle-free field access (`field_word`, `set_field_word`)
/// reads and writes an object's slot, and declines everything else for
/// the runtime's checked path: an unset field, a field the layout lacks,
/// a word that is no object.
#[test]
fn field_words_are_read_and_written_only_in_objects_that_have_the_field() {
    let o = Obj::new(1, s("cell"), layout());
    let w = o.word();
    let five = word::small(5).unwrap();
    // SAFETY: `o` is pinned (live); the words are immediates.
    unsafe {
        assert_eq!(field_word(w, s("value")), None, "unset");
        assert!(set_field_word(w, s("value"), five));
        assert_eq!(field_word(w, s("value")), Some(five));
        assert_eq!(o.get(s("value")), Some(Value::Int(5)));
        assert_eq!(field_word(w, s("nope")), None, "no such slot");
        assert!(!set_field_word(w, s("nope"), five));
        for not_object in [five, word::STOP, to_word(&Value::list(vec![Value::Int(1)]))] {
            assert_eq!(field_word(not_object, s("value")), None, "{not_object:?}");
            assert!(!set_field_word(not_object, s("value"), five), "{not_object:?}");
        }
    }
}

/// Boxed big integers are small cells holding large digit vectors: their
/// digits count towards collections, which would not start from the cells
/// alone (2000 cells are far below the threshold).
#[test]
fn the_digits_of_boxed_big_integers_bring_collections_on() {
    let before = stats().collections;
    let big = num_bigint::BigInt::from(1) << 100_000u32;
    for k in 0..2000u32 {
        to_word(&Value::from_big(&big + k));
    }
    let ran = stats().collections - before;
    // 2000 numbers of 12.5 KB: about 25 MB, a collection per 2 MB.
    assert!(ran >= 5, "{ran} collections");
}

/// An object wider than the largest size class gets a block of its own,
/// kept while pinned and given back once dead.
#[test]
fn large_objects_get_blocks_of_their_own() {
    let fields: Vec<Symbol> = (0..300).map(|k| s(&format!("f{k}"))).collect();
    let wide = Layout::of(fields.iter().copied());
    assert!(wide.words() > block::MAX_WORDS);
    collect();
    let before = stats().live_bytes;
    let o = Obj::new(1, s("wide"), wide);
    o.set(fields[299], Value::Int(7)).unwrap();
    chain(1000);
    collect();
    with(|h| h.verify()).unwrap();
    assert_eq!(o.get(fields[299]), Some(Value::Int(7)));
    assert!(stats().live_bytes >= before + 8 * wide.words() as u64);
    drop(o);
    collect();
    assert_eq!(stats().live_bytes, before);
}

#[test]
fn a_loan_keeps_what_it_lent_and_a_lent_handle_pins_nothing() {
    let mut v = Value::Object(chain(1_000));
    let mut loan = lend::Loan::default();
    assert!(loan.lend(&mut v));
    assert_eq!(loan.len(), 1);
    // Another handle of the object, lent by this loan and by another
    // appended to it: still one pin (dropping the loan frees the chain,
    // below).
    let Value::Object(first) = &v else { unreachable!("an object stays one") };
    let mut again = Value::Object(first.clone());
    let mut other = lend::Loan::default();
    assert!(loan.lend(&mut again.clone()) && other.lend(&mut again));
    loan.append(other);
    assert_eq!(loan.len(), 1);
    drop(again);
    let Value::Object(lent) = &v else { unreachable!("an object stays one") };
    assert!(lent.is_lent());
    // Not on a borrowing thread: a clone is an ordinary handle, equal to
    // the lent one, and so is what a field read gives.
    let pinned = lent.clone();
    assert!(!pinned.is_lent());
    assert_eq!(&pinned, lent);
    let Some(Value::Object(next)) = lent.get(s("next")) else { panic!("the chain's next link") };
    assert!(!next.is_lent());
    drop((pinned, next));
    collect();
    let live = stats().live_bytes;
    assert!(live >= 1_000 * (layout().words() as u64 * 8), "the loan keeps the chain: {live} bytes");
    assert_eq!(length(lent), 1_000);
    drop(loan);
    collect();
    assert_eq!(stats().live_bytes, 0, "the lent handle kept nothing");
}

#[test]
fn a_borrowing_thread_clones_and_reads_lent_handles_without_pinning() {
    // A thread of its own: borrowing is for the rest of a thread's life.
    std::thread::spawn(|| {
        let list = Value::list(vec![Value::Object(Obj::new(1, s("x"), layout()))]);
        let head = chain(100);
        // Past four limbs, a boxed `BigInt`; a list of integers; within
        // four limbs, a number cell.
        let big = Value::from_big(num_bigint::BigInt::from(1) << 300u32);
        let ints = Value::list(vec![Value::Int(1), Value::Int(2)]);
        let Some(Value::Object(second)) = head.get(s("next")) else { unreachable!() };
        let Some(Value::Object(third)) = second.get(s("next")) else { unreachable!() };
        let limbs = Value::from_big(num_bigint::BigInt::from(1) << 100u32);
        let Some(Value::Object(fourth)) = third.get(s("next")) else { unreachable!() };
        second.set(s("value"), big.clone()).unwrap();
        third.set(s("value"), ints.clone()).unwrap();
        fourth.set(s("value"), limbs.clone()).unwrap();
        drop((second, third, fourth));
        let mut v = Value::Object(head);
        let mut loan = lend::Loan::default();
        assert!(loan.lend(&mut v));
        let mut held = list.clone();
        assert!(!loan.lend(&mut held), "a list holding objects cannot be lent");
        drop((held, list));
        lend::borrow_here();
        let Value::Object(lent) = &v else { unreachable!() };
        // Clones, and the links read, are lent: they pin nothing.
        let mut kept = vec![lent.clone()];
        while let Some(Value::Object(next)) = kept.last().unwrap().get(s("next")) {
            assert!(next.is_lent());
            kept.push(next);
        }
        assert_eq!(kept.len(), 100);
        assert!(kept.iter().all(Obj::is_lent));
        assert_eq!(kept[1].get(s("value")), Some(big));
        assert_eq!(kept[2].get(s("value")), Some(ints));
        assert_eq!(kept[3].get(s("value")), Some(limbs));
        assert_eq!(kept[4].get(s("value")), Some(Value::Int(95)));
        assert_eq!(lent.get(s("value")), Some(Value::Int(99)));
        drop(loan);
        collect();
        assert_eq!(stats().live_bytes, 0, "the lent handles kept nothing");
    })
    .join()
    .unwrap();
}

/// The layout of a tape's cells: links `l` and `r`, value `v`.
fn tape_layout() -> &'static Layout {
    Layout::of([s("l"), s("r"), s("v")])
}

/// A tape of `n` cells made one after another, linked both ways (`r` to
/// the one made next); all its handles.
fn tape(n: usize) -> Vec<Obj> {
    let cells: Vec<Obj> = (0..n).map(|k| Obj::new(k as u64 + 1, s("cell"), tape_layout())).collect();
    for (k, c) in cells.iter().enumerate() {
        c.set(s("v"), Value::Int(0)).unwrap();
        let at = |j: Option<usize>| j.and_then(|j| cells.get(j)).map_or(Value::Int(0), |o| Value::Object(o.clone()));
        c.set(s("l"), at(k.checked_sub(1))).unwrap();
        c.set(s("r"), at(Some(k + 1))).unwrap();
    }
    cells
}

/// A fresh row for each test: the heap is the thread's.
fn fresh_rows() {
    with(|h| h.rows.reset());
}

fn row_bounds() -> Option<(usize, usize)> {
    with(|h| h.rows.bounds(0))
}

#[test]
fn a_row_is_found_around_a_pair_and_spans_the_whole_tape() {
    fresh_rows();
    let t = tape(20);
    assert_eq!(row_bounds(), None);
    // A pair in the middle: the row reaches both ends.
    assert_eq!(rows::establish(&t[7], &t[8], s("r")), rows::Found::Held(0));
    assert_eq!(row_bounds(), Some((t[0].address(), t[19].address())));
    let shape = with(|h| h.rows.shape(0)).expect("fixed by the first pair");
    assert_eq!(shape.stride, tape_layout().words() * 8);
    assert_eq!(tape_layout().fields()[shape.next as usize], s("r"));
    assert_eq!(tape_layout().fields()[shape.prev as usize], s("l"));
    // Found through `l` as well, from the other side of the pair.
    fresh_rows();
    assert_eq!(rows::establish(&t[8], &t[7], s("l")), rows::Found::Held(0));
    assert_eq!(row_bounds(), Some((t[0].address(), t[19].address())));
}

#[test]
fn a_write_that_breaks_a_link_empties_the_row_and_one_that_keeps_it_does_not() {
    fresh_rows();
    let t = tape(10);
    assert_eq!(rows::establish(&t[0], &t[1], s("r")), rows::Found::Held(0));
    // The same links written again, and a value: the row stays.
    t[4].set(s("r"), Value::Object(t[5].clone())).unwrap();
    t[5].set(s("l"), Value::Object(t[4].clone())).unwrap();
    t[4].set(s("v"), Value::Int(9)).unwrap();
    assert_eq!(row_bounds(), Some((t[0].address(), t[9].address())));
    // An end's outer link is free.
    t[9].set(s("r"), Value::Int(0)).unwrap();
    t[0].set(s("l"), Value::Int(0)).unwrap();
    assert!(row_bounds().is_some());
    // A link inside turned: empty, counted once.
    t[4].set(s("r"), Value::Object(t[6].clone())).unwrap();
    assert_eq!(row_bounds(), None);
    assert_eq!(with(|h| h.row_stats()).emptied, 1);
    // Found again up to the turned link; put back, the row grows past it.
    assert_eq!(rows::establish(&t[0], &t[1], s("r")), rows::Found::Held(0));
    assert_eq!(row_bounds(), Some((t[0].address(), t[4].address())));
    assert_eq!(rows::establish(&t[6], &t[7], s("r")), rows::Found::Missed(1), "a second row");
    t[4].set(s("r"), Value::Object(t[5].clone())).unwrap();
    assert_eq!(row_bounds(), Some((t[0].address(), t[9].address())));
    // Through the runtime's word write as well.
    // SAFETY: live objects' words.
    unsafe { set_field_word(t[3].word(), s("l"), t[1].word()) };
    assert_eq!(row_bounds(), None);
}

/// What native code's walks ask of the runtime (`rows::walk_word`):
/// along a tape laid out in a row, the object the walk reaches, and the
/// row found around its first link, which the slot's `Rows::along` then
/// covers (native code answers the next walks itself); past the tape's
/// end, 0. Along a chain with another object between each two cells, the
/// object reached, no row, and a wait before native code asks again
/// that doubles each time (0, 1, 3, 7).
#[test]
fn a_walk_the_runtime_answers_finds_the_row_or_waits_longer_each_time() {
    fresh_rows();
    let r = tape_layout().slot(s("r")).expect("a link slot");
    let walk = |from: &Obj, n: u32| {
        // SAFETY: the word of a live (pinned) object.
        unsafe { rows::walk_word(from.word(), s("r"), n) }
    };
    let t = tape(10);
    assert_eq!(walk(&t[2], 5), t[7].word());
    assert_eq!(row_bounds(), Some((t[0].address(), t[9].address())));
    let along = with(|h| h.rows.along[r]);
    let stride = (tape_layout().words() * 8) as isize;
    assert_eq!((along.lo, along.hi, along.step), (t[0].address(), t[9].address(), stride));
    assert_eq!(walk(&t[8], 3), word::ZERO);

    fresh_rows();
    let mut cells = Vec::new();
    let mut decoys = Vec::new();
    for k in 0..6 {
        cells.push(Obj::new(k + 1, s("cell"), tape_layout()));
        decoys.push(Obj::new(k + 100, s("cell"), tape_layout()));
    }
    for (k, c) in cells.iter().enumerate() {
        let at = |j: Option<usize>| j.and_then(|j| cells.get(j)).map_or(Value::Int(0), |o| Value::Object(o.clone()));
        c.set(s("l"), at(k.checked_sub(1))).unwrap();
        c.set(s("r"), at(Some(k + 1))).unwrap();
    }
    for wait in [0, 1, 3, 7] {
        assert_eq!(walk(&cells[0], 3), cells[3].word());
        assert_eq!(with(|h| h.rows.along[r].wait), wait);
    }
    assert_eq!(row_bounds(), None);
}

#[test]
fn a_row_grows_when_its_end_links_the_cell_made_next_to_it() {
    fresh_rows();
    let t = tape(5);
    assert_eq!(rows::establish(&t[0], &t[1], s("r")), rows::Found::Held(0));
    // As a BF interpreter grows its tape: the new cell's links first, then
    // the end's.
    let n = Obj::new(99, s("cell"), tape_layout());
    n.set(s("l"), Value::Object(t[4].clone())).unwrap();
    n.set(s("r"), Value::Int(0)).unwrap();
    n.set(s("v"), Value::Int(0)).unwrap();
    assert_eq!(row_bounds(), Some((t[0].address(), t[4].address())));
    t[4].set(s("r"), Value::Object(n.clone())).unwrap();
    assert_eq!(n.offset_from(&t[4]), Some(tape_layout().words() as i64 * 8));
    assert_eq!(row_bounds(), Some((t[0].address(), n.address())));
    assert_eq!(with(|h| h.row_stats()).extended, 1);
}

#[test]
fn a_collection_keeps_a_live_row_and_empties_a_dead_one() {
    fresh_rows();
    let t = tape(6);
    assert_eq!(rows::establish(&t[2], &t[3], s("r")), rows::Found::Held(0));
    // One cell held keeps the whole row alive through its links.
    let kept = t[4].clone();
    drop(t);
    collect();
    assert!(row_bounds().is_some());
    drop(kept);
    collect();
    assert_eq!(row_bounds(), None);
    assert_eq!(with(|h| h.row_stats()).emptied, 1);
}

#[test]
fn a_pair_of_another_class_or_not_side_by_side_is_no_row() {
    fresh_rows();
    let t = tape(4);
    let other = Obj::new(50, s("node"), tape_layout());
    other.set(s("l"), Value::Object(t[3].clone())).unwrap();
    // Not linked back, and not of the class.
    assert_eq!(rows::establish(&t[3], &other, s("l")), rows::Found::Other);
    // Two cells apart: not neighbours.
    assert_eq!(rows::establish(&t[0], &t[2], s("r")), rows::Found::Other);
    assert_eq!(row_bounds(), None);
    // Once the row's shape is fixed, a link of it the row does not hold
    // is a miss; one of another class is not.
    assert_eq!(rows::establish(&t[0], &t[1], s("r")), rows::Found::Held(0));
    let apart = Obj::new(51, s("cell"), tape_layout());
    assert_eq!(rows::establish(&t[3], &apart, s("r")), rows::Found::Missed(1));
    assert_eq!(rows::establish(&other, &t[3], s("l")), rows::Found::Other);
    assert_eq!(row_bounds(), Some((t[0].address(), t[3].address())));
}

#[test]
fn rows_of_two_shapes_are_kept_apart() {
    fresh_rows();
    let t = tape(5);
    // A chain of another class, made after the tape, linked both ways.
    let u: Vec<Obj> = (0..4).map(|k| Obj::new(100 + k, s("node"), tape_layout())).collect();
    for k in 0..4 {
        u[k as usize]
            .set(s("l"), if k > 0 { Value::Object(u[k as usize - 1].clone()) } else { Value::Int(0) })
            .unwrap();
        u[k as usize].set(s("r"), u.get(k as usize + 1).map_or(Value::Int(0), |o| Value::Object(o.clone()))).unwrap();
    }
    assert_eq!(rows::establish(&t[1], &t[2], s("r")), rows::Found::Held(0));
    assert_eq!(rows::establish(&u[2], &u[1], s("l")), rows::Found::Held(1));
    assert_eq!(with(|h| h.rows.bounds(1)), Some((u[0].address(), u[3].address())));
    // A write breaking the second leaves the first.
    u[1].set(s("r"), Value::Int(0)).unwrap();
    assert_eq!(with(|h| h.rows.bounds(1)), None);
    assert_eq!(row_bounds(), Some((t[0].address(), t[4].address())));
}

#[test]
fn a_row_grows_down_when_its_first_cell_links_the_cell_before_it() {
    fresh_rows();
    // Made first, linked last: the cell before the row.
    let before = Obj::new(90, s("cell"), tape_layout());
    let t = tape(4);
    assert_eq!(rows::establish(&t[0], &t[1], s("r")), rows::Found::Held(0));
    assert_eq!(before.offset_from(&t[0]), Some(-(tape_layout().words() as i64 * 8)));
    before.set(s("r"), Value::Object(t[0].clone())).unwrap();
    assert_eq!(row_bounds(), Some((t[0].address(), t[3].address())));
    t[0].set(s("l"), Value::Object(before.clone())).unwrap();
    assert_eq!(row_bounds(), Some((before.address(), t[3].address())));
}

#[test]
fn no_row_is_linked_through_slots_past_the_masks_reach() {
    fresh_rows();
    // Thirty-two fields sort before the links: they lie in slots 32, 33.
    let fields: Vec<Symbol> = (0..32).map(|k| s(&format!("a{k:02}"))).chain([s("x_l"), s("x_r")]).collect();
    let layout = Layout::of(fields);
    assert!(layout.slot(s("x_l")).unwrap() >= rows::MASK_SLOTS as usize);
    let a = Obj::new(1, s("cell"), layout);
    let b = Obj::new(2, s("cell"), layout);
    a.set(s("x_r"), Value::Object(b.clone())).unwrap();
    b.set(s("x_l"), Value::Object(a.clone())).unwrap();
    assert_ne!(rows::establish(&a, &b, s("x_r")), rows::Found::Held(0));
    assert_eq!(with(|h| h.rows.mask), 0);
}

#[test]
fn a_row_grows_when_a_new_cell_links_back_after_the_end_linked_it() {
    fresh_rows();
    let t = tape(3);
    assert_eq!(rows::establish(&t[0], &t[1], s("r")), rows::Found::Held(0));
    // The end's link first, the new cell's link back after it.
    let n = Obj::new(99, s("cell"), tape_layout());
    t[2].set(s("r"), Value::Object(n.clone())).unwrap();
    assert_eq!(row_bounds(), Some((t[0].address(), t[2].address())));
    n.set(s("l"), Value::Object(t[2].clone())).unwrap();
    assert_eq!(row_bounds(), Some((t[0].address(), n.address())));
}
