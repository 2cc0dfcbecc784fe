//! Element naming, compound expansion, overloading, extension, scoping.
mod common;
use common::*;

#[test]
fn anonymous_names() {
    let s = ok("Idle -> Counter -> Discard;");
    assert_eq!(names(&s), ["Idle@1", "Counter@2", "Discard@3"]);
    assert_eq!(
        conns(&s),
        [
            "Idle@1 [0] -> [0] Counter@2",
            "Counter@2 [0] -> [0] Discard@3"
        ]
    );
    // A number whose name is taken is bumped.
    let s = ok("Idle -> Discard; Discard@2 :: Counter;");
    assert_eq!(names(&s), ["Idle@1", "Discard@3", "Discard@2"]);
}

#[test]
fn declarations() {
    let s = ok("a, b :: Counter(5); a -> b;");
    assert_eq!(s.elements[0].config, "5");
    assert_eq!(s.elements[1].class, "Counter");
    let s = ok("a :: Idle; a -> d :: Discard; a;");
    assert_eq!(names(&s), ["a", "d"]);
    let s = ok("x :: Counter(\"a)b\", /* ) */ 'c)' \\<29>);");
    assert_eq!(s.elements[0].config, "\"a)b\", /* ) */ 'c)' \\<29>");
}

#[test]
fn ports_and_connection_forms() {
    let s = ok("t :: Tee; d :: Discard; Idle -> t; t [1] -> [0] d; t -> Discard;");
    assert!(conns(&s).contains(&"t [1] -> [0] d".to_string()));
    let s = ok("a, b :: Idle; c :: Discard; a, b -> c;");
    assert_eq!(conns(&s), ["a [0] -> [0] c", "b [0] -> [0] c"]);
    let s = ok("a :: Idle; b, c :: Discard; a -> b, c;");
    assert_eq!(conns(&s), ["a [0] -> [0] b", "a [0] -> [0] c"]);
    let s = ok("a, b :: Idle; c, d :: Discard; a, b => c, d;");
    assert_eq!(conns(&s), ["a [0] -> [0] c", "b [0] -> [0] d"]);
    let s = ok("t :: Tee; c :: Counter; t [0, 1] => [0-1] c;");
    assert_eq!(conns(&s), ["t [0] -> [0] c", "t [1] -> [1] c"]);
    // One open-ended port list fills the gap.
    let s = ok("a, b, c :: Idle; q :: Counter; a, b, c => [1-] q;");
    assert_eq!(
        conns(&s),
        ["a [0] -> [1] q", "b [0] -> [2] q", "c [0] -> [3] q"]
    );
    let s = ok("t :: Tee; a, b :: Discard; t [2-] => a, b;");
    assert_eq!(conns(&s), ["t [2] -> [0] a", "t [3] -> [0] b"]);
    // `=>` treats a single unported element as expandable.
    let s = ok("t :: Tee; a, b :: Discard; t => a, b;");
    assert_eq!(conns(&s), ["t [0] -> [0] a", "t [1] -> [0] b"]);
    // Duplicate connections collapse.
    let s = ok("a :: Idle; b :: Discard; a -> b; a -> b;");
    assert_eq!(s.connections.len(), 1);
}

#[test]
fn element_groups() {
    let s = ok("Idle -> (input -> Counter -> output) -> Discard;");
    assert_eq!(names(&s), ["Idle@1", "Counter@5", "Discard@6"]);
    assert_eq!(
        conns(&s),
        [
            "Idle@1 [0] -> [0] Counter@5",
            "Counter@5 [0] -> [0] Discard@6"
        ]
    );
    let s = ok("t :: Tee; t[0], t[1] => (input [0] -> a :: Counter -> output; input [1] -> b :: Counter -> [1] output) => d :: Discard, e :: Discard;");
    assert!(
        conns(&s).contains(&"t [1] -> [0] b".to_string()),
        "{:?}",
        conns(&s)
    );
    assert!(
        conns(&s).contains(&"b [0] -> [0] e".to_string()),
        "{:?}",
        conns(&s)
    );
}

#[test]
fn compound_expansion_and_order() {
    let src = "elementclass F { input -> Counter -> output }\nIdle -> F -> Discard;\nf :: F; Idle -> f -> Discard;";
    let s = ok(src);
    assert_eq!(
        names(&s),
        [
            "Idle@1",
            "Discard@3",
            "Idle@5",
            "Discard@6",
            "F@2/Counter@1",
            "f/Counter@1"
        ]
    );
    assert_eq!(
        conns(&s),
        [
            "F@2/Counter@1 [0] -> [0] Discard@3",
            "f/Counter@1 [0] -> [0] Discard@6",
            "Idle@1 [0] -> [0] F@2/Counter@1",
            "Idle@5 [0] -> [0] f/Counter@1",
        ]
    );
    assert_eq!(s.elements[4].landmark.line, 1);
}

#[test]
fn nested_components_and_anonymous_compounds() {
    let src = "elementclass In { input -> c :: Counter -> output }
elementclass Out { input -> b :: In -> output; }
Idle -> a :: Out -> Discard;
Idle -> { input -> Paint(2) -> output } -> Discard;";
    let s = ok(src);
    assert!(names(&s).contains(&"a/b/c".to_string()), "{:?}", names(&s));
    assert!(
        names(&s).contains(&"@5/Paint@1".to_string()),
        "{:?}",
        names(&s)
    );
    let s = ok("x :: { $a | input -> Paint($a) -> output }(7); Idle -> x -> Discard;");
    assert_eq!(
        s.elements
            .iter()
            .find(|e| e.name == "x/Paint@1")
            .unwrap()
            .config,
        "7"
    );
}

