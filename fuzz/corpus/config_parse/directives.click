a :: Idle
# 7 "x.click"
-> b :: Counter(1,
#line 3
2) -> Discard;
elementclass S Counter; Idle -> S -> Discard;
