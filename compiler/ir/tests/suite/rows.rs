//! Items grouped by a dense key, in their order (`flowc_ir::rows`).

use flowc_ir::rows::*;

#[test]
fn items_are_grouped_by_key_in_their_order() {
    let pairs = [(2, 'a'), (0, 'b'), (2, 'c'), (1, 'd'), (2, 'e')];
    let rows = Rows::group(4, pairs.iter().copied());
    assert_eq!(rows.of(0), ['b']);
    assert_eq!(rows.of(1), ['d']);
    assert_eq!(rows.of(2), ['a', 'c', 'e']);
    assert_eq!(rows.of(3), [] as [char; 0]);
    assert_eq!(rows.of(4), [] as [char; 0]);
    assert_eq!(rows.keys(), 4);
    let empty: Rows<char> = Rows::group(3, std::iter::empty());
    assert_eq!(empty.of(1), [] as [char; 0]);
}