#[test]
fn formals_and_keywords() {
    let src = "elementclass P { $a, COLOR $c, __REST__ $r | input -> Paint($a) -> Counter($c) -> Print($r) -> output }
Idle -> P(1, COLOR 2, x, y) -> Discard;";
    let s = ok(src);
    let cfg = |n: &str| {
        s.elements
            .iter()
            .find(|e| e.name.ends_with(n))
            .unwrap()
            .config
            .clone()
    };
    assert_eq!(cfg("Paint@1"), "1");
    assert_eq!(cfg("Counter@2"), "2");
    assert_eq!(cfg("Print@3"), "x, y");
}

#[test]
fn overloading() {
    let src = "elementclass F { $a | input -> Counter($a) -> output || $a, $b | input -> Paint($a) -> Paint($b) -> output
  || input -> Null -> output; input [1] -> Discard }
Idle -> F(1) -> Discard; Idle -> F(1, 2) -> Discard; Idle -> f :: F -> Discard; Idle -> [1] f;";
    let s = ok(src);
    let classes: Vec<&str> = s
        .elements
        .iter()
        .filter(|e| e.name.contains('/'))
        .map(|e| e.class.as_str())
        .collect();
    assert_eq!(classes, ["Counter", "Paint", "Paint", "Null", "Discard"]);
}

#[test]
fn extension_of_primitive_and_compound() {
    let src = "elementclass Queue { $a, $b | input -> Queue($a) -> Queue($b) -> output || ... }
Idle -> Queue(5) -> Discard; Idle -> Queue(1, 2) -> Discard;";
    let s = ok(src);
    let classes: Vec<(&str, &str)> = s
        .elements
        .iter()
        .map(|e| (e.name.as_str(), e.class.as_str()))
        .collect();
    assert!(classes.contains(&("Queue@2", "Queue")), "{classes:?}");
    assert!(
        classes.contains(&("Queue@5/Queue@1", "Queue")),
        "{classes:?}"
    );
    let src = "elementclass F { input -> Counter -> output }
elementclass F { $a | input -> Paint($a) -> output || ... }
Idle -> F -> Discard; Idle -> F(3) -> Discard;";
    let s = ok(src);
    let classes: Vec<&str> = s
        .elements
        .iter()
        .filter(|e| e.name.contains('/'))
        .map(|e| e.class.as_str())
        .collect();
    assert_eq!(classes, ["Counter", "Paint"]);
}

#[test]
fn synonyms_and_scoping() {
    let s = ok("elementclass Cnt Counter; Idle -> Cnt -> Discard;");
    assert_eq!(names(&s)[1], "Cnt@2");
    assert_eq!(s.elements[1].class, "Counter");
    let e = errors("elementclass A { elementclass B { input -> output } input -> B -> output }\nIdle -> B -> Discard;");
    assert_eq!(e, ["test.click:2: undeclared element 'B'"]);
    // An inner definition shadows an outer one, only inside.
    let src = "elementclass X { input -> Counter -> output }
elementclass Y { elementclass X { input -> Paint -> output } input -> X -> output }
Idle -> Y -> X -> Discard;";
    let s = ok(src);
    let classes: Vec<(&str, &str)> = s
        .elements
        .iter()
        .filter(|e| e.name.contains('/'))
        .map(|e| (e.name.as_str(), e.class.as_str()))
        .collect();
    assert_eq!(
        classes,
        [("Y@2/X@1/Paint@1", "Paint"), ("X@3/Counter@1", "Counter")]
    );
    // A class is not visible inside its own body: this `F` is the primitive.
    let e = errors("elementclass Counter2 { input -> Counter2 -> output }");
    assert_eq!(e, ["test.click:1: undeclared element 'Counter2'"]);
}

#[test]
fn implicit_ports_in_compounds() {
    let s = ok("elementclass F { [0] -> Counter -> [0]; }\nIdle -> F -> Discard;");
    assert_eq!(
        conns(&s),
        [
            "F@2/Counter@1 [0] -> [0] Discard@3",
            "Idle@1 [0] -> [0] F@2/Counter@1"
        ]
    );
}

#[test]
fn pass_through_compound() {
    let s = ok("elementclass W { input -> output }\nIdle -> W -> W -> Discard;");
    assert_eq!(conns(&s), ["Idle@1 [0] -> [0] Discard@4"]);
    // A pseudo-port loop leads nowhere and does not hang.
    let o = parse("elementclass W { input -> output }\nw :: W; w -> w;");
    let _ = o;
}

#[test]
fn exponential_expansion_is_bounded() {
    let mut src = String::from("elementclass A0 { input -> Counter -> output }\n");
    for i in 1..40 {
        src.push_str(&format!(
            "elementclass A{i} {{ input -> A{p} -> A{p} -> output }}\n",
            p = i - 1
        ));
    }
    src.push_str("Idle -> A39 -> Discard;");
    let start = std::time::Instant::now();
    let o = parse(&src);
    assert!(o.has_errors());
    assert!(start.elapsed().as_secs() < 30);
}
