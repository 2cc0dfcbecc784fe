// A small router.
src :: InfiniteSource(LIMIT 5) -> c :: Counter -> Discard;
a, b :: Idle; t :: Tee; a, b => [0-1] t; t [1] -> Print(x) -> Discard;
