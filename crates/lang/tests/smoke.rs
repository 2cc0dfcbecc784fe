mod common;
use common::*;

#[test]
fn smoke() {
    let s = ok("a :: Idle -> c :: Counter(1) -> Discard;\nInfiniteSource(LIMIT 5) -> [0] c;");
    println!("{}", rclick_lang::flatten(&s));
    println!("{:?}", names(&s));
    println!("{:?}", conns(&s));
}
