define($n 3, $w "a b c");
elementclass F { $a, KW $b, __REST__ $r | input -> Paint($a) -> Print("${w[1]}" $b $r) -> output
  || input -> Null -> output; input [1] -> Discard || ... }
elementclass G { [0] -> F(1, KW 2) -> [0] }
Idle -> G -> { input -> output } -> (input -> Counter($n) -> output) -> Discard;
require(package pkg, compact_config);
